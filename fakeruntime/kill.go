package fakeruntime

import (
	"errors"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/events"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/trace"
)

// Exit codes a stopped container reports.
const (
	// ExitCodeStopped is what a container that handled SIGTERM and exited within its grace period
	// reports. PID 1 in a container ignores SIGTERM unless it installs a handler, so a container
	// that stops before the deadline did handle it, and most programs then exit 0.
	ExitCodeStopped = 0
	// ExitCodeKilled is what a container killed with SIGKILL at the end of its grace period
	// reports: 128 + 9.
	ExitCodeKilled = 137
	// ExitCodeStartError is what containerd reports for a container whose process could not be
	// started.
	ExitCodeStartError = 128
)

// The reasons containerd gives an exited container besides Completed and Error.
const (
	ReasonOOMKilled  = "OOMKilled"
	ReasonStartError = "StartError"
)

// minimumGracePeriod is kuberuntime's minimumGracePeriodInSeconds.
const minimumGracePeriod = 2 * time.Second

// KillPod stops the running containers of running (all of the pod's, if running is nil), then its
// sandboxes: the kubelet's killPodWithSyncResult. pod may be nil for a pod that exists only in the
// runtime.
//
// The grace period is gracePeriodOverride if given, used as is; otherwise the pod's
// DeletionGracePeriodSeconds, else its spec's TerminationGracePeriodSeconds, else 2s, and never
// less than 2s. A container exits ContainerStop after the call with ExitCodeStopped if that is
// within the grace period, or at the deadline with ExitCodeKilled if it is not or if the
// container is scripted to ignore SIGTERM. A container that was about to exit by itself earlier
// does so. The sandboxes stop when the last container has; that instant is Result.Done.
func (r *Runtime) KillPod(pod *v1.Pod, running *kubecontainer.Pod, gracePeriodOverride *int64) (kubecontainer.Result, error) {
	now := r.clock.Now()
	r.applyDue(now)
	if pod == nil && running == nil {
		return kubecontainer.Result{Done: now}, errors.New("kill pod: neither a pod nor a running pod given")
	}
	if err := r.checkUp(now); err != nil {
		e := trace.Event{Event: trace.KindError, Message: err.Error(), Func: "KillPod"}
		e.Pod, e.UID = podIdentity(pod, running)
		r.emit(e)
		return kubecontainer.Result{Done: now}, fmt.Errorf("kill pod %s: %w", e.Pod, err)
	}
	done := r.killPodAt(pod, running, gracePeriodOverride, now, "")
	r.applyDue(now)
	return kubecontainer.Result{Done: done}, nil
}

// killPodAt stops the pod's containers and sandboxes from the instant now and returns when the
// last one is stopped.
func (r *Runtime) killPodAt(pod *v1.Pod, running *kubecontainer.Pod, override *int64, now time.Time, why string) time.Time {
	key, uid := podIdentity(pod, running)
	r.generation[podUID(pod, running)]++
	rec := r.pods[podUID(pod, running)]
	if rec == nil {
		return now
	}
	grace := gracePeriod(pod, override)
	var targets []*containerRec
	var sandboxes []*sandboxRec
	if running == nil {
		targets = append(targets, rec.containers...)
		sandboxes = rec.sandboxes
	} else {
		for _, c := range running.Containers {
			if cr := r.containers[c.ID]; cr != nil && cr.podUID == rec.uid {
				targets = append(targets, cr)
			}
		}
		for _, s := range running.Sandboxes {
			for _, sr := range rec.sandboxes {
				if sr.status.ID == s.ID {
					sandboxes = append(sandboxes, sr)
				}
			}
		}
	}
	slices.SortFunc(targets, func(a, b *containerRec) int { return a.seq - b.seq })
	done := now
	for _, c := range targets {
		if c.status.State != kubecontainer.ContainerStateRunning {
			continue
		}
		b := r.behaviors[behaviorKey{pod: key, container: c.status.Name}]
		r.emitAndRecord(trace.Event{Event: trace.KindKilling, Pod: key, UID: uid, Container: c.status.Name, Delay: grace, Message: why, Func: "killContainer"},
			kubeEvent{v1.EventTypeNormal, events.KillingContainer, "Stopping container " + c.status.Name})
		stop := r.stopBehavior(key, c.status.Name, b)
		stopAfter, code := grace, ExitCodeKilled
		if !stop.IgnoreSIGTERM && stop.After <= grace {
			stopAfter, code = stop.After, ExitCodeStopped
		}
		if t := r.stopContainerAt(c, now.Add(stopAfter), code); t.After(done) {
			done = t
		}
	}
	for _, s := range sandboxes {
		if s.status.State != kubecontainer.SandboxReady {
			continue
		}
		r.scheduleAt(done, func(time.Time) {
			if s.status.State != kubecontainer.SandboxReady {
				return
			}
			s.status.State = kubecontainer.SandboxNotReady
			r.emit(trace.Event{Event: trace.KindSandbox, Pod: key, UID: uid, From: string(kubecontainer.SandboxReady), To: string(kubecontainer.SandboxNotReady), Message: s.status.ID, Func: "StopPodSandbox"})
		})
	}
	return done
}

// stopContainerAt makes c exit at the instant at with code, unless it exits earlier anyway, and
// returns when it exits.
func (r *Runtime) stopContainerAt(c *containerRec, at time.Time, code int) time.Time {
	for _, t := range []*transition{c.exitAt, c.killAt} {
		if t != nil && !t.cancelled && !t.at.After(at) {
			return t.at
		}
	}
	cancel(c.killAt)
	c.killAt = r.scheduleAt(at, func(at time.Time) { r.exitContainer(c, at, code, "killContainer") })
	return at
}

// scheduleExit makes a running container exit by itself at the instant at, replacing any earlier
// plan for a natural exit.
func (r *Runtime) scheduleExit(c *containerRec, at time.Time, code int) {
	cancel(c.exitAt)
	c.exitAt = r.scheduleAt(at, func(at time.Time) { r.exitContainer(c, at, code, "") })
}

// scheduleBehaviorExit schedules the exit a Behavior scripts: an OOM kill or an ordinary exit.
func (r *Runtime) scheduleBehaviorExit(c *containerRec, at time.Time, b Behavior) {
	if !b.OOM {
		r.scheduleExit(c, at, b.ExitCode)
		return
	}
	cancel(c.exitAt)
	c.exitAt = r.scheduleAt(at, func(at time.Time) { r.exitContainerWithReason(c, at, ExitCodeKilled, ReasonOOMKilled, "") })
}

// exitContainer moves a running container to exited, with the reason containerd gives an
// ordinary exit.
func (r *Runtime) exitContainer(c *containerRec, at time.Time, code int, fn string) {
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	r.exitContainerWithReason(c, at, code, reason, fn)
}

// exitContainerWithReason moves a running container to exited with the runtime's reason.
func (r *Runtime) exitContainerWithReason(c *containerRec, at time.Time, code int, reason, fn string) {
	if r.containers[c.status.ID] != c || c.status.State != kubecontainer.ContainerStateRunning {
		return
	}
	cancel(c.exitAt)
	cancel(c.killAt)
	c.exitAt, c.killAt = nil, nil
	c.status.State = kubecontainer.ContainerStateExited
	c.status.FinishedAt = at
	c.status.ExitCode = code
	c.status.Reason = reason
	rec := r.pods[c.podUID]
	r.emit(trace.Event{Event: trace.KindExited, Pod: rec.key(), UID: string(c.podUID), Container: c.status.Name, ExitCode: trace.Int(code), Reason: c.status.Reason, Message: c.status.ID, Func: fn})
}

// gracePeriod is kuberuntime's killContainer rule for the grace period.
func gracePeriod(pod *v1.Pod, override *int64) time.Duration {
	if override != nil {
		return max(time.Duration(*override)*time.Second, 0)
	}
	g := minimumGracePeriod
	switch {
	case pod == nil:
	case pod.DeletionGracePeriodSeconds != nil:
		g = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		g = time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return max(g, minimumGracePeriod)
}

// podIdentity returns the trace's pod key and UID for a kill.
func podIdentity(pod *v1.Pod, running *kubecontainer.Pod) (string, string) {
	if pod != nil {
		return kubecontainer.PodKey(pod), string(pod.UID)
	}
	return kubecontainer.BuildPodKey(running.Namespace, running.Name), string(running.ID)
}

// podUID returns the UID of the pod a kill is for.
func podUID(pod *v1.Pod, running *kubecontainer.Pod) types.UID {
	if pod != nil {
		return pod.UID
	}
	return running.ID
}
