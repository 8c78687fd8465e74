package podworkers

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet"
)

// TestSyncKnownPods ports the kubelet's TestSyncKnownPods, with "has a worker" standing in for the
// kubelet's podUpdates channels (a worker is live while it exists and is not finished).
func TestSyncKnownPods(t *testing.T) {
	h := newHarness(t)
	const n = 20
	pod := func(i int) *v1.Pod { return newNamedPod(strconv.Itoa(i), "ns", "name", false) }
	live := func() int {
		count := 0
		for i := range n {
			if st, ok := h.w.State(types.UID(strconv.Itoa(i))); ok && st != Finished {
				count++
			}
		}
		return count
	}
	known := func() int { return len(h.w.States()) }

	for i := range n {
		h.update(UpdateOptions{UpdateType: SyncPodUpdate, Pod: pod(i)})
	}
	h.drain()
	if got := live(); got != n {
		t.Fatalf("live workers = %d, want %d", got, n)
	}

	for i := range n {
		if i == 2 || i == 14 {
			continue
		}
		p := pod(i)
		if i%2 == 0 {
			p.DeletionTimestamp = &metav1.Time{Time: h.clock.Now()}
		}
		h.update(UpdateOptions{UpdateType: SyncPodKill, Pod: p})
	}
	h.drain()
	checks := []struct {
		name string
		fn   func(types.UID) bool
		uid  types.UID
		want bool
	}{
		{"ShouldPodContainersBeTerminating", h.w.ShouldPodContainersBeTerminating, "0", true},
		{"ShouldPodContainersBeTerminating", h.w.ShouldPodContainersBeTerminating, "1", true},
		{"ShouldPodContainersBeTerminating", h.w.ShouldPodContainersBeTerminating, "2", false},
		{"IsPodTerminationRequested", h.w.IsPodTerminationRequested, "0", true},
		{"IsPodTerminationRequested", h.w.IsPodTerminationRequested, "2", false},
		{"CouldHaveRunningContainers", h.w.CouldHaveRunningContainers, "0", false},
		{"CouldHaveRunningContainers", h.w.CouldHaveRunningContainers, "1", false},
		{"CouldHaveRunningContainers", h.w.CouldHaveRunningContainers, "2", true},
		{"ShouldPodContentBeRemoved", h.w.ShouldPodContentBeRemoved, "0", true},
		{"ShouldPodContentBeRemoved", h.w.ShouldPodContentBeRemoved, "1", false},
		{"ShouldPodContentBeRemoved", h.w.ShouldPodContentBeRemoved, "2", false},
		{"ShouldPodContainersBeTerminating", h.w.ShouldPodContainersBeTerminating, "abc", false},
		{"CouldHaveRunningContainers", h.w.CouldHaveRunningContainers, "abc", true},
		{"ShouldPodContentBeRemoved", h.w.ShouldPodContentBeRemoved, "abc", false},
		{"ShouldPodRuntimeBeRemoved", h.w.ShouldPodRuntimeBeRemoved, "abc", false},
		{"ShouldPodBeFinished", h.w.ShouldPodBeFinished, "abc", false},
	}
	for _, c := range checks {
		if got := c.fn(c.uid); got != c.want {
			t.Errorf("before SyncKnownPods: %s(%s) = %v, want %v", c.name, c.uid, got, c.want)
		}
	}

	h.w.SyncKnownPods([]*v1.Pod{pod(2), pod(14)})
	if got := live(); got != 2 {
		t.Errorf("live workers after SyncKnownPods([2 14]) = %d, want 2", got)
	}
	if _, ok := h.w.State("2"); !ok {
		t.Error("State(2) not found, want a worker")
	}
	if h.w.IsPodTerminationRequested("2") {
		t.Error("IsPodTerminationRequested(2) = true, want false")
	}
	after := []struct {
		name string
		fn   func(types.UID) bool
		want bool
	}{
		{"ShouldPodContainersBeTerminating", h.w.ShouldPodContainersBeTerminating, true},
		{"CouldHaveRunningContainers", h.w.CouldHaveRunningContainers, false},
		{"ShouldPodContentBeRemoved", h.w.ShouldPodContentBeRemoved, true},
		{"ShouldPodRuntimeBeRemoved", h.w.ShouldPodRuntimeBeRemoved, true},
		{"ShouldPodBeFinished", h.w.ShouldPodBeFinished, true},
	}
	for _, c := range after {
		if got := c.fn("abc"); got != c.want {
			t.Errorf("after SyncKnownPods: %s(abc) = %v, want %v", c.name, got, c.want)
		}
	}

	h.w.SyncKnownPods(nil)
	h.drain()
	if got, gotKnown := live(), known(); got != 0 || gotKnown != 2 {
		t.Errorf("after SyncKnownPods(nil): live, known workers = %d, %d, want 0, 2 (history kept until the next sync)", got, gotKnown)
	}

	h.update(UpdateOptions{UpdateType: SyncPodKill, Pod: pod(2)})
	h.update(UpdateOptions{UpdateType: SyncPodKill, Pod: pod(14)})
	h.drain()
	h.w.SyncKnownPods(nil)
	if got, gotKnown := live(), known(); got != 0 || gotKnown != 0 {
		t.Errorf("after the second SyncKnownPods(nil): live, known workers = %d, %d, want 0, 0", got, gotKnown)
	}
}

// TestRemoveTerminatedWorker ports the kubelet's Test_removeTerminatedWorker table.
func TestRemoveTerminatedWorker(t *testing.T) {
	const uid = types.UID("pod-uid")
	pod1 := &UpdateOptions{Pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "1"}}}
	pod2 := &UpdateOptions{Pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "2"}}}
	at := func(state State, started bool) *podStatus {
		s := &podStatus{uid: uid, fullname: "fake-fullname", state: state}
		if started {
			s.times.started = unix(1)
		}
		if state >= Terminating {
			s.times.terminating = unix(2)
		}
		if state >= Terminated {
			s.times.terminated = unix(3)
		}
		return s
	}
	with := func(s *podStatus, active, pending *UpdateOptions) *podStatus {
		s.active, s.pending = active, pending
		s.flags.signalled = pending != nil
		return s
	}
	tests := []struct {
		name        string
		status      *podStatus
		started     map[string]types.UID
		waiting     map[string][]types.UID
		orphan      bool
		wantRemoved bool
		wantPending *UpdateOptions
	}{
		{name: "finished worker", status: at(Finished, true), wantRemoved: true},
		{
			name:    "waiting to start worker because of another started pod with the same fullname",
			status:  at(Sync, false),
			started: map[string]types.UID{"fake-fullname": "another-pod-uid"},
			waiting: map[string][]types.UID{"fake-fullname": {uid}},
		},
		{name: "not yet started worker", status: at(Sync, false), waiting: map[string][]types.UID{"fake-fullname": {uid}}},
		{name: "orphaned not started worker", status: at(Sync, false), orphan: true, wantRemoved: true},
		{name: "orphaned started worker", status: at(Sync, true), orphan: true},
		{name: "orphaned terminating worker with no activeUpdate", status: at(Terminating, true), orphan: true},
		{name: "orphaned terminating worker", status: with(at(Terminating, true), pod1, nil), orphan: true, wantPending: pod1},
		{name: "orphaned terminating worker with pendingUpdate", status: with(at(Terminating, true), pod1, pod2), orphan: true, wantPending: pod2},
		{name: "orphaned terminated worker with no activeUpdate", status: at(Terminated, true), orphan: true},
		{name: "orphaned terminated worker", status: with(at(Terminated, true), pod1, nil), orphan: true, wantPending: pod1},
		{name: "orphaned terminated worker with pendingUpdate", status: with(at(Terminated, true), pod1, pod2), orphan: true, wantPending: pod2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.w.pods[uid] = tt.status
			for k, v := range tt.started {
				h.w.startedStatic[k] = v
			}
			for k, v := range tt.waiting {
				h.w.waitingStatic[k] = v
			}
			removed := h.w.removeTerminatedWorker(tt.status, tt.orphan)
			if removed != tt.wantRemoved {
				t.Fatalf("removeTerminatedWorker() = %v, want %v", removed, tt.wantRemoved)
			}
			if _, ok := h.w.State(uid); ok == removed {
				t.Errorf("State(%s) found = %v after removed = %v", uid, ok, removed)
			}
			if removed {
				return
			}
			if diff := cmp.Diff(tt.wantPending, tt.status.pending); diff != "" {
				t.Errorf("pending update (-want +got):\n%s", diff)
			}
			if tt.wantPending != nil && !tt.status.flags.signalled {
				t.Error("worker not signalled, want a wake-up for the pending update")
			}
		})
	}
}

// TestOrphanedRunningPodTerminates follows the housekeeping path of a static pod removed while
// sources were not ready: the orphan starts terminating with the spec's grace period stored, and
// the replayed update reaches SyncTerminatingPod with a nil grace period.
func TestOrphanedRunningPodTerminates(t *testing.T) {
	h := newHarness(t)
	pod := newNamedPod("1", "ns", "web", true)
	h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod})
	h.drain()
	got := h.w.SyncKnownPods(nil)
	if diff := cmp.Diff(map[types.UID]PodWorkerSync{"1": {State: Terminating, Orphan: true, HasConfig: true, Static: true}}, got); diff != "" {
		t.Errorf("SyncKnownPods(nil) (-want +got):\n%s", diff)
	}
	if !h.w.IsPodForMirrorPodTerminatingByFullName("web_ns") {
		t.Error("IsPodForMirrorPodTerminatingByFullName(web_ns) = false while terminating, want true")
	}
	h.drain()
	want := []syncRecord{{Name: "web", UpdateType: SyncPodCreate}, {Name: "web", UpdateType: SyncPodKill}, {Name: "web", Terminated: true}}
	if diff := cmp.Diff(want, h.syncer.processed["1"]); diff != "" {
		t.Errorf("processed[1] (-want +got):\n%s", diff)
	}
	if s := h.snapshot("1"); s == nil || s.GracePeriod != 30 || !s.Deleted {
		t.Errorf("worker = %+v, want grace period 30 and deleted", s)
	}
	if h.w.IsPodForMirrorPodTerminatingByFullName("web_ns") {
		t.Error("IsPodForMirrorPodTerminatingByFullName(web_ns) = true after termination, want false")
	}
	h.w.SyncKnownPods(nil)
	if _, ok := h.w.State("1"); ok {
		t.Error("State(1) found after the second SyncKnownPods, want the finished orphan forgotten")
	}
}

func TestStates(t *testing.T) {
	h := newHarness(t)
	if diff := cmp.Diff(map[types.UID]State{}, h.w.States()); diff != "" {
		t.Errorf("States() before any update (-want +got):\n%s", diff)
	}
	h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: newNamedPod("1", "ns", "running", false)})
	h.update(UpdateOptions{UpdateType: SyncPodKill, Pod: newNamedPod("2", "ns", "killed", false)})
	h.drain()
	want := map[types.UID]State{"1": Sync, "2": Finished}
	got := h.w.States()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("States() (-want +got):\n%s", diff)
	}
	got["1"] = Terminating
	if st, _ := h.w.State("1"); st != Sync {
		t.Errorf("State(1) after changing the map States returned = %v, want sync", st)
	}
}

func TestNewMissingOptions(t *testing.T) {
	_, err := New(Options{})
	if !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Fatalf("New(Options{}) = %v, want minikubelet.ErrMissingOption", err)
	}
	for _, name := range []string{"Syncer", "Cache", "Queue", "Clock", "Tracer"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("New(Options{}) = %q, want it to name %s", err, name)
		}
	}
}
