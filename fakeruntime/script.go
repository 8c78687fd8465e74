package fakeruntime

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Annotation key prefixes that script a container from its pod's own metadata. The container's
// name follows the prefix. A real kubelet ignores them.
const (
	// AnnotationExitAfter is followed by a container name; its value is a Go duration ("5s")
	// after which every run of that container exits by itself.
	AnnotationExitAfter = "minikubelet.io/exit-after."
	// AnnotationExitCode is followed by a container name; its value is the exit code (0 to 255)
	// of those exits. It defaults to 0 and has no effect without AnnotationExitAfter.
	AnnotationExitCode = "minikubelet.io/exit-code."
	// AnnotationOOMAfter is followed by a container name; its value is a Go duration after which
	// every run of that container is ended by the OOM killer (exit code 137, reason OOMKilled).
	AnnotationOOMAfter = "minikubelet.io/oom-after."
	// AnnotationStartError is followed by a container name; its value is how many starts of that
	// container fail in the runtime's StartContainer ("always" for every one): the container
	// exits at once with containerd's StartError, exit code 128.
	AnnotationStartError = "minikubelet.io/start-error."
)

// Behavior scripts what a container does once it runs.
type Behavior struct {
	// ExitCode is the code the container exits with after RunFor.
	ExitCode int
	// RunFor is how long each run lasts before the container exits by itself. Zero means it runs
	// until it is stopped.
	RunFor time.Duration
	// IgnoreSIGTERM makes a stop wait out the whole grace period and end in SIGKILL.
	IgnoreSIGTERM bool
	// OOM makes the exit after RunFor an OOM kill: exit code 137, reason OOMKilled; ExitCode is
	// ignored.
	OOM bool
}

type behaviorKey struct {
	pod, container string // "namespace/name" and container name
}

// SetBehavior scripts every run of the named container of the pod "namespace/name" from now on.
// The run in progress, if any, is included: it exits RunFor after this call (or keeps running
// when RunFor is zero). A Behavior set here wins over the pod's annotations.
func (r *Runtime) SetBehavior(podKey, container string, b Behavior) {
	now := r.clock.Now()
	r.applyDue(now)
	r.behaviors[behaviorKey{pod: podKey, container: container}] = b
	for _, c := range r.runningInstances(podKey, container) {
		if b.RunFor > 0 {
			r.scheduleBehaviorExit(c, now.Add(b.RunFor), b)
		} else {
			cancel(c.exitAt)
			c.exitAt = nil
		}
	}
	r.applyDue(now)
}

// ContainerExit makes the running instance of the named container exit now with exitCode, as if
// its process ended. It returns an error wrapping ErrNotFound if no such container runs.
func (r *Runtime) ContainerExit(podKey, container string, exitCode int) error {
	now := r.clock.Now()
	r.applyDue(now)
	running := r.runningInstances(podKey, container)
	if len(running) == 0 {
		return fmt.Errorf("exit container %s of pod %s: no running instance: %w", container, podKey, ErrNotFound)
	}
	r.exitContainer(running[len(running)-1], now, exitCode, "")
	return nil
}

// FailImagePull makes the next times pulls of image fail with ErrImagePull.
func (r *Runtime) FailImagePull(image string, times int) {
	r.pullFailures[image] = times
}

// Down makes every runtime call fail with ErrRuntimeDown until the instant until, so the PLEG's
// relists fail too. Containers keep running and exiting meanwhile.
func (r *Runtime) Down(until time.Time) {
	now := r.clock.Now()
	r.applyDue(now)
	r.downUntil = until
	r.emit(trace.Event{Event: trace.KindDown, Delay: until.Sub(now), Message: ErrRuntimeDown.Error()})
}

// runningInstances returns the running containers with that name in every pod named podKey,
// oldest first.
func (r *Runtime) runningInstances(podKey, container string) []*containerRec {
	var found []*containerRec
	for _, rec := range r.pods {
		if !isKeyOf(podKey, rec.namespace, rec.name) {
			continue
		}
		for _, c := range rec.containers {
			if c.status.Name == container && c.status.State == kubecontainer.ContainerStateRunning {
				found = append(found, c)
			}
		}
	}
	slices.SortFunc(found, func(a, b *containerRec) int { return a.seq - b.seq })
	return found
}

// BehaviorFromAnnotations reads the scripting annotations for container from a pod's annotations.
// It returns false when there are none, and an error wrapping ErrBadAnnotation, naming the key,
// when a value does not parse.
func BehaviorFromAnnotations(annotations map[string]string, container string) (Behavior, bool, error) {
	var b Behavior
	after, hasAfter := annotations[AnnotationExitAfter+container]
	code, hasCode := annotations[AnnotationExitCode+container]
	oom, hasOOM := annotations[AnnotationOOMAfter+container]
	if !hasAfter && !hasCode && !hasOOM {
		return b, false, nil
	}
	if hasAfter && hasOOM {
		return Behavior{}, false, fmt.Errorf("%s%s and %s%s: give one: %w", AnnotationExitAfter, container, AnnotationOOMAfter, container, ErrBadAnnotation)
	}
	if hasAfter {
		d, err := time.ParseDuration(strings.TrimSpace(after))
		if err != nil || d <= 0 {
			return Behavior{}, false, fmt.Errorf("%s%s=%q: want a positive duration such as 5s: %w", AnnotationExitAfter, container, after, ErrBadAnnotation)
		}
		b.RunFor = d
	}
	if hasOOM {
		d, err := time.ParseDuration(strings.TrimSpace(oom))
		if err != nil || d <= 0 {
			return Behavior{}, false, fmt.Errorf("%s%s=%q: want a positive duration such as 5s: %w", AnnotationOOMAfter, container, oom, ErrBadAnnotation)
		}
		b.RunFor, b.OOM = d, true
	}
	if hasCode {
		n, err := strconv.Atoi(strings.TrimSpace(code))
		if err != nil || n < 0 || n > 255 {
			return Behavior{}, false, fmt.Errorf("%s%s=%q: want an integer from 0 to 255: %w", AnnotationExitCode, container, code, ErrBadAnnotation)
		}
		b.ExitCode = n
	}
	return b, true, nil
}

// startFailsFromAnnotations reads AnnotationStartError for container: whether the start with this
// restart count (the number of instances before it) fails.
func startFailsFromAnnotations(annotations map[string]string, container string, restarts int) (bool, error) {
	v, ok := annotations[AnnotationStartError+container]
	if !ok {
		return false, nil
	}
	if v = strings.TrimSpace(v); v == "always" {
		return true, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return false, fmt.Errorf("%s%s=%q: want a number of starts or \"always\": %w", AnnotationStartError, container, v, ErrBadAnnotation)
	}
	return restarts < n, nil
}

// StopBehavior scripts how a container reacts to SIGTERM.
type StopBehavior struct {
	// After is how long the container takes to exit after SIGTERM; it replaces
	// Latencies.ContainerStop for this container.
	After time.Duration
	// IgnoreSIGTERM makes every stop wait out the whole grace period and end in SIGKILL.
	IgnoreSIGTERM bool
}

// SetStopBehavior scripts how every run of the named container of the pod "namespace/name",
// the current one included, reacts to SIGTERM from now on. It leaves what SetBehavior scripted
// (the run time and exit code) alone.
func (r *Runtime) SetStopBehavior(podKey, container string, s StopBehavior) {
	r.stops[behaviorKey{pod: podKey, container: container}] = s
}

// stopBehavior is the container's reaction to SIGTERM: SetStopBehavior's, else the runtime's stop
// latency, with SetBehavior's IgnoreSIGTERM.
func (r *Runtime) stopBehavior(podKey, container string, b Behavior) StopBehavior {
	if s, ok := r.stops[behaviorKey{pod: podKey, container: container}]; ok {
		return s
	}
	return StopBehavior{After: r.lat.ContainerStop, IgnoreSIGTERM: b.IgnoreSIGTERM}
}

// The CRI calls FailRuntimeCall can make fail.
const (
	CallRunPodSandbox   = "RunPodSandbox"
	CallCreateContainer = "CreateContainer"
	CallStartContainer  = "StartContainer"
)

// RuntimeCalls lists the calls FailRuntimeCall accepts.
var RuntimeCalls = []string{CallRunPodSandbox, CallCreateContainer, CallStartContainer, CallUpdateContainerResources}

// FailRuntimeCall makes the next times calls of the CRI call fail: RunPodSandbox (the sandbox is
// not created; the kubelet records FailedCreatePodSandBox and retries after its back-off),
// CreateContainer (the container is not created; it shows CreateContainerError) or
// StartContainer (the container is created and exits at once with StartError, exit code 128; it
// shows RunContainerError) or UpdateContainerResources (an in-place resize fails and is tried
// again at the next sync).
func (r *Runtime) FailRuntimeCall(call string, times int) error {
	if !slices.Contains(RuntimeCalls, call) {
		return fmt.Errorf("fail runtime call %q: want one of %s", call, strings.Join(RuntimeCalls, ", "))
	}
	r.callFailures[call] = times
	return nil
}

// failCall reports whether this call of call fails, using up one scripted failure.
func (r *Runtime) failCall(call string) bool {
	if r.callFailures[call] == 0 {
		return false
	}
	r.callFailures[call]--
	return true
}

// OOMKill makes the running instance of the named container exit now as the kernel's OOM killer
// ends it: exit code 137, reason OOMKilled. It returns an error wrapping ErrNotFound if no such
// container runs.
func (r *Runtime) OOMKill(podKey, container string) error {
	now := r.clock.Now()
	r.applyDue(now)
	running := r.runningInstances(podKey, container)
	if len(running) == 0 {
		return fmt.Errorf("OOM-kill container %s of pod %s: no running instance: %w", container, podKey, ErrNotFound)
	}
	r.exitContainerWithReason(running[len(running)-1], now, ExitCodeKilled, ReasonOOMKilled, "")
	return nil
}

// KillSandbox makes the pod's ready sandbox die now (its pause process ended): the sandbox is
// not ready any more, so the kubelet's next SyncPod kills the pod and creates a new sandbox. The
// containers keep running until then. It returns an error wrapping ErrNotFound if the pod has
// no ready sandbox.
func (r *Runtime) KillSandbox(podKey string) error {
	now := r.clock.Now()
	r.applyDue(now)
	for _, uid := range r.sortedUIDs() {
		rec := r.pods[uid]
		if !isKeyOf(podKey, rec.namespace, rec.name) {
			continue
		}
		for _, s := range rec.sandboxes {
			if s.status.State == kubecontainer.SandboxReady {
				s.status.State = kubecontainer.SandboxNotReady
				r.changed()
				r.emit(trace.Event{Event: trace.KindSandbox, Pod: podKey, UID: string(uid), From: string(kubecontainer.SandboxReady), To: string(kubecontainer.SandboxNotReady), Reason: "SandboxDied", Message: s.status.ID})
				return nil
			}
		}
	}
	return fmt.Errorf("kill the sandbox of pod %s: no ready sandbox: %w", podKey, ErrNotFound)
}
