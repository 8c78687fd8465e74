package podworkers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestStaticPodExclusion ports the kubelet's test step by step. Every pod has the full name
// pod1_test1; "N-static" pods are static and "1-normal" is an API pod.
func TestStaticPodExclusion(t *testing.T) {
	h := newHarness(t)
	pod := func(uid string) *v1.Pod {
		return newNamedPod(uid, "test1", "pod1", uid != "1-normal")
	}
	update := func(uid string) { h.update(UpdateOptions{UpdateType: SyncPodUpdate, Pod: pod(uid)}) }
	kill := func(uid string) { h.update(UpdateOptions{UpdateType: SyncPodKill, Pod: pod(uid)}) }
	const fullname = "pod1_test1"
	checkSlots := func(step int, wantStarted map[string]types.UID, wantWaiting map[string][]types.UID) {
		t.Helper()
		if diff := cmp.Diff(wantStarted, h.started()); diff != "" {
			t.Errorf("step %d: started static pods (-want +got):\n%s", step, diff)
		}
		if diff := cmp.Diff(wantWaiting, h.waiting()); diff != "" {
			t.Errorf("step %d: waiting static pods (-want +got):\n%s", step, diff)
		}
	}
	checkTerminated := func(step int, want map[types.UID]bool) {
		t.Helper()
		for uid, w := range want {
			if got := h.w.IsPodKnownTerminated(uid); got != w {
				t.Errorf("step %d: IsPodKnownTerminated(%s) = %v, want %v", step, uid, got, w)
			}
		}
	}
	updateRecord := []syncRecord{{Name: "pod1", UpdateType: SyncPodUpdate}}

	// 1
	update("1-normal")
	update("2-static")
	h.drain()
	checkTerminated(1, map[types.UID]bool{"1-normal": false, "2-static": false})
	if len(h.syncer.processed) != 2 {
		t.Errorf("step 1: len(processed) = %d, want 2", len(h.syncer.processed))
	}
	if diff := cmp.Diff(updateRecord, h.syncer.processed["2-static"]); diff != "" {
		t.Errorf("step 1: processed[2-static] (-want +got):\n%s", diff)
	}
	checkSlots(1, map[string]types.UID{fullname: "2-static"}, map[string][]types.UID{})

	// 2
	update("3-static")
	update("4-static")
	h.drain()
	checkTerminated(2, map[types.UID]bool{"1-normal": false, "2-static": false, "3-static": false, "4-static": false})
	if len(h.syncer.processed) != 2 || h.syncer.processed["3-static"] != nil || h.syncer.processed["4-static"] != nil {
		t.Errorf("step 2: processed = %v, want only 1-normal and 2-static", h.syncer.processed)
	}
	checkSlots(2, map[string]types.UID{fullname: "2-static"}, map[string][]types.UID{fullname: {"3-static", "4-static"}})
	if diff := cmp.Diff([]types.UID{"1-normal", "2-static", "3-static", "4-static"}, h.queue.GetWork()); diff != "" {
		t.Errorf("step 2: queued UIDs (-want +got):\n%s", diff)
	}

	// 3
	update("3-static")
	h.drain()
	checkSlots(3, map[string]types.UID{fullname: "2-static"}, map[string][]types.UID{fullname: {"3-static", "4-static"}})
	if diff := cmp.Diff([]types.UID{"3-static"}, h.queue.GetWork()); diff != "" {
		t.Errorf("step 3: queued UIDs (-want +got):\n%s", diff)
	}

	// 4
	kill("3-static")
	h.drain()
	checkTerminated(4, map[types.UID]bool{"3-static": true})
	if got := h.queue.GetWork(); len(got) != 0 {
		t.Errorf("step 4: queued UIDs = %v, want none", got)
	}
	checkSlots(4, map[string]types.UID{fullname: "2-static"}, map[string][]types.UID{fullname: {"3-static", "4-static"}})

	// 5
	kill("2-static")
	h.drain()
	checkTerminated(5, map[types.UID]bool{"2-static": true})
	checkSlots(5, map[string]types.UID{}, map[string][]types.UID{fullname: {"3-static", "4-static"}})

	// 6
	update("4-static")
	h.drain()
	checkTerminated(6, map[types.UID]bool{"4-static": false})
	checkSlots(6, map[string]types.UID{fullname: "4-static"}, map[string][]types.UID{})

	// 7
	got := h.w.SyncKnownPods([]*v1.Pod{pod("1-normal"), pod("2-static"), pod("3-static"), pod("4-static")})
	h.drain()
	want := map[types.UID]PodWorkerSync{
		"1-normal": {State: Sync, HasConfig: true},
		"2-static": {State: Terminated, HasConfig: true, Static: true},
		"3-static": {State: Terminated},
		"4-static": {State: Sync, HasConfig: true, Static: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("step 7: SyncKnownPods (-want +got):\n%s", diff)
	}
	if s := h.snapshot("3-static"); s == nil || s.State != Finished || s.Terminated.IsZero() || s.Signal {
		t.Errorf("step 7: worker 3-static = %+v, want finished with terminatedAt set and idle", s)
	}

	// 8
	got = h.w.SyncKnownPods([]*v1.Pod{pod("1-normal"), pod("2-static"), pod("4-static")})
	h.drain()
	delete(want, "3-static")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("step 8: SyncKnownPods (-want +got):\n%s", diff)
	}
	if st, ok := h.w.State("3-static"); ok {
		t.Errorf("step 8: State(3-static) = %v, true, want forgotten", st)
	}

	// 9
	update("5-static")
	h.drain()
	h.hold("5-static")
	kill("5-static")
	update("6-static")
	h.drain()
	if !h.w.IsPodTerminationRequested("5-static") || h.w.IsPodKnownTerminated("5-static") {
		t.Errorf("step 9: 5-static requested, terminated = %v, %v, want true, false",
			h.w.IsPodTerminationRequested("5-static"), h.w.IsPodKnownTerminated("5-static"))
	}
	checkSlots(9, map[string]types.UID{fullname: "4-static"}, map[string][]types.UID{fullname: {"5-static", "6-static"}})

	// 10
	kill("4-static")
	h.drain()
	update("6-static")
	h.drain()
	if !h.w.IsPodTerminationRequested("5-static") || h.w.IsPodKnownTerminated("5-static") {
		t.Errorf("step 10: 5-static requested, terminated = %v, %v, want true, false",
			h.w.IsPodTerminationRequested("5-static"), h.w.IsPodKnownTerminated("5-static"))
	}
	checkSlots(10, map[string]types.UID{fullname: "6-static"}, map[string][]types.UID{})
	if diff := cmp.Diff(updateRecord, h.syncer.processed["6-static"]); diff != "" {
		t.Errorf("step 10: processed[6-static] (-want +got):\n%s", diff)
	}

	// 11
	h.release("5-static")
	h.drain()
	checkTerminated(11, map[types.UID]bool{"5-static": true})

	// 12
	update("7-static")
	update("8-static")
	update("9-static")
	h.drain()
	kill("6-static")
	h.drain()
	h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod("6-static")})
	h.drain()
	update("8-static")
	h.drain()
	if s := h.snapshot("6-static"); s == nil || !s.RestartRequested {
		t.Errorf("step 12: worker 6-static = %+v, want restartRequested", s)
	}
	checkSlots(12, map[string]types.UID{}, map[string][]types.UID{fullname: {"7-static", "8-static", "9-static"}})
	for _, uid := range []types.UID{"7-static", "8-static", "9-static"} {
		if h.syncer.processed[uid] != nil {
			t.Errorf("step 12: processed[%s] = %v, want nil", uid, h.syncer.processed[uid])
		}
	}

	// 13
	kill("7-static")
	h.drain()
	update("8-static")
	h.drain()
	if diff := cmp.Diff(updateRecord, h.syncer.processed["8-static"]); diff != "" {
		t.Errorf("step 13: processed[8-static] (-want +got):\n%s", diff)
	}

	// 14
	got = h.w.SyncKnownPods([]*v1.Pod{pod("8-static")})
	h.drain()
	want = map[types.UID]PodWorkerSync{
		"1-normal": {State: Terminating, Orphan: true, HasConfig: true},
		"8-static": {State: Sync, HasConfig: true, Static: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("step 14: SyncKnownPods (-want +got):\n%s", diff)
	}
}

// TestAllowPodStart ports the kubelet's Test_allowPodStart table.
func TestAllowPodStart(t *testing.T) {
	status := func(fullname string, terminating, terminated bool) *podStatus {
		s := &podStatus{fullname: fullname, state: Sync}
		if terminating {
			s.state = Terminating
		}
		if terminated {
			s.state = Terminated
		}
		return s
	}
	tests := []struct {
		name          string
		pod           *v1.Pod
		statuses      map[types.UID]*podStatus
		started       map[string]types.UID
		waiting       map[string][]types.UID
		wantStart     bool
		wantEverStart bool
		wantStarted   map[string]types.UID
		wantWaiting   map[string][]types.UID
	}{
		{
			name:      "non-static pod",
			pod:       newNamedPod("uid-0", "ns", "test", false),
			statuses:  map[types.UID]*podStatus{"uid-0": status("test_", false, false), "uid-1": status("test_", false, false)},
			wantStart: true, wantEverStart: true,
		},
		{
			name:      "non-static pod when there is a started static pod with the same full name",
			pod:       newNamedPod("uid-0", "ns", "test", false),
			statuses:  map[types.UID]*podStatus{"uid-0": status("test_", false, false), "uid-1": status("test_", false, false)},
			started:   map[string]types.UID{"test_": "uid-1"},
			wantStart: true, wantEverStart: true,
			wantStarted: map[string]types.UID{"test_": "uid-1"},
		},
		{
			name:      "static pod when there is a started non-static pod with the same full name",
			pod:       newNamedPod("uid-0", "ns", "test", false),
			statuses:  map[types.UID]*podStatus{"uid-0": status("test_", false, false), "uid-1": status("test_", false, false)},
			wantStart: true, wantEverStart: true,
		},
		{
			name:      "static pod when there are no started static pods with the same full name",
			pod:       newStaticPod("uid-0", "foo"),
			statuses:  map[types.UID]*podStatus{"uid-0": status("foo_", false, false), "uid-1": status("bar_", false, false)},
			started:   map[string]types.UID{"bar_": "uid-1"},
			wantStart: true, wantEverStart: true,
			wantStarted: map[string]types.UID{"foo_": "uid-0", "bar_": "uid-1"},
		},
		{
			name:      "static pod when there is a started static pod with the same full name",
			pod:       newStaticPod("uid-0", "foo"),
			statuses:  map[types.UID]*podStatus{"uid-0": status("foo_", false, false), "uid-1": status("foo_", false, false)},
			started:   map[string]types.UID{"foo_": "uid-1"},
			wantStart: false, wantEverStart: true,
			wantStarted: map[string]types.UID{"foo_": "uid-1"},
		},
		{
			name:      "static pod if the static pod has already started",
			pod:       newStaticPod("uid-0", "foo"),
			statuses:  map[types.UID]*podStatus{"uid-0": status("foo_", false, false)},
			started:   map[string]types.UID{"foo_": "uid-0"},
			wantStart: true, wantEverStart: true,
			wantStarted: map[string]types.UID{"foo_": "uid-0"},
		},
		{
			name:      "static pod if the static pod is the first pod waiting to start",
			pod:       newStaticPod("uid-0", "foo"),
			statuses:  map[types.UID]*podStatus{"uid-0": status("foo_", false, false)},
			waiting:   map[string][]types.UID{"foo_": {"uid-0"}},
			wantStart: true, wantEverStart: true,
			wantStarted: map[string]types.UID{"foo_": "uid-0"},
		},
		{
			name:      "static pod if the static pod is not the first pod waiting to start",
			pod:       newStaticPod("uid-0", "foo"),
			statuses:  map[types.UID]*podStatus{"uid-0": status("foo_", false, false), "uid-1": status("foo_", false, false)},
			waiting:   map[string][]types.UID{"foo_": {"uid-1", "uid-0"}},
			wantStart: false, wantEverStart: true,
			wantWaiting: map[string][]types.UID{"foo_": {"uid-1", "uid-0"}},
		},
		{
			name:      "static pod if the static pod is the first valid pod waiting to start and clean up until picking the first valid pod",
			pod:       newStaticPod("uid-0", "foo"),
			statuses:  map[types.UID]*podStatus{"uid-0": status("foo_", false, false), "uid-1": status("foo_", false, false)},
			waiting:   map[string][]types.UID{"foo_": {"uid-2", "uid-2", "uid-3", "uid-0", "uid-1"}},
			wantStart: true, wantEverStart: true,
			wantStarted: map[string]types.UID{"foo_": "uid-0"},
			wantWaiting: map[string][]types.UID{"foo_": {"uid-1"}},
		},
		{
			name: "static pod if the static pod is the first pod that is not termination requested and waiting to start",
			pod:  newStaticPod("uid-0", "foo"),
			statuses: map[types.UID]*podStatus{
				"uid-0": status("foo_", false, false), "uid-1": status("foo_", false, false),
				"uid-2": status("foo_", true, false), "uid-3": status("foo_", true, true),
			},
			waiting:   map[string][]types.UID{"foo_": {"uid-2", "uid-3", "uid-0", "uid-1"}},
			wantStart: true, wantEverStart: true,
			wantStarted: map[string]types.UID{"foo_": "uid-0"},
			wantWaiting: map[string][]types.UID{"foo_": {"uid-1"}},
		},
		{
			name:      "static pod if there is no sync status for the pod should be denied",
			pod:       newStaticPod("uid-0", "foo"),
			statuses:  map[types.UID]*podStatus{"uid-1": status("foo_", false, false), "uid-2": status("foo_", true, false)},
			waiting:   map[string][]types.UID{"foo_": {"uid-1"}},
			wantStart: false, wantEverStart: false,
			wantWaiting: map[string][]types.UID{"foo_": {"uid-1"}},
		},
		{
			name:      "static pod if the static pod is terminated should not be allowed",
			pod:       newStaticPod("uid-0", "foo"),
			statuses:  map[types.UID]*podStatus{"uid-0": status("foo_", true, false)},
			waiting:   map[string][]types.UID{"foo_": {"uid-2", "uid-3", "uid-0", "uid-1"}},
			wantStart: false, wantEverStart: false,
			wantWaiting: map[string][]types.UID{"foo_": {"uid-2", "uid-3", "uid-0", "uid-1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			for uid, s := range tt.statuses {
				s.uid = uid
				h.w.pods[uid] = s
			}
			for k, v := range tt.started {
				h.w.startedStatic[k] = v
			}
			for k, v := range tt.waiting {
				h.w.waitingStatic[k] = v
			}
			canStart, canEverStart := h.w.allowPodStart(h.w.pods[tt.pod.UID], tt.pod)
			if canStart != tt.wantStart || canEverStart != tt.wantEverStart {
				t.Errorf("allowPodStart() = %v, %v, want %v, %v", canStart, canEverStart, tt.wantStart, tt.wantEverStart)
			}
			wantStarted, wantWaiting := tt.wantStarted, tt.wantWaiting
			if wantStarted == nil {
				wantStarted = map[string]types.UID{}
			}
			if wantWaiting == nil {
				wantWaiting = map[string][]types.UID{}
			}
			if diff := cmp.Diff(wantStarted, h.started()); diff != "" {
				t.Errorf("started static pods (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantWaiting, h.waiting()); diff != "" {
				t.Errorf("waiting static pods (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStaticWaitingSlot checks the waiting list that the first static pod of a full name keeps in
// its worker's slot: a second pod of that name waiting behind it gets a list of its own (the
// first's slot still holds the first's UID alone), and the first worker's key and full name are
// the pod's.
func TestStaticWaitingSlot(t *testing.T) {
	h := newHarness(t)
	first := newNamedPod("a-static", "ns", "web", true)
	second := newNamedPod("b-static", "ns", "web", true)
	// Without a drain neither has started: both wait, in the order of their first update.
	h.update(UpdateOptions{UpdateType: SyncPodUpdate, Pod: first})
	s := h.w.pods["a-static"]
	if s.key != "ns/web" || s.fullname != "web_ns" {
		t.Fatalf("key, full name = %q, %q, want ns/web, web_ns", s.key, s.fullname)
	}
	if got := h.w.waitingStatic["web_ns"]; len(got) != 1 || &got[0] != &s.waitingSlot[0] {
		t.Fatalf("waiting list of the first pod = %v, want its worker's slot", got)
	}
	h.update(UpdateOptions{UpdateType: SyncPodUpdate, Pod: second})
	if diff := cmp.Diff([]types.UID{"a-static", "b-static"}, h.w.waitingStatic["web_ns"]); diff != "" {
		t.Errorf("waiting (-want +got):\n%s", diff)
	}
	if s.waitingSlot != [1]types.UID{"a-static"} {
		t.Errorf("first worker's slot = %v, want a-static alone", s.waitingSlot)
	}
	h.drain()
	checkStarted := map[string]types.UID{"web_ns": "a-static"}
	if diff := cmp.Diff(checkStarted, h.started()); diff != "" {
		t.Errorf("started (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][]types.UID{"web_ns": {"b-static"}}, h.waiting()); diff != "" {
		t.Errorf("waiting after the drain (-want +got):\n%s", diff)
	}
}

// A forgotten worker whose slot backed its full name's waiting list must not stay reachable
// through the list: the stale UID stays (as in the kubelet), in an array of its own.
func TestForgottenWorkerLeavesTheWaitingList(t *testing.T) {
	h := newHarness(t)
	pod := func(uid string) *v1.Pod { return newNamedPod(uid, "ns", "web", true) }
	h.update(UpdateOptions{UpdateType: SyncPodUpdate, Pod: pod("a")})
	h.drain()
	h.update(UpdateOptions{UpdateType: SyncPodUpdate, Pod: pod("b")})
	h.drain()
	b := h.w.pods["b"]
	h.update(UpdateOptions{UpdateType: SyncPodKill, Pod: pod("b")})
	h.drain()
	h.update(UpdateOptions{UpdateType: SyncPodKill, Pod: pod("a")})
	h.drain()
	h.w.SyncKnownPods(nil)
	h.drain()
	h.w.SyncKnownPods(nil)
	if len(h.w.pods) != 0 {
		t.Fatalf("workers left: %d", len(h.w.pods))
	}
	l := h.w.waitingStatic["web_ns"]
	if len(l) > 0 && &l[0] == &b.waitingSlot[0] {
		t.Errorf("waiting list %v is the forgotten worker b's own slot: b stays reachable", l)
	}
	if len(l) != 1 || l[0] != "b" {
		t.Errorf("waiting list = %v, want the stale [b] the kubelet keeps", l)
	}
}

// mergeLastUpdate accumulates into the worker's own buffer: each worker's accumulated update is
// its own (two workers never share one), it keeps the pod until a running pod alone is handed,
// keeps the last mirror pod, and copies the kill options rather than holding the caller's.
func TestMergeLastUpdateAccumulatesPerWorker(t *testing.T) {
	podA, podB := newNamedPod("a", "ns", "a", false), newNamedPod("b", "ns", "b", false)
	mirror := newNamedPod("m", "ns", "a", false)
	grace := int64(5)
	kill := &KillPodOptions{PodTerminationGracePeriodSecondsOverride: &grace}
	var a, b podStatus
	a.mergeLastUpdate(UpdateOptions{Pod: podA, MirrorPod: mirror})
	b.mergeLastUpdate(UpdateOptions{Pod: podB})
	a.mergeLastUpdate(UpdateOptions{Pod: podA, KillPodOptions: kill})
	if a.active == b.active || a.active != &a.activeBuf || b.active != &b.activeBuf {
		t.Fatalf("accumulated updates are not each worker's own: a=%p b=%p", a.active, b.active)
	}
	if a.active.Pod != podA || a.active.MirrorPod != mirror || b.active.Pod != podB || b.active.MirrorPod != nil {
		t.Errorf("accumulated pods: a=(%v, %v) b=(%v, %v)", a.active.Pod.Name, a.active.MirrorPod, b.active.Pod.Name, b.active.MirrorPod)
	}
	k := a.active.KillPodOptions
	if k == nil || k == kill || k.PodTerminationGracePeriodSecondsOverride == &grace || *k.PodTerminationGracePeriodSecondsOverride != 5 {
		t.Errorf("kill options = %+v, want a copy of %+v", k, kill)
	}
	// A pending copy of the accumulated update is a value: merging more leaves it as it was.
	pending := *a.active
	a.mergeLastUpdate(UpdateOptions{Pod: podB})
	if pending.Pod != podA || a.active.Pod != podB {
		t.Errorf("after a later merge: pending pod %s, accumulated %s", pending.Pod.Name, a.active.Pod.Name)
	}
}
