package podworkers

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

func TestCheckTransition(t *testing.T) {
	states := []State{stateNone, Sync, Terminating, Terminated, Finished}
	legal := map[string]bool{
		"->sync": true, "->terminated": true, "sync->terminating": true,
		"terminating->terminated": true, "terminating->finished": true, "terminated->finished": true,
		"sync->": true, "terminating->": true, "terminated->": true, "finished->": true,
	}
	for _, from := range states {
		for _, to := range states {
			name := from.traceName() + "->" + to.traceName()
			err := checkTransition(from, to)
			if legal[name] && err != nil {
				t.Errorf("checkTransition(%s) = %v, want nil", name, err)
			}
			if !legal[name] && !errors.Is(err, ErrIllegalTransition) {
				t.Errorf("checkTransition(%s) = %v, want ErrIllegalTransition", name, err)
			}
		}
	}
}

func TestIllegalTransitionIsTracedAndLeavesState(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Pod: newNamedPod("1", "ns", "p", false)})
	s := h.w.pods["1"]
	err := h.w.transition(s, Finished, "test")
	if !errors.Is(err, ErrIllegalTransition) {
		t.Fatalf("transition(sync -> finished) = %v, want ErrIllegalTransition", err)
	}
	if st, ok := h.w.State("1"); !ok || st != Sync {
		t.Errorf("State(1) after an illegal transition = %v, %v, want sync, true", st, ok)
	}
	last := h.events[len(h.events)-1]
	if last.Event != "error" || last.Reason != "IllegalTransition" {
		t.Errorf("last event = %+v, want an IllegalTransition error", last)
	}
}

func TestStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{Sync.String(), "sync"}, {Terminating.String(), "terminating"}, {Terminated.String(), "terminated"},
		{Finished.String(), "finished"}, {State(7).String(), "State(7)"},
		{SyncPodSync.String(), "sync"}, {SyncPodUpdate.String(), "update"}, {SyncPodCreate.String(), "create"},
		{SyncPodKill.String(), "kill"}, {SyncPodType(9).String(), "SyncPodType(9)"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("String() = %q, want %q", tt.got, tt.want)
		}
	}
}

// TestBusyUntilDone checks the "busy until" model: a sync that reports a later Done keeps the
// worker busy, updates coalesce meanwhile, and the next sync waits for a cache newer than Done.
func TestBusyUntilDone(t *testing.T) {
	h := newHarness(t)
	t0 := h.clock.Now()
	h.syncer.result = func(fn string, _ types.UID) (Result, error) {
		if fn == "SyncPod" {
			return Result{Done: h.clock.Now().Add(5 * time.Second)}, nil
		}
		return Result{}, nil
	}
	pod := newNamedPod("1", "ns", "p", false)
	h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod})
	if next, ok := h.w.NextWake(); !ok || !next.Equal(t0) {
		t.Errorf("NextWake() with an unpicked update = %v, %v, want %v, true", next, ok, t0)
	}
	h.w.Step(context.Background())
	if next, ok := h.w.NextWake(); !ok || !next.Equal(t0.Add(5*time.Second)) {
		t.Errorf("NextWake() while busy = %v, %v, want %v, true", next, ok, t0.Add(5*time.Second))
	}
	for i, name := range []string{"a", "b", "c"} {
		h.clock.Set(t0.Add(time.Duration(i+1) * time.Second))
		p := pod.DeepCopy()
		p.Labels = map[string]string{"v": name}
		h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodUpdate, Pod: p})
		h.w.Step(context.Background())
	}
	if got := len(h.syncer.processed["1"]); got != 1 {
		t.Fatalf("syncs while busy = %d, want 1", got)
	}
	h.clock.Set(t0.Add(5 * time.Second))
	h.cache.blocked["1"] = true // no relist newer than Done yet
	h.w.Step(context.Background())
	if got := len(h.syncer.processed["1"]); got != 1 {
		t.Fatalf("syncs before the cache is newer than Done = %d, want 1", got)
	}
	if len(h.queue.items) != 1 {
		t.Errorf("requeues after the first sync = %d, want 1", len(h.queue.items))
	}
	h.clock.Set(t0.Add(6 * time.Second))
	delete(h.cache.blocked, "1")
	h.w.Step(context.Background())
	want := []syncRecord{{Name: "p", UpdateType: SyncPodCreate}, {Name: "p", UpdateType: SyncPodUpdate}}
	if diff := cmp.Diff(want, h.syncer.processed["1"]); diff != "" {
		t.Errorf("processed (-want +got):\n%s", diff)
	}
	if got := h.syncer.pods[1].Labels["v"]; got != "c" {
		t.Errorf("second SyncPod saw label v=%q, want the newest update's %q", got, "c")
	}
}

// TestCancelDoesNotInterruptSync checks v1.35.0's cancellation, which no sync function watches
// (TODO #113606): a kill arriving during a SyncPod waits for it to end, and a second kill with a
// shorter grace does not interrupt the kill already running with the longer one.
func TestCancelDoesNotInterruptSync(t *testing.T) {
	h := newHarness(t)
	t0 := h.clock.Now()
	h.syncer.result = func(fn string, _ types.UID) (Result, error) {
		switch fn {
		case "SyncPod":
			return Result{Done: h.clock.Now().Add(10 * time.Second)}, nil
		case "SyncTerminatingPod":
			return Result{Done: h.clock.Now().Add(30 * time.Second)}, nil
		}
		return Result{}, nil
	}
	pod := newNamedPod("1", "ns", "p", false)
	h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod})
	h.w.Step(context.Background())

	h.clock.Set(t0.Add(3 * time.Second))
	h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodKill, Pod: pod})
	if next, _ := h.w.NextWake(); !next.Equal(t0.Add(10 * time.Second)) {
		t.Errorf("NextWake() after the kill = %v, want the end of the SyncPod %v", next, t0.Add(10*time.Second))
	}
	h.w.Step(context.Background())
	if got := len(h.syncer.processed["1"]); got != 1 {
		t.Fatalf("syncs at the kill = %d, want 1 (the SyncPod goes on)", got)
	}
	// The SyncPod ends at 10s; the terminating sync waits for a relist, then takes 30s.
	h.clock.Set(t0.Add(10 * time.Second))
	h.w.Step(context.Background())
	h.clock.Set(t0.Add(11 * time.Second))
	h.w.Step(context.Background())
	h.clock.Set(t0.Add(16 * time.Second))
	h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodKill, Pod: pod, KillPodOptions: &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(5)}})
	h.w.Step(context.Background())
	h.clock.Set(t0.Add(22 * time.Second))
	h.w.Step(context.Background())
	if st, _ := h.w.State("1"); st != Terminating {
		t.Errorf("State(1) at 22s = %v, want terminating: the 30s kill is not cut short", st)
	}
	h.clock.Set(t0.Add(41 * time.Second))
	h.w.Step(context.Background())
	if st, _ := h.w.State("1"); st != Terminated {
		t.Errorf("State(1) when the first kill's work ends = %v, want terminated", st)
	}
	want := []syncRecord{
		{Name: "p", UpdateType: SyncPodCreate},
		{Name: "p", UpdateType: SyncPodKill, Grace: int64p(30)},
	}
	if diff := cmp.Diff(want, h.syncer.processed["1"]); diff != "" {
		t.Errorf("processed (-want +got):\n%s", diff)
	}
	var cancels, canceled int
	for _, e := range h.events {
		if e.Event == "cancel" {
			cancels++
		}
		if e.Event == "error" && e.Reason == "Canceled" {
			canceled++
		}
	}
	if cancels != 2 || canceled != 0 {
		t.Errorf("cancel events, Canceled errors = %d, %d, want 2, 0", cancels, canceled)
	}
}

// TestCancelWhileWaitingForCache checks that a kill arriving after the worker took its update, but
// before the cache let it sync, does not drop the taken Create: the kubelet's wait for the cache
// does not watch the context, and the Create syncs before the kill.
func TestCancelWhileWaitingForCache(t *testing.T) {
	h := newHarness(t)
	pod := newNamedPod("1", "ns", "p", false)
	h.cache.blocked["1"] = true
	h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod})
	h.w.Step(context.Background())
	h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodKill, Pod: pod})
	delete(h.cache.blocked, "1")
	h.clock.Advance(time.Second)
	h.w.Step(context.Background())
	h.drain()
	want := []syncRecord{{Name: "p", UpdateType: SyncPodCreate}, {Name: "p", UpdateType: SyncPodKill, Grace: int64p(30)}, {Name: "p", Terminated: true}}
	if diff := cmp.Diff(want, h.syncer.processed["1"]); diff != "" {
		t.Errorf("processed (-want +got):\n%s", diff)
	}
}

// TestRequeueDelays checks completeWork's rules, including the v1.35 back-off expiry.
func TestRequeueDelays(t *testing.T) {
	crash := func(after time.Duration) func(now time.Time) error {
		return func(now time.Time) error {
			return fmt.Errorf("sync: %w", &kubecontainer.BackoffError{Err: kubecontainer.ErrCrashLoopBackOff, Expiry: now.Add(after)})
		}
	}
	tests := []struct {
		name     string
		terminal bool
		err      func(now time.Time) error
		min, max time.Duration
	}{
		{name: "success", min: 60 * time.Second, max: 90 * time.Second},
		{name: "phase transition", terminal: true},
		{name: "network not ready", err: func(time.Time) error { return errors.New("network is not ready: cni") }, min: time.Second, max: 1500 * time.Millisecond},
		{name: "plain error", err: func(time.Time) error { return errors.New("boom") }, min: 10 * time.Second, max: 15 * time.Second},
		{name: "back-off expiring in 20s", err: crash(20 * time.Second), min: 20 * time.Second, max: 30 * time.Second},
		{name: "back-off beyond resync is clamped", err: crash(5 * time.Minute), min: 60 * time.Second, max: 90 * time.Second},
		{name: "expired back-off", err: crash(-time.Second)},
		{name: "joined errors use the earliest back-off", err: func(now time.Time) error {
			return errors.Join(crash(40*time.Second)(now), crash(2*time.Second)(now))
		}, min: 2 * time.Second, max: 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.w.resyncInterval, h.w.backOffPeriod = time.Minute, 10*time.Second
			h.syncer.result = func(fn string, _ types.UID) (Result, error) {
				if fn == "SyncPod" && tt.err != nil {
					return Result{}, tt.err(h.clock.Now())
				}
				return Result{IsTerminal: fn == "SyncPod" && tt.terminal}, nil
			}
			h.w.UpdatePod(UpdateOptions{Pod: newNamedPod("1", "ns", "p", false)})
			h.w.Step(context.Background())
			if len(h.queue.items) == 0 {
				t.Fatal("no requeue after SyncPod")
			}
			got := h.queue.items[0].Delay
			if got < tt.min || (tt.max > tt.min && got >= tt.max) || (tt.max == tt.min && got != tt.min) {
				t.Errorf("requeue delay = %v, want in [%v, %v)", got, tt.min, tt.max)
			}
		})
	}
}

// TestTrace checks the events of a whole lifecycle.
func TestTrace(t *testing.T) {
	h := newHarness(t)
	pod := newNamedPod("1", "ns", "p", false)
	h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod})
	h.drain()
	h.update(UpdateOptions{UpdateType: SyncPodKill, Pod: pod})
	h.drain()
	h.w.SyncKnownPods(nil)
	ev := func(e trace.Event) trace.Event {
		e.Component, e.Pod, e.UID = trace.PodWorkers, "ns/p", "1"
		return e
	}
	want := []trace.Event{
		ev(trace.Event{Event: "state", To: "sync", Func: "UpdatePod"}),
		ev(trace.Event{Event: "sync", Op: "create", Func: "SyncPod"}),
		ev(trace.Event{Event: "requeue", Func: "completeWork"}),
		ev(trace.Event{Event: "state", From: "sync", To: "terminating", Func: "UpdatePod"}),
		ev(trace.Event{Event: "sync", Op: "terminating", Func: "SyncTerminatingPod"}),
		ev(trace.Event{Event: "state", From: "terminating", To: "terminated", Func: "completeTerminating"}),
		ev(trace.Event{Event: "requeue", Func: "completeWork"}),
		ev(trace.Event{Event: "sync", Op: "terminated", Func: "SyncTerminatedPod"}),
		ev(trace.Event{Event: "state", From: "terminated", To: "finished", Func: "completeTerminated"}),
		ev(trace.Event{Event: "state", From: "finished", Func: "removeTerminatedWorker"}),
	}
	if diff := cmp.Diff(want, h.events, cmpopts.IgnoreFields(trace.Event{}, "Delay")); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
}

// TestBlockedStaticPodTrace checks the event of a static pod waiting for its full name.
func TestBlockedStaticPodTrace(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Pod: newNamedPod("a", "ns", "etcd", true)})
	h.drain()
	h.events = nil
	h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: newNamedPod("b", "ns", "etcd", true)})
	h.drain()
	want := []trace.Event{
		{Component: trace.PodWorkers, Event: "state", Pod: "ns/etcd", UID: "b", To: "sync", Func: "UpdatePod"},
		{Component: trace.PodWorkers, Event: "blocked", Pod: "ns/etcd", UID: "b", Reason: "StaticPodExclusion", Func: "allowPodStart"},
	}
	if diff := cmp.Diff(want, h.events, cmpopts.IgnoreFields(trace.Event{}, "Delay")); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
	if d := h.events[1].Delay; d < time.Millisecond || d >= 1500*time.Microsecond {
		t.Errorf("blocked retry delay = %v, want jitter(backOffPeriod)", d)
	}
}

// TestStepOrder checks that workers start in the order their updates arrived, not in UID order.
func TestStepOrder(t *testing.T) {
	h := newHarness(t)
	var order []types.UID
	h.syncer.result = func(_ string, uid types.UID) (Result, error) {
		order = append(order, uid)
		return Result{}, nil
	}
	for _, uid := range []string{"c", "a", "b"} {
		h.w.UpdatePod(UpdateOptions{Pod: newNamedPod(uid, "ns", uid, false)})
	}
	h.w.Step(context.Background())
	if diff := cmp.Diff([]types.UID{"c", "a", "b"}, order); diff != "" {
		t.Errorf("sync order (-want +got):\n%s", diff)
	}
}

// TestRestartRequested follows a UID re-created while terminating: housekeeping forgets it once
// finished even though it is still desired, so the caller can create it again.
func TestRestartRequested(t *testing.T) {
	h := newHarness(t)
	pod := newNamedPod("1", "ns", "p", true)
	h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod})
	h.drain()
	h.update(UpdateOptions{UpdateType: SyncPodKill, Pod: pod})
	h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod})
	if got := h.w.SyncKnownPods([]*v1.Pod{pod}); len(got) != 1 {
		t.Errorf("SyncKnownPods while terminating = %v, want the worker kept", got)
	}
	h.drain()
	if got := h.w.SyncKnownPods([]*v1.Pod{pod}); len(got) != 0 {
		t.Errorf("SyncKnownPods after finishing = %v, want the restart-requested worker forgotten", got)
	}
	h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod})
	h.drain()
	if st, ok := h.w.State("1"); !ok || st != Sync {
		t.Errorf("State(1) after the restart = %v, %v, want sync, true", st, ok)
	}
}

// TestCacheError checks that a failure to read the status is a FailedSync error retried after
// back-off, and that the next attempt does not wait for a newer cache.
func TestCacheError(t *testing.T) {
	h := newHarness(t)
	h.cache.err = errNotFound
	h.w.UpdatePod(UpdateOptions{Pod: newNamedPod("1", "ns", "p", false)})
	h.w.Step(context.Background())
	if got := h.syncer.processed["1"]; len(got) != 0 {
		t.Fatalf("processed = %v, want no sync", got)
	}
	last := h.events[len(h.events)-2]
	if last.Event != "error" || last.Reason != "FailedSync" || last.Func != "SyncPod" {
		t.Errorf("error event = %+v, want a FailedSync error for SyncPod", last)
	}
	if d := h.queue.items[0].Delay; d < time.Millisecond || d >= 1500*time.Microsecond {
		t.Errorf("requeue delay = %v, want jitter(backOffPeriod)", d)
	}
	h.cache.err = nil
	h.w.UpdatePod(UpdateOptions{Pod: newNamedPod("1", "ns", "p", false)})
	h.w.Step(context.Background())
	if got := len(h.syncer.processed["1"]); got != 1 {
		t.Errorf("syncs after the cache recovered = %d, want 1 at the same instant", got)
	}
}
