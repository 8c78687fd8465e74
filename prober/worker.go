package prober

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/events"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/metrics"
	"github.com/minikubelet/minikubelet/prober/results"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// worker is one probe of one container: the kubelet's worker without its goroutine.
type worker struct {
	seq int
	// pod is the pod the worker was created with; the kubelet never updates it.
	pod       *v1.Pod
	podKey    string
	container v1.Container
	probe     ProbeType
	spec      *v1.Probe
	period    time.Duration
	cache     *results.Cache
	// initial is the result written when a new container instance appears.
	initial results.Result

	// next is when the next tick is due. triggered is a manual run pending since triggerAt; ran
	// is set by the first doProbe (a trigger during the initial delay waits for it).
	next      time.Time
	triggered bool
	triggerAt time.Time
	ran       bool

	// containerID is the instance last seen (runtime ID, no "type://" prefix).
	containerID string
	// lastResult and resultRun count consecutive equal outcomes against the thresholds.
	lastResult results.Result
	resultRun  int
	// onHold stops probing until a new container instance appears.
	onHold bool
	// attempts counts the probes run on the current instance, for "-times" annotations.
	attempts int

	// annotation is the pod's scripting annotation for this probe, if any; annotationErr is set
	// when the pod's probe annotations did not parse.
	annotation    *Rule
	annotationErr error
}

// due is when the worker next runs: at its tick, or at once after a manual trigger.
func (w *worker) due() time.Time {
	if w.triggered && w.ran && w.triggerAt.Before(w.next) {
		return w.triggerAt
	}
	return w.next
}

// isInit reports whether the worker's container is one of the pod's init containers (a sidecar).
func (w *worker) isInit() bool {
	for i := range w.pod.Spec.InitContainers {
		if w.pod.Spec.InitContainers[i].Name == w.container.Name {
			return true
		}
	}
	return false
}

// findStatus returns the container's status by name among the main, then the init containers,
// skipping one without a container ID.
func findStatus(s *v1.PodStatus, name string) (*v1.ContainerStatus, bool) {
	for _, list := range [][]v1.ContainerStatus{s.ContainerStatuses, s.InitContainerStatuses} {
		for i := range list {
			if list[i].Name == name && list[i].ContainerID != "" {
				return &list[i], true
			}
		}
	}
	return nil, false
}

// runtimeID strips the "type://" prefix of an API container ID: the kubelet's ParseContainerID.
func runtimeID(apiID string) string {
	if _, id, ok := strings.Cut(apiID, "://"); ok {
		return id
	}
	return apiID
}

// doProbe probes the container once and records the result: the kubelet's doProbe. It returns
// whether the worker should go on.
func (m *Manager) doProbe(ctx context.Context, w *worker, now time.Time) bool {
	w.ran = true
	status, ok := m.opts.Status.GetPodStatus(w.pod.UID)
	if !ok {
		return true // not synced yet, or gone
	}
	if status.Phase == v1.PodFailed || status.Phase == v1.PodSucceeded {
		return false
	}
	c, ok := findStatus(&status, w.container.Name)
	if !ok {
		return true // not created yet
	}
	if id := runtimeID(c.ContainerID); id != w.containerID {
		if w.containerID != "" {
			w.cache.Remove(w.containerID)
		}
		w.containerID = id
		w.attempts = 0
		// A container that was already running before the kubelet restarted keeps its result
		// unset, so that its ready and started state survive the restart.
		restarted := c.State.Running != nil && !c.State.Running.StartedAt.IsZero() &&
			c.State.Running.StartedAt.Time.Before(m.start.Add(-restartGracePeriod))
		if !restarted {
			m.set(w, w.initial)
		}
		w.onHold = false
	}
	if w.onHold {
		return true
	}
	if c.State.Running == nil {
		m.set(w, results.Failure)
		// Go on only if the container will be restarted (ContainerRestartRules, beta and on).
		if c.State.Terminated == nil {
			return true
		}
		return w.shouldRestart(c.State.Terminated.ExitCode)
	}
	if w.pod.DeletionTimestamp != nil && (w.probe == Liveness || w.probe == Startup) {
		// The pod was already being deleted when the worker was created: a quiet shutdown.
		m.set(w, results.Success)
		return false
	}
	if int32(now.Sub(c.State.Running.StartedAt.Time).Seconds()) < w.spec.InitialDelaySeconds {
		return true
	}
	started := c.Started != nil && *c.Started
	if started == (w.probe == Startup) {
		// A started container needs no startup probe (the worker stays for the next instance);
		// liveness and readiness wait until the container has started.
		return true
	}
	w.attempts++
	outcome := m.runProbe(w, &status, c.State.Running.StartedAt.Time, now)
	var result results.Result
	switch outcome {
	case OutcomeError:
		return true // discarded: the thresholds neither advance nor reset
	case OutcomeSuccess:
		result = results.Success
	default:
		result = results.Failure
	}
	if m.opts.Metrics != nil {
		// The kubelet times the probe's request; a simulated probe answers at once.
		label := metrics.ProbeResultFailed
		if result == results.Success {
			label = metrics.ProbeResultSuccessful
		}
		m.opts.Metrics.ObserveProbe(w.metricLabels(), label, 0)
	}
	if w.lastResult == result {
		w.resultRun++
	} else {
		w.lastResult, w.resultRun = result, 1
	}
	if (result == results.Failure && w.resultRun < threshold(w.spec.FailureThreshold, 3)) ||
		(result == results.Success && w.resultRun < threshold(w.spec.SuccessThreshold, 1)) {
		return true
	}
	m.set(w, result)
	if (w.probe == Liveness && result == results.Failure) || w.probe == Startup {
		// The container will be restarted (or has started): no more probes until a new instance.
		w.onHold, w.resultRun = true, 0
	}
	return true
}

// shouldRestart is podutil.ContainerShouldRestart for the worker's container after it exited
// with code: a sidecar always restarts; a container's own restartPolicy (ContainerRestartRules)
// wins over the pod's.
func (w *worker) shouldRestart(code int32) bool {
	if w.isInit() {
		return kubecontainer.IsRestartableInitContainer(&w.container)
	}
	policy := w.pod.Spec.RestartPolicy
	if w.container.RestartPolicy != nil {
		policy = v1.RestartPolicy(*w.container.RestartPolicy)
	}
	switch policy {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return code != 0
	}
	return true
}

// runProbe runs one scripted probe attempt, with the kubelet's events and traces, and returns
// its outcome.
func (m *Manager) runProbe(w *worker, status *v1.PodStatus, started, now time.Time) Outcome {
	outcome, scripted := m.opts.Script.answer(w.podKey, w.container.Name, w.probe, now)
	var errMsg string
	switch {
	case scripted:
	case w.annotationErr != nil:
		outcome, errMsg = OutcomeError, w.annotationErr.Error()
	case w.annotation != nil:
		outcome, _ = instanceAnswer(*w.annotation, w.attempts, started, now)
	}
	ev := trace.Event{Event: trace.KindProbe, Pod: w.podKey, UID: string(w.pod.UID), Container: w.container.Name, Op: w.probe.Name(), To: outcome.String(), Func: "probe"}
	switch outcome {
	case OutcomeSuccess:
		return outcome
	case OutcomeFailure:
		out := failureOutput(w.spec, status)
		ev.Message = out
		m.emit(ev)
		m.recordEvent(w, v1.EventTypeWarning, events.ContainerUnhealthy, fmt.Sprintf("%s probe failed: %s", w.probe, out))
		return outcome
	case OutcomeUnknown:
		m.emit(ev)
		return outcome
	}
	if errMsg == "" {
		errMsg = "scripted probe error"
	}
	ev.Message = errMsg
	m.emit(ev)
	m.recordEvent(w, v1.EventTypeWarning, events.ContainerUnhealthy, fmt.Sprintf("%s probe errored and resulted in unknown state: %s", w.probe, errMsg))
	return outcome
}

// failureOutput is what a failed probe of the spec's handler reports, as the kubelet's probers
// word it: the HTTP status, the TCP dial error, the gRPC health answer. An exec probe's output is
// the command's own, which a simulated command does not have.
func failureOutput(p *v1.Probe, status *v1.PodStatus) string {
	switch {
	case p.HTTPGet != nil:
		return "HTTP probe failed with statuscode: 500"
	case p.TCPSocket != nil:
		host := p.TCPSocket.Host
		if host == "" {
			host = status.PodIP
		}
		return fmt.Sprintf("dial tcp %s: connect: connection refused", joinHostPort(host, p.TCPSocket.Port.String()))
	case p.GRPC != nil:
		return `service unhealthy (responded with "NOT_SERVING")`
	}
	return ""
}

// joinHostPort is net.JoinHostPort without the import: brackets for an IPv6 host.
func joinHostPort(host, port string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

// containerRef is the kubelet's reference to a container for its events: the pod, with the
// container's field path.
func containerRef(pod *v1.Pod, name string) *v1.ObjectReference {
	path := "spec.containers{" + name + "}"
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			path = "spec.initContainers{" + name + "}"
		}
	}
	return &v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
		ResourceVersion: pod.ResourceVersion, FieldPath: path}
}

// metricLabels name the worker's series in the prober's metrics.
func (w *worker) metricLabels() metrics.ProbeLabels {
	return metrics.ProbeLabels{ProbeType: w.probe.String(), Container: w.container.Name, Pod: w.pod.Name,
		Namespace: w.pod.Namespace, PodUID: string(w.pod.UID)}
}
