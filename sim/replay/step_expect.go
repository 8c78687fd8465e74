package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// Expect asserts the state of one pod at this instant. Container, State, RestartCount, Reason,
// ExitCode and Ready go together: they describe the named container. APIObject checks a field of
// any API object; with it, Pod may be empty.
type Expect struct {
	Pod          string `json:"pod,omitempty"`
	Phase        string `json:"phase,omitempty"`
	Present      *bool  `json:"present,omitempty"`
	WorkerState  string `json:"workerState,omitempty"`
	Mirror       string `json:"mirror,omitempty"`
	Container    string `json:"container,omitempty"`
	State        string `json:"state,omitempty"`
	RestartCount *int   `json:"restartCount,omitempty"`
	// Reason is the container's waiting or terminated reason ("" when it has none).
	Reason *string `json:"reason,omitempty"`
	// ExitCode is the container's terminated exit code.
	ExitCode *int `json:"exitCode,omitempty"`
	// Ready is the container's ready flag.
	Ready *bool `json:"ready,omitempty"`
	// Started is the container's started flag.
	Started *bool `json:"started,omitempty"`
	// Conditions maps a pod condition type to its status (True, False, Unknown) or "absent".
	Conditions map[string]string `json:"conditions,omitempty"`
	// PodReason and PodMessage are the pod status's reason and message.
	PodReason  *string `json:"podReason,omitempty"`
	PodMessage *string `json:"podMessage,omitempty"`
	// APIObject checks one field of an object in the API server.
	APIObject *APIObject `json:"apiObject,omitempty"`
}

// The worker states an expect step may name, as podworkers prints them; "none" means the pod
// workers have forgotten the UID.
var workerStates = []string{"sync", "terminating", "terminated", "finished", "none"}

// The container states an expect step may name.
var containerStates = []string{"waiting", "running", "terminated", "absent"}

var (
	_ expectation = (*Expect)(nil)
	_ podNamer    = (*Expect)(nil)
)

func (x *Expect) pod() string { return x.Pod }

func (x *Expect) validate() error {
	var errs []error
	podChecks := x.Phase != "" || x.Present != nil || x.WorkerState != "" || x.Mirror != "" || x.Container != "" || x.checksPodDetails()
	switch {
	case x.Pod != "":
		errs = append(errs, podKey(x.Pod))
	case podChecks:
		errs = append(errs, errors.New("pod is required: which pod (namespace/name)"))
	}
	if !podChecks && x.APIObject == nil {
		errs = append(errs, errors.New("expect checks nothing: give phase, present, workerState, mirror, container, conditions, podReason, podMessage or apiObject"))
	}
	errs = append(errs, x.validateDetails())
	switch v1.PodPhase(x.Phase) {
	case "", v1.PodPending, v1.PodRunning, v1.PodSucceeded, v1.PodFailed, v1.PodUnknown:
	default:
		errs = append(errs, fmt.Errorf("phase %q is not a pod phase", x.Phase))
	}
	if x.WorkerState != "" && !slices.Contains(workerStates, x.WorkerState) {
		errs = append(errs, fmt.Errorf("workerState %q: want one of %s", x.WorkerState, strings.Join(workerStates, ", ")))
	}
	if x.Mirror != "" && x.Mirror != "present" && x.Mirror != "absent" {
		errs = append(errs, fmt.Errorf("mirror %q: want present or absent", x.Mirror))
	}
	if x.Container == "" && (x.State != "" || x.RestartCount != nil) {
		errs = append(errs, errors.New("state and restartCount describe a container: name it with container"))
	}
	if x.State != "" && !slices.Contains(containerStates, x.State) {
		errs = append(errs, fmt.Errorf("state %q: want one of %s", x.State, strings.Join(containerStates, ", ")))
	}
	return errors.Join(errs...)
}

// judge checks the pod against the kubelet's own view of it on n: the pod manager (present), the
// status manager (phase, containers), the pod workers (workerState) and the API server (mirror).
func (x *Expect) judge(ctx context.Context, e *engine, n *node) Outcome {
	var o Outcome
	var what, seen []string
	fail := false
	check := func(field, want, got string) {
		what = append(what, field+"="+want)
		seen = append(seen, field+"="+got)
		if want != got {
			fail = true
		}
	}
	if x.Pod == "" {
		// Only an apiObject check.
		e.checkAPIObject(ctx, x.APIObject, check)
		o.What = "expect " + strings.Join(what, " ")
		o.Met = !fail
		if fail {
			o.Seen = strings.Join(seen, " ")
		}
		return o
	}
	ns, name, _ := strings.Cut(x.Pod, "/")
	pod, present := n.kubelet.Pods.GetPodByName(ns, name)
	uid := n.uids[x.Pod]
	if present {
		uid = pod.UID
	}
	if x.Present != nil {
		check("present", strconv.FormatBool(*x.Present), strconv.FormatBool(present))
	}
	status, hasStatus := n.kubelet.Status.GetPodStatus(uid)
	if x.Phase != "" {
		got := "none"
		if hasStatus {
			got = string(status.Phase)
		}
		check("phase", x.Phase, got)
	}
	if x.WorkerState != "" {
		got := "none"
		if uid != "" {
			if st, ok := n.kubelet.Workers.State(uid); ok {
				got = st.String()
			}
		}
		check("workerState", x.WorkerState, got)
	}
	if x.Mirror != "" {
		check("mirror", x.Mirror, e.mirrorState(ctx, ns, name))
	}
	if x.Container != "" {
		state, restarts := containerState(status, x.Container)
		if x.State != "" {
			check("container "+x.Container+" state", x.State, state)
		}
		if x.RestartCount != nil {
			check("container "+x.Container+" restartCount", strconv.Itoa(*x.RestartCount), strconv.Itoa(restarts))
		}
		checkContainerDetails(status, x, check)
	}
	checkPodFields(status, hasStatus, x, check)
	if x.APIObject != nil {
		e.checkAPIObject(ctx, x.APIObject, check)
	}
	o.What = "expect " + x.Pod + " " + strings.Join(what, " ")
	o.Met = !fail
	if fail {
		o.Seen = strings.Join(seen, " ") + n.unknownPodHint(x.Pod)
	}
	return o
}

// describe renders the expectation as the summary names it when it was not judged, such as
// `expect default/web-node-1 phase=Running`.
func (x *Expect) describe() string {
	what := []string{"expect", x.Pod}
	add := func(field, want string) { what = append(what, field+"="+want) }
	if x.Present != nil {
		add("present", strconv.FormatBool(*x.Present))
	}
	if x.Phase != "" {
		add("phase", x.Phase)
	}
	if x.WorkerState != "" {
		add("workerState", x.WorkerState)
	}
	if x.Mirror != "" {
		add("mirror", x.Mirror)
	}
	if x.Container != "" {
		if x.State != "" {
			add("container "+x.Container+" state", x.State)
		}
		if x.RestartCount != nil {
			add("container "+x.Container+" restartCount", strconv.Itoa(*x.RestartCount))
		}
	}
	return strings.Join(what, " ")
}

// mirrorState says whether the API server holds a mirror pod under the name.
func (e *engine) mirrorState(ctx context.Context, ns, name string) string {
	if e.client == nil {
		return "absent"
	}
	p, err := e.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "absent"
	case err != nil:
		return "error: " + err.Error()
	case !kubecontainer.IsMirrorPod(p):
		return "absent" // a regular pod has the name, which is no mirror pod
	}
	return "present"
}

// containerState reads a container's state and restart count from the kubelet's pod status.
func containerState(status v1.PodStatus, name string) (string, int) {
	all := append(append([]v1.ContainerStatus(nil), status.InitContainerStatuses...), status.ContainerStatuses...)
	for _, c := range all {
		if c.Name != name {
			continue
		}
		switch {
		case c.State.Running != nil:
			return "running", int(c.RestartCount)
		case c.State.Terminated != nil:
			return "terminated", int(c.RestartCount)
		default:
			return "waiting", int(c.RestartCount)
		}
	}
	return "absent", 0
}
