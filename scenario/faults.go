package scenario

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/trace"
)

// ContainerStop scripts how a container reacts to SIGTERM from now on: it takes After to exit
// (instead of the runtime's containerStop latency), or, with IgnoreSIGTERM, it does not exit and
// every stop waits out the grace period and ends in SIGKILL.
type ContainerStop struct {
	Pod           string    `json:"pod"`
	Container     string    `json:"container"`
	After         *Duration `json:"after,omitempty"`
	IgnoreSIGTERM bool      `json:"ignoreSIGTERM,omitempty"`
}

func (c *ContainerStop) validate() error {
	errs := []error{podKey(c.Pod), required("container", c.Container)}
	switch {
	case c.After == nil && !c.IgnoreSIGTERM:
		errs = append(errs, errors.New("containerStop needs after or ignoreSIGTERM: true"))
	case c.After != nil && c.IgnoreSIGTERM:
		errs = append(errs, errors.New("containerStop: after and ignoreSIGTERM exclude each other: a container that ignores SIGTERM stops at the grace period's end"))
	}
	return errors.Join(errs...)
}

// containerStop scripts the container's reaction to SIGTERM.
func (e *engine) containerStop(c *ContainerStop) {
	s := fakeruntime.StopBehavior{IgnoreSIGTERM: c.IgnoreSIGTERM}
	msg := fmt.Sprintf("container %s ignores SIGTERM", c.Container)
	if c.After != nil {
		s.After = c.After.Duration
		msg = fmt.Sprintf("container %s stops %v after SIGTERM", c.Container, c.After.Duration)
	}
	e.stepEvent(trace.KindContainerStop, c.Pod, msg)
	e.node.Runtime.SetStopBehavior(c.Pod, c.Container, s)
}

// ContainerRef names a container of a pod ("namespace/name" as the kubelet names it).
type ContainerRef struct {
	Pod       string `json:"pod"`
	Container string `json:"container"`
}

// PodKeyRef names a pod ("namespace/name" as the kubelet names it).
type PodKeyRef struct {
	Pod string `json:"pod"`
}

// FailRuntimeCall makes the next Times calls of a CRI call fail.
type FailRuntimeCall struct {
	Call  string `json:"call"`
	Times int    `json:"times"`
}

func (f *FailRuntimeCall) validate() error {
	var errs []error
	if !slices.Contains(fakeruntime.RuntimeCalls, f.Call) {
		errs = append(errs, fmt.Errorf("failRuntimeCall.call %q: want one of %s", f.Call, strings.Join(fakeruntime.RuntimeCalls, ", ")))
	}
	if f.Times <= 0 {
		errs = append(errs, errors.New("failRuntimeCall.times must be positive"))
	}
	return errors.Join(errs...)
}

// applyFault carries out oomKill, killSandbox and failRuntimeCall.
func (e *engine) applyFault(st *Step) {
	rt := e.node.Runtime
	switch {
	case st.OOMKill != nil:
		c := st.OOMKill
		e.stepEvent(trace.KindOOMKill, c.Pod, "container "+c.Container)
		if err := rt.OOMKill(c.Pod, c.Container); err != nil {
			e.stepError(trace.KindOOMKill, err)
		}
	case st.KillSandbox != nil:
		e.stepEvent(trace.KindKillSandbox, st.KillSandbox.Pod, "")
		if err := rt.KillSandbox(st.KillSandbox.Pod); err != nil {
			e.stepError(trace.KindKillSandbox, err)
		}
	case st.FailRuntimeCall != nil:
		f := st.FailRuntimeCall
		e.stepEvent(trace.KindFailRuntimeCall, "", fmt.Sprintf("the next %d %s calls fail", f.Times, f.Call))
		if err := rt.FailRuntimeCall(f.Call, f.Times); err != nil {
			e.stepError(trace.KindFailRuntimeCall, err)
		}
	}
}

// RestartKubelet restarts the kubelet process. It has no fields: `restartKubelet: {}`.
type RestartKubelet struct{}

// restartKubelet ends the kubelet process and starts a new one, as a kubelet restart does: the
// containers keep running in the runtime and the API server keeps its objects, but everything in
// the kubelet's memory is gone (PodConfig, the pod manager, the pod workers and their back-offs,
// the status manager, the PLEG's cache, the crash-loop back-off, updates not yet handled). The
// new kubelet re-reads its sources, relists the runtime and the API server, and rebuilds its pod
// workers from what they show.
func (e *engine) restartKubelet() {
	e.stepEvent(trace.KindRestartKubelet, "", "")
	e.restarts++
	e.stopped = false // a new process runs, whether or not the old one was stopped
	e.pending = nil
	if err := e.startKubelet(e.node.Runtime); err != nil {
		e.stepError(trace.KindRestartKubelet, err)
		return
	}
	e.inv = newInvariants()
	e.listAPI()
}
