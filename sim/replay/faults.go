package replay

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/sim/trace"
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

// Hook scripts a container's lifecycle hook from now on, for every run: whether it succeeds
// (Result "success", the default, or "failure") and how long it runs (Duration; without it, an
// exec or HTTP hook returns at once and a sleep hook sleeps its seconds).
type Hook struct {
	Pod       string    `json:"pod"`
	Container string    `json:"container"`
	Hook      string    `json:"hook"`
	Result    string    `json:"result,omitempty"`
	Duration  *Duration `json:"duration,omitempty"`
}

func (h *Hook) validate() error {
	errs := []error{podKey(h.Pod), required("container", h.Container)}
	if h.Hook != fakeruntime.HookPostStart && h.Hook != fakeruntime.HookPreStop {
		errs = append(errs, fmt.Errorf("hook.hook %q: want %s or %s", h.Hook, fakeruntime.HookPostStart, fakeruntime.HookPreStop))
	}
	if h.Result != "" && h.Result != "success" && h.Result != "failure" {
		errs = append(errs, fmt.Errorf("hook.result %q: want success or failure", h.Result))
	}
	if h.Duration != nil && h.Duration.Duration < 0 {
		errs = append(errs, errors.New("hook.duration must not be negative"))
	}
	return errors.Join(errs...)
}

// hook scripts the container's lifecycle hook.
func (e *engine) hook(h *Hook) {
	b := fakeruntime.HookBehavior{Fail: h.Result == "failure"}
	result := "succeeds"
	if b.Fail {
		result = "fails"
	}
	msg := fmt.Sprintf("%s hook of container %s %s", h.Hook, h.Container, result)
	if h.Duration != nil {
		d := h.Duration.Duration
		b.Duration = &d
		msg += fmt.Sprintf(" after %v", d)
	}
	e.stepEvent(trace.KindHook, h.Pod, msg)
	if err := e.node.Runtime.SetHook(h.Pod, h.Container, h.Hook, b); err != nil {
		e.stepError(trace.KindHook, err)
	}
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
