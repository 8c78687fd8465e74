package podworkers

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestChanges checks that Changes moves exactly when what ShouldPodContainersBeTerminating or
// ShouldPodRuntimeBeRemoved answers can change: a state transition, a pod that starts
// terminating, the first SyncKnownPods; and not at a sync that changes neither.
func TestChanges(t *testing.T) {
	h := newHarness(t)
	pod := newNamedPod("1", "ns", "web", false)
	step := func(name string, do func(), wantMove bool) {
		t.Helper()
		before := h.w.Changes()
		do()
		if moved := h.w.Changes() != before; moved != wantMove {
			t.Errorf("%s: Changes moved = %t, want %t", name, moved, wantMove)
		}
	}
	step("create", func() { h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod}); h.drain() }, true)
	step("update", func() { h.update(UpdateOptions{UpdateType: SyncPodUpdate, Pod: pod}); h.drain() }, false)
	step("first SyncKnownPods", func() { h.w.SyncKnownPods([]*v1.Pod{pod}) }, true)
	step("second SyncKnownPods", func() { h.w.SyncKnownPods([]*v1.Pod{pod}) }, false)
	step("kill", func() { h.update(UpdateOptions{UpdateType: SyncPodKill, Pod: pod}); h.drain() }, true)
	if !h.w.ShouldPodContainersBeTerminating(pod.UID) {
		t.Errorf("ShouldPodContainersBeTerminating after the kill = false, want true")
	}
}
