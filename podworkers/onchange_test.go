package podworkers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestOnChange checks that OnChange reports every state transition the trace shows, in the same
// order, from a worker's creation to its removal by SyncKnownPods.
func TestOnChange(t *testing.T) {
	h := newHarness(t)
	var got []string
	h.w.OnChange(func(uid types.UID) { got = append(got, string(uid)) })
	pod := newNamedPod("1", "ns", "running-pod", false)
	other := newNamedPod("2", "ns", "other-pod", false)
	h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod})
	h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: other})
	h.drain()
	h.update(UpdateOptions{UpdateType: SyncPodKill, Pod: pod})
	h.drain()
	h.w.SyncKnownPods(nil) // forgets the finished worker, starts terminating the orphan
	h.drain()
	var want []string
	for _, e := range h.events {
		if e.Event == trace.KindState {
			want = append(want, e.UID)
		}
	}
	if len(want) < 6 {
		t.Fatalf("only %d state transitions traced: %v", len(want), want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OnChange calls (-traced transitions +got):\n%s", diff)
	}
}
