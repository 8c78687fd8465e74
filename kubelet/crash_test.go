package kubelet

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// crashingPod is a static pod whose container exits with code after 5s on every run.
func crashingPod(policy v1.RestartPolicy, code string) *v1.Pod {
	pod := staticPod("crash", "uid-crash", policy)
	pod.Annotations[fakeruntime.AnnotationExitAfter+"app"] = "5s"
	pod.Annotations[fakeruntime.AnnotationExitCode+"app"] = code
	return pod
}

// containerTimes returns when the app container started and exited, and the back-offs the
// runtime applied, from the trace.
func containerTimes(events []trace.Event) (starts, exits, backoffs []time.Duration) {
	for _, ev := range events {
		if ev.Component != trace.Runtime || ev.Container != "app" {
			continue
		}
		switch ev.Event {
		case "started":
			starts = append(starts, ev.T)
		case "exited":
			exits = append(exits, ev.T)
		case "backoff":
			backoffs = append(backoffs, ev.Delay)
		}
	}
	return starts, exits, backoffs
}

func TestCrashLoopBackOff(t *testing.T) {
	e := newEnv(t, envOptions{standalone: true})
	pod := crashingPod(v1.RestartPolicyAlways, "1")
	e.setFile(pod)
	if !e.run(3*time.Minute, func() bool { s, _, _ := containerTimes(e.trace()); return len(s) >= 5 }) {
		t.Fatalf("fewer than 5 starts after %v", e.now())
	}
	starts, exits, backoffs := containerTimes(e.trace())
	if diff := cmp.Diff([]time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second}, backoffs); diff != "" {
		t.Errorf("crash-loop back-offs (-want +got):\n%s", diff)
	}
	// The first crash restarts on the sync its ContainerDied triggers.
	if gap := starts[1] - exits[0]; gap < 0 || gap > time.Second {
		t.Errorf("first restart %v after the exit, want within one relist", gap)
	}
	// Later restarts wait out the back-off, measured from the exit; the worker requeues at the
	// expiry with up to 50% jitter and the sync ticker picks it up within a second.
	for i, d := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second} {
		gap := starts[i+2] - exits[i+1]
		if gap < d || gap > d+d/2+time.Second {
			t.Errorf("restart %d came %v after the exit, want within [%v, %v]", i+2, gap, d, d+d/2+time.Second)
		}
	}
	if got := e.phase(pod.UID); got != v1.PodRunning {
		t.Errorf("phase of a crash-looping pod under Always = %s, want Running", got)
	}
	var backOffEvents int
	for _, ev := range e.events.list() {
		if strings.HasPrefix(ev, "Warning BackOff Back-off restarting failed container app") {
			backOffEvents++
		}
	}
	if backOffEvents != 3 {
		t.Errorf("recorded %d BackOff events, want 3; events:\n%s", backOffEvents, strings.Join(e.events.list(), "\n"))
	}
}

func TestCrashLoopWaitingReason(t *testing.T) {
	e := newEnv(t, envOptions{standalone: true})
	pod := crashingPod(v1.RestartPolicyAlways, "1")
	e.setFile(pod)
	waiting := func() bool {
		s, _ := e.k.Status.GetPodStatus(pod.UID)
		for _, cs := range s.ContainerStatuses {
			if cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff" {
				return true
			}
		}
		return false
	}
	if !e.run(time.Minute, waiting) {
		t.Fatalf("container never shown Waiting with reason CrashLoopBackOff")
	}
	s, _ := e.k.Status.GetPodStatus(pod.UID)
	msg := s.ContainerStatuses[0].State.Waiting.Message
	if want := "back-off 10s restarting failed container=app pod=crash-node-1_default(uid-crash)"; msg != want {
		t.Errorf("waiting message = %q, want %q", msg, want)
	}
}

func TestTerminalRestartPolicies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy v1.RestartPolicy
		code   string
		want   v1.PodPhase
	}{
		{name: "never exit 1", policy: v1.RestartPolicyNever, code: "1", want: v1.PodFailed},
		{name: "never exit 0", policy: v1.RestartPolicyNever, code: "0", want: v1.PodSucceeded},
		{name: "on failure exit 0", policy: v1.RestartPolicyOnFailure, code: "0", want: v1.PodSucceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{standalone: true})
			pod := crashingPod(tc.policy, tc.code)
			e.setFile(pod)
			finished := func() bool { s, _ := e.k.Workers.State(pod.UID); return s == podworkers.Finished }
			if !e.run(time.Minute, finished) {
				t.Fatalf("worker of %s not finished after %v", pod.UID, e.now())
			}
			if got := e.phase(pod.UID); got != tc.want {
				t.Errorf("phase = %s, want %s", got, tc.want)
			}
			starts, _, _ := containerTimes(e.trace())
			if len(starts) != 1 {
				t.Errorf("container started %d times, want 1", len(starts))
			}
			want := []step{
				{Component: trace.Runtime, Event: "exited"},
				{Component: trace.PodWorkers, Event: "sync", Op: "sync", Func: "SyncPod"},
				{Component: trace.PodWorkers, Event: "state", To: "terminating", Func: "completeSync"},
				{Component: trace.PodWorkers, Event: "sync", Op: "terminating", Func: "SyncTerminatingPod"},
				{Component: trace.PodWorkers, Event: "state", To: "terminated", Func: "completeTerminating"},
				{Component: trace.PodWorkers, Event: "sync", Op: "terminated", Func: "SyncTerminatedPod"},
				{Component: trace.PodWorkers, Event: "state", To: "finished", Func: "completeTerminated"},
			}
			if diff := cmp.Diff(want, subsequence(e.trace(), want)); diff != "" {
				for _, ev := range e.trace() {
					t.Log(ev.Text())
				}
				t.Errorf("terminal flow (-want +got):\n%s", diff)
			}
			// SyncPod stops at the terminal phase: between the exit and the move to terminating
			// the runtime is not asked to sync the pod again (kubelet SyncPod, step 2).
			if n := runtimeSyncsBetween(e.trace(), "exited", "completeSync"); n != 0 {
				t.Errorf("runtime SyncPod called %d times after the pod turned terminal, want 0", n)
			}
		})
	}
}

// runtimeSyncsBetween counts the runtime's SyncPod events after the first runtime event named
// from and before the first later event whose Func is until.
func runtimeSyncsBetween(events []trace.Event, from, until string) int {
	n, in := 0, false
	for _, ev := range events {
		switch {
		case !in:
			in = ev.Component == trace.Runtime && string(ev.Event) == from
		case ev.Func == until:
			return n
		case ev.Component == trace.Runtime && ev.Func == "SyncPod":
			n++
		}
	}
	return n
}
