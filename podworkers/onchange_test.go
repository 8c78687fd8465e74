package podworkers

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestOnChange checks that OnChange reports, in the order the trace shows them, every state
// transition from a worker's creation to its removal by SyncKnownPods, and besides them exactly
// the other moves of what ShouldPodContainersBeTerminating and ShouldPodRuntimeBeRemoved answer:
// a pod that starts terminating, and the first SyncKnownPods (the empty UID: every unknown pod);
// nothing at a sync that changes neither.
func TestOnChange(t *testing.T) {
	h := newHarness(t)
	var got []string
	h.w.OnChange(func(uid types.UID) { got = append(got, string(uid)) })
	pod := newNamedPod("1", "ns", "running-pod", false)
	other := newNamedPod("2", "ns", "other-pod", false)
	transitions := 0
	step := func(name string, do func(), extra ...string) {
		t.Helper()
		got = got[:0]
		mark := len(h.events)
		do()
		var want []string
		for _, e := range h.events[mark:] {
			if e.Event == trace.KindState {
				want = append(want, e.UID)
			}
		}
		transitions += len(want)
		rest := slices.Clone(got)
		for _, x := range extra {
			i := slices.Index(rest, x)
			if i < 0 {
				t.Errorf("%s: OnChange calls %v, want one for %q besides the transitions", name, got, x)
				continue
			}
			rest = slices.Delete(rest, i, i+1)
		}
		if diff := cmp.Diff(want, rest, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: OnChange calls besides %v (-traced transitions +got):\n%s", name, extra, diff)
		}
	}
	step("create", func() {
		h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod})
		h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: other})
		h.drain()
	})
	step("update", func() { h.update(UpdateOptions{UpdateType: SyncPodUpdate, Pod: pod}); h.drain() })
	if len(got) != 0 {
		t.Errorf("update: OnChange calls %v, want none", got)
	}
	step("first SyncKnownPods", func() { h.w.SyncKnownPods([]*v1.Pod{pod, other}) }, "")
	step("second SyncKnownPods", func() { h.w.SyncKnownPods([]*v1.Pod{pod, other}) })
	if len(got) != 0 {
		t.Errorf("second SyncKnownPods: OnChange calls %v, want none", got)
	}
	step("kill", func() { h.update(UpdateOptions{UpdateType: SyncPodKill, Pod: pod}); h.drain() }, "1")
	if !h.w.ShouldPodContainersBeTerminating(pod.UID) {
		t.Errorf("ShouldPodContainersBeTerminating after the kill = false, want true")
	}
	// Forgets the finished worker, starts terminating the orphan.
	step("orphan", func() { h.w.SyncKnownPods([]*v1.Pod{other}); h.w.SyncKnownPods(nil); h.drain() }, "2")
	if transitions < 6 {
		t.Errorf("only %d state transitions traced", transitions)
	}
}
