package podworkers

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

// TestViews follows one worker through what Views shows of it: a pending create, the taken
// update waiting for the cache, SyncPod in progress until its work ends, and idle again.
func TestViews(t *testing.T) {
	h := newHarness(t)
	h.syncer.result = func(fn string, uid types.UID) (Result, error) {
		return Result{Done: h.clock.Now().Add(3 * time.Second)}, nil
	}
	pod := newNamedPod("uid-1", "ns", "web", false)
	h.hold(pod.UID)
	h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod})
	h.cache.blocked[pod.UID] = true
	view := func() View {
		t.Helper()
		vs := h.w.Views()
		if len(vs) != 1 {
			t.Fatalf("Views() = %v, want one worker", vs)
		}
		return vs[0]
	}
	steps := []struct {
		name string
		do   func()
		want View
	}{
		{"a pending create", func() {}, View{UID: "uid-1", Pod: "ns/web", State: Sync, Pending: "create"}},
		{"taken, waiting for the cache", func() { h.release(pod.UID); h.w.Step(context.Background()) },
			View{UID: "uid-1", Pod: "ns/web", State: Sync, Sync: "SyncPod", SyncOp: "create", WaitsForCache: true}},
		{"SyncPod in progress", func() { delete(h.cache.blocked, pod.UID); h.clock.Advance(time.Second); h.w.Step(context.Background()) },
			View{UID: "uid-1", Pod: "ns/web", State: Sync, Sync: "SyncPod", SyncOp: "create", Until: unix(5)}},
		{"idle once the work ended", func() { h.clock.Advance(3 * time.Second); h.w.Step(context.Background()) },
			View{UID: "uid-1", Pod: "ns/web", State: Sync}},
	}
	for _, st := range steps {
		st.do()
		if diff := cmp.Diff(st.want, view()); diff != "" {
			t.Errorf("%s: Views() mismatch (-want +got):\n%s", st.name, diff)
		}
	}
	if got := newHarness(t).w.Views(); len(got) != 0 {
		t.Errorf("Views() of new Workers = %v, want none", got)
	}
}
