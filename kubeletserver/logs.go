package kubeletserver

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// AnnotationLog is the prefix of the pod annotation whose value, line by line, a container
// prints each time it starts: minikubelet.io/log.<container>.
const AnnotationLog = "minikubelet.io/log."

// logTimeFormat is the CRI log timestamp: RFC 3339 with nanoseconds, fixed width.
const logTimeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// logLine is one line of a container instance's simulated log.
type logLine struct {
	t    time.Time
	text string
}

// instanceLog is the simulated log of one container instance: a line when it started, the lines
// its pod's annotation scripts, and a line when it exited.
func instanceLog(pod *v1.Pod, c *kubecontainer.ContainerStatus) []logLine {
	if c == nil || c.StartedAt.IsZero() {
		return nil
	}
	lines := []logLine{{c.StartedAt, fmt.Sprintf("minikubelet: container %s started (id %s, image %s, restart %d)", c.Name, c.ID, c.Image, c.RestartCount)}}
	if script := pod.Annotations[AnnotationLog+c.Name]; script != "" {
		for _, l := range strings.Split(strings.TrimRight(script, "\n"), "\n") {
			lines = append(lines, logLine{c.StartedAt, l})
		}
	}
	if c.State == kubecontainer.ContainerStateExited {
		lines = append(lines, logLine{c.FinishedAt, fmt.Sprintf("minikubelet: container %s exited with code %d", c.Name, c.ExitCode)})
	}
	return lines
}

// logOptions are the query parameters of /containerLogs.
type logOptions struct {
	follow, previous, timestamps bool
	sinceSeconds                 *int64
	sinceTime                    *time.Time
	tailLines                    *int64
	limitBytes                   *int64
}

// errSplitStreams is the kubelet's refusal of a stream other than All while the
// PodLogsQuerySplitStreams gate is off (it is, in v1.35); the text is the kubelet's.
//
//lint:ignore ST1005 the text is the kubelet's
var errSplitStreams = errors.New("Please enable PodLogsQuerySplitStreams feature gate to use the stream option")

// errInvalidQuery marks a query that decodes but is invalid (422); other errors are 400.
type errInvalidQuery struct{ msg string }

func (e errInvalidQuery) Error() string { return e.msg }

// parseLogOptions decodes and validates the query as the kubelet's getContainerLogs and
// ValidatePodLogOptions do.
func parseLogOptions(q url.Values) (logOptions, error) {
	var o logOptions
	var err error
	boolean := func(key string) bool {
		if err != nil {
			return false
		}
		v := q.Get(key)
		if v == "" {
			return false
		}
		b, perr := strconv.ParseBool(v)
		if perr != nil {
			err = fmt.Errorf("%s=%q: %w", key, v, perr)
		}
		return b
	}
	integer := func(key string) *int64 {
		if err != nil || q.Get(key) == "" {
			return nil
		}
		n, perr := strconv.ParseInt(q.Get(key), 10, 64)
		if perr != nil {
			err = fmt.Errorf("%s=%q: %w", key, q.Get(key), perr)
			return nil
		}
		return &n
	}
	o.follow, o.previous, o.timestamps = boolean("follow"), boolean("previous"), boolean("timestamps")
	o.sinceSeconds, o.limitBytes = integer("sinceSeconds"), integer("limitBytes")
	if q.Get("tail") == "all" {
		// The legacy tail=all is unlimited.
	} else if q.Get("tailLines") != "" {
		o.tailLines = integer("tailLines")
	} else {
		o.tailLines = integer("tail")
	}
	if v := q.Get("sinceTime"); v != "" && err == nil {
		t, perr := time.Parse(time.RFC3339, v)
		if perr != nil {
			err = fmt.Errorf("sinceTime=%q: %w", v, perr)
		}
		o.sinceTime = &t
	}
	if err != nil {
		return o, err
	}
	switch {
	case o.sinceSeconds != nil && o.sinceTime != nil:
		return o, errInvalidQuery{"at most one of `sinceTime` or `sinceSeconds` may be specified"}
	case o.sinceSeconds != nil && *o.sinceSeconds < 1:
		return o, errInvalidQuery{"sinceSeconds: must be greater than 0"}
	case o.tailLines != nil && *o.tailLines < 0:
		return o, errInvalidQuery{"tailLines: must be greater than or equal to 0"}
	case o.limitBytes != nil && *o.limitBytes < 1:
		return o, errInvalidQuery{"limitBytes: must be greater than 0"}
	}
	if s := q.Get("stream"); s != "" && s != "All" {
		return o, errSplitStreams
	}
	return o, nil
}

// containerLogs is the kubelet's getContainerLogs on a simulated log.
func (h *NodeHandler) containerLogs(w http.ResponseWriter, r *http.Request) {
	ns, podName, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	opts, err := parseLogOptions(r.URL.Query())
	if err != nil {
		if inv, ok := err.(errInvalidQuery); ok {
			writeStatus(w, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, inv.msg)
			return
		}
		http.Error(w, fmt.Sprintf(`{"message": "Unable to decode query: %v"}`, err), http.StatusBadRequest)
		return
	}
	snap := h.snapshot(r)
	pv, ok := snap.find(ns, podName)
	if !ok {
		http.Error(w, fmt.Sprintf("pod %q does not exist", podName), http.StatusNotFound)
		return
	}
	if !hasContainer(pv.Pod, container) {
		http.Error(w, fmt.Sprintf("container %q not found in pod %q", container, podName), http.StatusNotFound)
		return
	}
	id, apiID, err := pickInstance(pv, container, opts.previous)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if instance(pv, id) == nil {
		removedInstance(w, apiID)
		return
	}
	lines := instanceLog(pv.Pod, instance(pv, id))
	now := h.opts.Clock.Now()
	lines = selectLines(lines, opts, now)
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Transfer-Encoding", "chunked")
	lw := &logWriter{w: w, timestamps: opts.timestamps, limit: opts.limitBytes}
	lw.write(lines)
	if !opts.follow || lw.full() {
		return
	}
	written := len(instanceLog(pv.Pod, instance(pv, id)))
	// A follower wants every pass's changes: while it follows, the node publishes after its
	// passes (at most once per freshness bound), as it published after every pass before
	// snapshots were taken on demand. The first round reads what was published since snap.
	defer h.opts.Board.Follow()()
	for {
		snap, changed := h.opts.Board.Latest()
		if pv, ok = snap.find(ns, podName); !ok {
			return
		}
		c := instance(pv, id)
		if c == nil {
			return
		}
		if all := instanceLog(pv.Pod, c); len(all) > written {
			lw.write(all[written:])
			written = len(all)
		}
		if lw.full() || c.State == kubecontainer.ContainerStateExited {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		}
	}
}

// removedInstance answers as the kubelet does for an instance the API status still names and the
// runtime no longer has, such as the previous instance once the container deletor removed it: its
// getContainerLogs has already committed a 200 with an empty write when kuberuntime's
// GetContainerLogs fails on the runtime's ContainerStatus, so the error's text becomes the body
// (kubectl logs prints it and exits 0), never an empty success.
func removedInstance(w http.ResponseWriter, apiID string) {
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	io.WriteString(w, "unable to retrieve container logs for "+apiID)
}

// hasContainer reports whether the pod's spec names the container.
func hasContainer(pod *v1.Pod, name string) bool {
	for _, cs := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			if cs[i].Name == name {
				return true
			}
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == name {
			return true
		}
	}
	return false
}

// pickInstance is the kubelet's validateContainerLogStatus: the container's API status picks
// the instance, by the container ID of its current state or, with previous, of its last
// termination state. It returns the runtime's ID of that instance, and the ID as the API status
// writes it (with the runtime's scheme, runtime://ID).
func pickInstance(pv *PodView, container string, previous bool) (id, apiID string, err error) {
	podName := pv.Pod.Name
	var cs *v1.ContainerStatus
	for _, list := range [][]v1.ContainerStatus{pv.Status.ContainerStatuses, pv.Status.InitContainerStatuses, pv.Status.EphemeralContainerStatuses} {
		for i := range list {
			if cs == nil && list[i].Name == container {
				cs = &list[i]
			}
		}
	}
	if cs == nil {
		return "", "", fmt.Errorf("container %q in pod %q is not available", container, podName)
	}
	last := cs.LastTerminationState.Terminated
	waiting, running, terminated := cs.State.Waiting, cs.State.Running, cs.State.Terminated
	switch {
	case previous:
		if last == nil || last.ContainerID == "" {
			return "", "", fmt.Errorf("previous terminated container %q in pod %q not found", container, podName)
		}
		id = last.ContainerID
	case running != nil:
		id = cs.ContainerID
	case terminated != nil:
		switch {
		case terminated.ContainerID != "":
			id = terminated.ContainerID
		case last != nil && last.ContainerID != "":
			id = last.ContainerID
		default:
			return "", "", fmt.Errorf("container %q in pod %q is terminated", container, podName)
		}
	case last != nil:
		if last.ContainerID == "" {
			return "", "", fmt.Errorf("container %q in pod %q is terminated", container, podName)
		}
		id = last.ContainerID
	case waiting != nil:
		switch waiting.Reason {
		case kubecontainer.ErrImagePull.Error():
			return "", "", fmt.Errorf("container %q in pod %q is waiting to start: image can't be pulled", container, podName)
		case kubecontainer.ErrImagePullBackOff.Error():
			return "", "", fmt.Errorf("container %q in pod %q is waiting to start: trying and failing to pull image", container, podName)
		}
		return "", "", fmt.Errorf("container %q in pod %q is waiting to start: %v", container, podName, waiting.Reason)
	default:
		return "", "", fmt.Errorf("container %q in pod %q is waiting to start - no logs yet", container, podName)
	}
	apiID = id
	if _, rid, ok := strings.Cut(id, "://"); ok {
		id = rid
	}
	return id, apiID, nil
}

// instance returns the instance with the ID, or nil once the runtime no longer has it.
func instance(pv *PodView, id string) *kubecontainer.ContainerStatus {
	if pv.Runtime == nil {
		return nil
	}
	for i := range pv.Runtime.ContainerStatuses {
		if pv.Runtime.ContainerStatuses[i].ID == id {
			return &pv.Runtime.ContainerStatuses[i]
		}
	}
	return nil
}

// selectLines applies sinceSeconds, sinceTime and tailLines.
func selectLines(lines []logLine, o logOptions, now time.Time) []logLine {
	var since time.Time
	switch {
	case o.sinceSeconds != nil:
		since = now.Add(-time.Duration(*o.sinceSeconds) * time.Second)
	case o.sinceTime != nil:
		since = *o.sinceTime
	}
	if !since.IsZero() {
		i := 0
		for i < len(lines) && lines[i].t.Before(since) {
			i++
		}
		lines = lines[i:]
	}
	if o.tailLines != nil && int64(len(lines)) > *o.tailLines {
		lines = lines[int64(len(lines))-*o.tailLines:]
	}
	return lines
}

// logWriter writes log lines, optionally timestamped, up to a byte limit, flushing each batch.
type logWriter struct {
	w          http.ResponseWriter
	timestamps bool
	limit      *int64
	written    int64
}

func (l *logWriter) full() bool { return l.limit != nil && l.written >= *l.limit }

func (l *logWriter) write(lines []logLine) {
	for _, ln := range lines {
		s := ln.text + "\n"
		if l.timestamps {
			s = ln.t.UTC().Format(logTimeFormat) + " " + s
		}
		if l.limit != nil {
			if left := *l.limit - l.written; int64(len(s)) > left {
				s = s[:left]
			}
		}
		n, err := l.w.Write([]byte(s))
		l.written += int64(n)
		if err != nil || l.full() {
			break
		}
	}
	if f, ok := l.w.(http.Flusher); ok {
		f.Flush()
	}
}
