package podworkers

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// TestUpdatePod ports the kubelet's TestUpdatePod table, timestamps included.
func TestUpdatePod(t *testing.T) {
	running := newNamedPod("1", "ns", "running-pod", false)
	withLabel := running.DeepCopy()
	withLabel.Labels = map[string]string{"updated": "value"}
	deleting := running.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: unix(1)}
	deleting.DeletionGracePeriodSeconds = int64p(15)
	done := newPodWithPhase("1", "done-pod", v1.PodSucceeded)
	orphan := &kubecontainer.Pod{ID: "1", Name: "orphaned-pod", Namespace: "ns"}

	tests := []struct {
		name        string
		prepare     func(h *harness)
		update      UpdateOptions
		runtimeOK   bool // the cache has the pod when UpdatePod reads it (else NotFound)
		after       func(h *harness)
		wantBefore  *snapshot
		want        *snapshot
		wantKnownTT bool
	}{
		{
			name:   "a new pod is recorded and started",
			update: UpdateOptions{UpdateType: SyncPodCreate, Pod: running},
			want: &snapshot{Fullname: "running-pod_ns", State: Sync, Synced: unix(1), Started: unix(3),
				Active: &UpdateOptions{Pod: running}},
		},
		{
			name: "a new pod is recorded and started unless it is a duplicate of an existing terminating pod UID",
			prepare: func(h *harness) {
				h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: running})
				h.drain()
				h.hold("1")
				h.update(UpdateOptions{UpdateType: SyncPodKill, Pod: running})
			},
			update: UpdateOptions{UpdateType: SyncPodCreate, Pod: withLabel},
			after:  func(h *harness) { h.release("1") },
			want: &snapshot{Fullname: "running-pod_ns", State: Finished, Synced: unix(1), Started: unix(3),
				Terminating: unix(3), Terminated: unix(6), GracePeriod: 30, StartedTerminating: true, RestartRequested: true,
				Active: &UpdateOptions{Pod: running, KillPodOptions: &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(30)}}},
			wantKnownTT: true,
		},
		{
			name:   "a new pod is recorded and started and running pod is ignored",
			update: UpdateOptions{UpdateType: SyncPodCreate, Pod: running, RunningPod: &kubecontainer.Pod{ID: "1", Name: "orphaned-pod"}},
			want: &snapshot{Fullname: "running-pod_ns", State: Sync, Synced: unix(1), Started: unix(3),
				Active: &UpdateOptions{Pod: running}},
		},
		{
			name: "a running pod is terminated when an update contains a deletionTimestamp",
			prepare: func(h *harness) {
				h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: running})
				h.drain()
			},
			update: UpdateOptions{UpdateType: SyncPodUpdate, Pod: deleting},
			want: &snapshot{Fullname: "running-pod_ns", State: Finished, Synced: unix(1), Started: unix(3),
				Terminating: unix(3), Terminated: unix(5), GracePeriod: 15, StartedTerminating: true, Deleted: true,
				Active: &UpdateOptions{Pod: deleting, KillPodOptions: &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(15)}}},
			wantKnownTT: true,
		},
		{
			name: "a running pod is terminated when an eviction is requested",
			prepare: func(h *harness) {
				h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: running})
				h.drain()
			},
			update: UpdateOptions{UpdateType: SyncPodKill, Pod: running, KillPodOptions: &KillPodOptions{Evict: true}},
			want: &snapshot{Fullname: "running-pod_ns", State: Finished, Synced: unix(1), Started: unix(3),
				Terminating: unix(3), Terminated: unix(5), GracePeriod: 30, StartedTerminating: true, Evicted: true,
				Active: &UpdateOptions{Pod: running, KillPodOptions: &KillPodOptions{Evict: true, PodTerminationGracePeriodSecondsOverride: int64p(30)}}},
			wantKnownTT: true,
		},
		{
			name:   "a pod that is terminal and has never started must be terminated if the runtime does not have a cached terminal state",
			update: UpdateOptions{UpdateType: SyncPodCreate, Pod: done},
			want: &snapshot{Fullname: "done-pod_ns", State: Finished, Synced: unix(1), Terminating: unix(1), Started: unix(3),
				Terminated: unix(3), GracePeriod: 30, StartedTerminating: true,
				Active: &UpdateOptions{Pod: done, KillPodOptions: &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(30)}}},
			wantKnownTT: true,
		},
		{
			name:      "a pod that is terminal and has never started advances to finished if the runtime has a cached terminal state",
			update:    UpdateOptions{UpdateType: SyncPodCreate, Pod: done},
			runtimeOK: true,
			wantBefore: &snapshot{Fullname: "done-pod_ns", State: Terminated, Synced: unix(1), Terminating: unix(1),
				Terminated: unix(1), StartedTerminating: true, Signal: true,
				Pending: &UpdateOptions{UpdateType: SyncPodCreate, Pod: done}},
			want: &snapshot{Fullname: "done-pod_ns", State: Finished, Synced: unix(1), Terminating: unix(1), Started: unix(3),
				Terminated: unix(1), StartedTerminating: true, Active: &UpdateOptions{Pod: done}},
			wantKnownTT: true,
		},
		{
			name:   "an orphaned running pod we have not seen is marked terminating and advances to finished and then is removed",
			update: UpdateOptions{UpdateType: SyncPodKill, RunningPod: orphan},
			wantBefore: &snapshot{Fullname: "orphaned-pod_ns", State: Terminating, Synced: unix(1), Terminating: unix(1),
				GracePeriod: 1, Deleted: true, ObservedRuntime: true, Signal: true,
				Pending: &UpdateOptions{UpdateType: SyncPodKill, RunningPod: orphan,
					KillPodOptions: &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(1)}}},
		},
		{
			name:   "an orphaned running pod with a non-kill update type does nothing",
			update: UpdateOptions{UpdateType: SyncPodCreate, RunningPod: orphan},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			if tt.prepare != nil {
				tt.prepare(h)
			}
			if !tt.runtimeOK {
				h.cache.err = errNotFound
			}
			h.w.UpdatePod(tt.update)
			h.cache.err = nil
			h.clock.Advance(1e9)
			if tt.after != nil {
				tt.after(h)
			}
			if tt.wantBefore != nil {
				if diff := cmp.Diff(tt.wantBefore, h.snapshot("1")); diff != "" {
					t.Errorf("worker before it runs (-want +got):\n%s", diff)
				}
			}
			h.drain()
			if diff := cmp.Diff(tt.want, h.snapshot("1")); diff != "" {
				t.Errorf("worker after drain (-want +got):\n%s", diff)
			}
			if got := h.w.IsPodKnownTerminated("1"); got != tt.wantKnownTT {
				t.Errorf("IsPodKnownTerminated(1) = %v, want %v", got, tt.wantKnownTT)
			}
		})
	}
}

// TestUpdatePodParallel ports the kubelet's test: the newest of many quick updates always wins. The
// kubelet allows 1..i+1 syncs per UID; this core coalesces deterministically to exactly one.
func TestUpdatePodParallel(t *testing.T) {
	h := newHarness(t)
	const n = 20
	for i := range n {
		for j := i; j < n; j++ {
			pod := newNamedPod(strconv.Itoa(j), "ns", strconv.Itoa(i), false)
			h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod})
		}
	}
	h.drain()
	if got := len(h.syncer.processed); got != n {
		t.Fatalf("len(processed) = %d, want %d", got, n)
	}
	for i := range n {
		uid := types.UID(strconv.Itoa(i))
		want := []syncRecord{{Name: strconv.Itoa(i), UpdateType: SyncPodCreate}}
		if diff := cmp.Diff(want, h.syncer.processed[uid]); diff != "" {
			t.Errorf("processed[%s] (-want +got):\n%s", uid, diff)
		}
	}
}

func TestUpdatePodForRuntimePod(t *testing.T) {
	h := newHarness(t)
	running := &kubecontainer.Pod{ID: "1", Name: "1", Namespace: "test"}
	h.update(UpdateOptions{UpdateType: SyncPodCreate, RunningPod: running})
	h.drain()
	if len(h.syncer.processed) != 0 {
		t.Fatalf("processed after a runtime-only Create = %v, want none", h.syncer.processed)
	}
	h.update(UpdateOptions{UpdateType: SyncPodKill, RunningPod: running})
	h.drain()
	want := map[types.UID][]syncRecord{"1": {{Name: "1", UpdateType: SyncPodKill, RunningPod: true}}}
	if diff := cmp.Diff(want, h.syncer.processed); diff != "" {
		t.Errorf("processed after a runtime-only Kill (-want +got):\n%s", diff)
	}
	if _, ok := h.w.State("1"); ok {
		t.Error("State(1) found a worker, want the runtime-only pod forgotten")
	}
}

func TestUpdatePodForTerminatedRuntimePod(t *testing.T) {
	h := newHarness(t)
	now := h.clock.Now()
	h.w.pods["1"] = &podStatus{uid: "1", key: "test/1", fullname: "1_test", state: Terminated, gracePeriod: 1,
		times: lifecycleTimes{terminating: now.Add(-2e9), terminated: now.Add(-1e9)},
		flags: statusFlags{startedTerminating: true}}
	h.update(UpdateOptions{UpdateType: SyncPodKill, RunningPod: &kubecontainer.Pod{ID: "1", Name: "1", Namespace: "test"}})
	h.drain()
	if len(h.syncer.processed) != 0 {
		t.Errorf("processed = %v, want nothing: a runtime-only kill of a terminated pod is ignored", h.syncer.processed)
	}
}

func TestUpdatePodDoesNotForgetSyncPodKill(t *testing.T) {
	h := newHarness(t)
	const n = 20
	for i := range n {
		pod := newNamedPod(strconv.Itoa(i), "ns", strconv.Itoa(i), false)
		h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod})
		h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodKill, Pod: pod})
		h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodUpdate, Pod: pod})
	}
	h.drain()
	if got := len(h.syncer.processed); got != n {
		t.Fatalf("len(processed) = %d, want %d", got, n)
	}
	for i := range n {
		name := strconv.Itoa(i)
		want := []syncRecord{{Name: name, UpdateType: SyncPodKill, Grace: int64p(30)}, {Name: name, Terminated: true}}
		if diff := cmp.Diff(want, h.syncer.processed[types.UID(name)]); diff != "" {
			t.Errorf("processed[%s] (-want +got):\n%s", name, diff)
		}
	}
}

func TestTerminalPhaseTransition(t *testing.T) {
	h := newHarness(t)
	pod := newNamedPod("1", "test1", "pod1", false)
	for step := range 2 {
		h.update(UpdateOptions{UpdateType: SyncPodUpdate, Pod: pod})
		h.drain()
		if h.w.IsPodKnownTerminated("1") {
			t.Fatalf("step %d: IsPodKnownTerminated(1) = true, want false", step+1)
		}
	}
	h.syncer.terminal["1"] = true
	h.update(UpdateOptions{UpdateType: SyncPodUpdate, Pod: pod})
	h.drain()
	if !h.w.IsPodTerminationRequested("1") || !h.w.IsPodKnownTerminated("1") {
		t.Errorf("IsPodTerminationRequested(1), IsPodKnownTerminated(1) = %v, %v, want true, true",
			h.w.IsPodTerminationRequested("1"), h.w.IsPodKnownTerminated("1"))
	}
}

// TestSyncPodArguments ports TestFakePodWorkers: SyncPod sees the pod, mirror pod and cached
// status it was given: the very objects, which are read-only (docs/design/008-shared-pods.md),
// unchanged.
func TestSyncPodArguments(t *testing.T) {
	pairs := []struct{ pod, mirror *v1.Pod }{
		{&v1.Pod{}, &v1.Pod{}},
		{
			&v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "12345678", Name: "foo", Namespace: "new"}},
			&v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "12345678", Name: "fooMirror", Namespace: "new"}},
		},
		{
			&v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "98765", Name: "bar", Namespace: "new"}},
			&v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "98765", Name: "barMirror", Namespace: "new"}},
		},
	}
	for i, p := range pairs {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			h := newHarness(t)
			pod, mirror := p.pod.DeepCopy(), p.mirror.DeepCopy()
			status := &kubecontainer.PodStatus{UID: p.pod.UID, Name: "cached"}
			h.cache.status[p.pod.UID] = status
			h.update(UpdateOptions{UpdateType: SyncPodUpdate, Pod: p.pod, MirrorPod: p.mirror})
			h.drain()
			if len(h.syncer.pods) != 1 {
				t.Fatalf("SyncPod calls = %d, want 1", len(h.syncer.pods))
			}
			if diff := cmp.Diff(p.pod, h.syncer.pods[0]); diff != "" {
				t.Errorf("SyncPod pod (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(p.mirror, h.syncer.mirrors[0]); diff != "" {
				t.Errorf("SyncPod mirror pod (-want +got):\n%s", diff)
			}
			if h.syncer.statuses[0] != status {
				t.Errorf("SyncPod status = %+v, want the cached %+v", h.syncer.statuses[0], status)
			}
			if h.syncer.pods[0] != p.pod || h.syncer.mirrors[0] != p.mirror {
				t.Error("SyncPod got a copy of the caller's pod or mirror pod, want the very objects, as the kubelet's workers hand on")
			}
			if diff := cmp.Diff(pod, p.pod); diff != "" {
				t.Errorf("the workers changed the pod they were given (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(mirror, p.mirror); diff != "" {
				t.Errorf("the workers changed the mirror pod they were given (-before +after):\n%s", diff)
			}
		})
	}
}

// TestKillPodNow ports TestKillPodNowFunc: a kill with a status function and a completion callback
// terminates the pod, applies the status function and reports completion.
func TestKillPodNow(t *testing.T) {
	h := newHarness(t)
	pod := newNamedPod("12345678", "ns", "test", false)
	completed := 0
	h.update(UpdateOptions{UpdateType: SyncPodKill, Pod: pod, KillPodOptions: &KillPodOptions{
		PodTerminationGracePeriodSecondsOverride: int64p(0),
		PodStatusFunc: func(s *v1.PodStatus) {
			s.Phase, s.Reason, s.Message = v1.PodFailed, "reason", "message"
		},
		OnTerminated: func() { completed++ },
	}})
	h.clock.Advance(1e9)
	h.w.Step(context.Background())
	if st, _ := h.w.State("12345678"); st != Terminated {
		t.Fatalf("State after one step = %v, want terminated (SyncTerminatedPod waits for the next relist)", st)
	}
	if completed != 1 || h.syncer.statusFns != 1 {
		t.Errorf("OnTerminated calls, PodStatusFunc calls = %d, %d, want 1, 1", completed, h.syncer.statusFns)
	}
	// A kill of a pod that is already terminated completes at once.
	again := 0
	h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodKill, Pod: pod, KillPodOptions: &KillPodOptions{OnTerminated: func() { again++ }}})
	if again != 1 {
		t.Errorf("OnTerminated calls for a terminated pod = %d, want 1 at once", again)
	}
	h.drain()
	want := map[types.UID][]syncRecord{"12345678": {
		{Name: "test", UpdateType: SyncPodKill, Grace: int64p(1)},
		{Name: "test", Terminated: true},
	}}
	if diff := cmp.Diff(want, h.syncer.processed); diff != "" {
		t.Errorf("processed (-want +got):\n%s", diff)
	}
	// A finished worker ignores every update, so, as the kubelet never closes CompletedCh then, the
	// callback is never called.
	late := 0
	h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodKill, Pod: pod, KillPodOptions: &KillPodOptions{OnTerminated: func() { late++ }}})
	if late != 0 {
		t.Errorf("OnTerminated calls for a finished pod = %d, want 0", late)
	}
}

// TestOnTerminatedOnceWhenStepAlsoSyncs checks that a Step which completes a termination and then
// runs another pod's sync calls the terminated pod's OnTerminated exactly once.
func TestOnTerminatedOnceWhenStepAlsoSyncs(t *testing.T) {
	h := newHarness(t)
	h.syncer.result = func(fn string, uid types.UID) (Result, error) {
		if fn == "SyncTerminatingPod" {
			return Result{Done: h.clock.Now().Add(5 * time.Second)}, nil
		}
		return Result{}, nil
	}
	completed := 0
	h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodKill, Pod: newNamedPod("a", "ns", "a", false),
		KillPodOptions: &KillPodOptions{OnTerminated: func() { completed++ }}})
	h.clock.Advance(time.Second)
	h.w.Step(context.Background())
	done, ok := h.w.NextWake()
	if !ok {
		t.Fatal("NextWake() = _, false, want the end of SyncTerminatingPod")
	}
	h.clock.Set(done)
	h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodCreate, Pod: newNamedPod("b", "ns", "b", false)})
	h.w.Step(context.Background())
	if diff := cmp.Diff([]syncRecord{{Name: "b", UpdateType: SyncPodCreate}}, h.syncer.processed["b"]); diff != "" {
		t.Errorf("processed[b] (-want +got):\n%s", diff)
	}
	if completed != 1 {
		t.Errorf("OnTerminated calls = %d, want 1", completed)
	}
}

func TestCalculateEffectiveGracePeriod(t *testing.T) {
	tests := []struct {
		name     string
		deletion *int64
		override *int64
		want     int64
	}{
		{name: "use termination grace period from the spec when no overrides", want: 30},
		{name: "use pod DeletionGracePeriodSeconds when set", deletion: int64p(5), want: 5},
		{name: "use grace period override when set", deletion: int64p(5), override: int64p(2), want: 2},
		{name: "use 1 when pod DeletionGracePeriodSeconds is zero", deletion: int64p(0), want: 1},
		{name: "use 1 when grace period override is zero", deletion: int64p(5), override: int64p(0), want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := newNamedPod("1", "ns", "running-pod", false)
			pod.DeletionGracePeriodSeconds = tt.deletion
			got, shortened := effectiveGracePeriod(0, pod, &KillPodOptions{PodTerminationGracePeriodSecondsOverride: tt.override})
			if got != tt.want || shortened {
				t.Errorf("effectiveGracePeriod(0, pod, override) = %d, %v, want %d, false", got, shortened, tt.want)
			}
		})
	}
	// Grace periods only go down, and a change of a set value is a shortening.
	pod := newNamedPod("1", "ns", "running-pod", false)
	if got, shortened := effectiveGracePeriod(30, pod, &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(45)}); got != 30 || shortened {
		t.Errorf("effectiveGracePeriod(30, pod, 45) = %d, %v, want 30, false", got, shortened)
	}
	if got, shortened := effectiveGracePeriod(30, pod, &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(5)}); got != 5 || !shortened {
		t.Errorf("effectiveGracePeriod(30, pod, 5) = %d, %v, want 5, true", got, shortened)
	}
	if got, _ := effectiveGracePeriod(0, &v1.Pod{}, nil); got != 1 {
		t.Errorf("effectiveGracePeriod(0, pod without spec grace, nil) = %d, want 1", got)
	}
}
