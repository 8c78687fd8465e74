package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// The runtime's steps: what the containers do and how the CRI fails, scripted on the node's fake
// runtime.

// ContainerExit makes a running container exit now.
type ContainerExit struct {
	Pod       string `json:"pod"`
	Container string `json:"container"`
	ExitCode  int    `json:"exitCode"`
}

// CrashLoop makes every run of a container, the current one included, exit with ExitCode after
// running for After.
type CrashLoop struct {
	Pod       string   `json:"pod"`
	Container string   `json:"container"`
	ExitCode  int      `json:"exitCode"`
	After     Duration `json:"after"`
}

// FailImagePull makes the next Times pulls of Image fail.
type FailImagePull struct {
	Image string `json:"image"`
	Times int    `json:"times"`
}

// RuntimeDown makes the runtime stop answering for a while.
type RuntimeDown struct {
	For Duration `json:"for"`
}

// ContainerStop scripts how a container reacts to SIGTERM from now on: it takes After to exit
// (instead of the runtime's containerStop latency), or, with IgnoreSIGTERM, it does not exit and
// every stop waits out the grace period and ends in SIGKILL.
type ContainerStop struct {
	Pod           string    `json:"pod"`
	Container     string    `json:"container"`
	After         *Duration `json:"after,omitempty"`
	IgnoreSIGTERM bool      `json:"ignoreSIGTERM,omitempty"`
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
	// HTTPStatus is the status an HTTP hook's server answers (a success, whatever it is, for
	// the v1.35 kubelet).
	HTTPStatus int `json:"httpStatus,omitempty"`
	// Times limits the script to the next Times runs of the hook; 0 scripts every run.
	Times int `json:"times,omitempty"`
}

// OOMKill ends a running container by the OOM killer now ("namespace/name" as the kubelet names
// the pod).
type OOMKill struct {
	Pod       string `json:"pod"`
	Container string `json:"container"`
}

// KillSandbox makes the pod's ready sandbox die now.
type KillSandbox struct {
	Pod string `json:"pod"`
}

// FailRuntimeCall makes the next Times calls of a CRI call fail.
type FailRuntimeCall struct {
	Call  string `json:"call"`
	Times int    `json:"times"`
}

// The kinds of this file and what they declare.
var (
	_ change   = (*ContainerExit)(nil)
	_ change   = (*CrashLoop)(nil)
	_ change   = (*FailImagePull)(nil)
	_ change   = (*RuntimeDown)(nil)
	_ change   = (*ContainerStop)(nil)
	_ change   = (*Hook)(nil)
	_ change   = (*OOMKill)(nil)
	_ change   = (*KillSandbox)(nil)
	_ change   = (*FailRuntimeCall)(nil)
	_ podNamer = (*ContainerExit)(nil)
	_ podNamer = (*CrashLoop)(nil)
	_ podNamer = (*ContainerStop)(nil)
	_ podNamer = (*Hook)(nil)
	_ podNamer = (*OOMKill)(nil)
	_ podNamer = (*KillSandbox)(nil)
	_ bounded  = (*CrashLoop)(nil)
	_ bounded  = (*RuntimeDown)(nil)
	_ bounded  = (*ContainerStop)(nil)
	_ bounded  = (*Hook)(nil)
)

func (c *ContainerExit) pod() string { return c.Pod }
func (c *CrashLoop) pod() string     { return c.Pod }
func (c *ContainerStop) pod() string { return c.Pod }
func (h *Hook) pod() string          { return h.Pod }
func (o *OOMKill) pod() string       { return o.Pod }
func (k *KillSandbox) pod() string   { return k.Pod }

func (c *CrashLoop) durations() []namedDuration {
	return []namedDuration{{"after", c.After.Duration}}
}

func (r *RuntimeDown) durations() []namedDuration {
	return []namedDuration{{"for", r.For.Duration}}
}

func (c *ContainerStop) durations() []namedDuration {
	if c.After == nil {
		return nil
	}
	return []namedDuration{{"after", c.After.Duration}}
}

func (h *Hook) durations() []namedDuration {
	if h.Duration == nil {
		return nil
	}
	return []namedDuration{{"duration", h.Duration.Duration}}
}

func (c *ContainerExit) validate() error {
	return errors.Join(podKey(c.Pod), required("container", c.Container))
}

func (c *CrashLoop) validate() error {
	return errors.Join(podKey(c.Pod), required("container", c.Container))
}

func (f *FailImagePull) validate() error {
	var err error
	if f.Times <= 0 {
		err = errors.New("failImagePull.times must be positive")
	}
	return errors.Join(required("image", f.Image), err)
}

func (r *RuntimeDown) validate() error {
	if r.For.Duration <= 0 {
		return errors.New("runtimeDown.for must be positive")
	}
	return nil
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
	switch {
	case h.HTTPStatus != 0 && (h.HTTPStatus < 100 || h.HTTPStatus > 599):
		errs = append(errs, fmt.Errorf("hook.httpStatus %d: want an HTTP status, 100 to 599", h.HTTPStatus))
	case h.HTTPStatus != 0 && h.Result == "failure":
		errs = append(errs, errors.New("hook.httpStatus and result failure exclude each other: a failed HTTP hook got no answer (its connection was refused)"))
	}
	if h.Times < 0 {
		errs = append(errs, errors.New("hook.times must not be negative"))
	}
	return errors.Join(errs...)
}

func (o *OOMKill) validate() error {
	return errors.Join(podKey(o.Pod), required("container", o.Container))
}

func (k *KillSandbox) validate() error { return podKey(k.Pod) }

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

func (c *ContainerExit) apply(_ context.Context, e *engine, n *node) {
	e.stepEvent(trace.KindContainerExit, c.Pod, fmt.Sprintf("container %s exits with %d", c.Container, c.ExitCode))
	if err := n.kubelet.Runtime.ContainerExit(c.Pod, c.Container, c.ExitCode); err != nil {
		e.stepError(trace.KindContainerExit, err)
	}
}

func (c *CrashLoop) apply(_ context.Context, e *engine, n *node) {
	e.stepEvent(trace.KindCrashLoop, c.Pod, fmt.Sprintf("container %s exits with %d after %v, every run", c.Container, c.ExitCode, c.After.Duration))
	n.kubelet.Runtime.SetBehavior(c.Pod, c.Container, fakeruntime.Behavior{ExitCode: c.ExitCode, RunFor: c.After.Duration})
}

func (f *FailImagePull) apply(_ context.Context, e *engine, n *node) {
	e.stepEvent(trace.KindFailImagePull, "", fmt.Sprintf("the next %d pulls of %s fail", f.Times, f.Image))
	n.kubelet.Runtime.FailImagePull(f.Image, f.Times)
}

func (r *RuntimeDown) apply(_ context.Context, e *engine, n *node) {
	e.stepEvent(trace.KindRuntimeDown, "", "for "+r.For.String())
	n.kubelet.Runtime.Down(e.clk.Now().Add(r.For.Duration))
}

// apply scripts the container's reaction to SIGTERM.
func (c *ContainerStop) apply(_ context.Context, e *engine, n *node) {
	s := fakeruntime.StopBehavior{IgnoreSIGTERM: c.IgnoreSIGTERM}
	msg := fmt.Sprintf("container %s ignores SIGTERM", c.Container)
	if c.After != nil {
		s.After = c.After.Duration
		msg = fmt.Sprintf("container %s stops %v after SIGTERM", c.Container, c.After.Duration)
	}
	e.stepEvent(trace.KindContainerStop, c.Pod, msg)
	n.kubelet.Runtime.SetStopBehavior(c.Pod, c.Container, s)
}

// apply scripts the container's lifecycle hook.
func (h *Hook) apply(_ context.Context, e *engine, n *node) {
	b := fakeruntime.HookBehavior{Fail: h.Result == "failure", HTTPStatus: h.HTTPStatus, Times: h.Times}
	result := "succeeds"
	if b.Fail {
		result = "fails"
	}
	msg := fmt.Sprintf("%s hook of container %s %s", h.Hook, h.Container, result)
	if h.HTTPStatus != 0 {
		msg += fmt.Sprintf(" (HTTP %d)", h.HTTPStatus)
	}
	if h.Duration != nil {
		d := h.Duration.Duration
		b.Duration = &d
		msg += fmt.Sprintf(" after %v", d)
	}
	if h.Times > 0 {
		msg += fmt.Sprintf(", the next %d runs", h.Times)
	}
	e.stepEvent(trace.KindHook, h.Pod, msg)
	if err := n.kubelet.Runtime.SetHook(h.Pod, h.Container, h.Hook, b); err != nil {
		e.stepError(trace.KindHook, err)
	}
}

func (o *OOMKill) apply(_ context.Context, e *engine, n *node) {
	e.stepEvent(trace.KindOOMKill, o.Pod, "container "+o.Container)
	if err := n.kubelet.Runtime.OOMKill(o.Pod, o.Container); err != nil {
		e.stepError(trace.KindOOMKill, err)
	}
}

func (k *KillSandbox) apply(_ context.Context, e *engine, n *node) {
	e.stepEvent(trace.KindKillSandbox, k.Pod, "")
	if err := n.kubelet.Runtime.KillSandbox(k.Pod); err != nil {
		e.stepError(trace.KindKillSandbox, err)
	}
}

func (f *FailRuntimeCall) apply(_ context.Context, e *engine, n *node) {
	e.stepEvent(trace.KindFailRuntimeCall, "", fmt.Sprintf("the next %d %s calls fail", f.Times, f.Call))
	if err := n.kubelet.Runtime.FailRuntimeCall(f.Call, f.Times); err != nil {
		e.stepError(trace.KindFailRuntimeCall, err)
	}
}
