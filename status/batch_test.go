package status

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestFullBatchWithNothingToWrite checks that a full batch of a node whose statuses are all
// written, and whose pod manager holds what was written, picks nothing and allocates nothing
// (every node makes one every 10s), and that a status changed since, or a pod manager copy that
// differs, is still picked, alone.
func TestFullBatchWithNothingToWrite(t *testing.T) {
	var pods []*v1.Pod
	for i := range 3 {
		pods = append(pods, apiPod(fmt.Sprintf("web-%d", i), types.UID(fmt.Sprintf("uid-%d", i))))
	}
	for _, tc := range []struct {
		name   string
		change func(e *env)
		want   []types.UID
	}{
		{"nothing changed", func(*env) {}, nil},
		{"a status changed", func(e *env) {
			s := runningStatus(pods[1], e.clock.Now())
			s.Phase = v1.PodSucceeded
			e.m.SetPodStatus(pods[1], s)
		}, []types.UID{"uid-1"}},
		{"the pod manager's copy differs", func(e *env) {
			stale := pods[2].DeepCopy()
			stale.Status = v1.PodStatus{Phase: v1.PodPending}
			e.pods.add(stale)
		}, []types.UID{"uid-2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, couldRun(true), pods...)
			for _, p := range pods {
				e.pods.add(p)
				e.m.SetPodStatus(p, runningStatus(p, e.clock.Now()))
			}
			e.step(t)
			// The pod manager learns what was written, as the API watch tells it.
			for _, p := range pods {
				e.pods.add(e.apiPod(t, p.Namespace, p.Name))
			}
			if got := e.m.collect(true); len(got) != 0 {
				t.Fatalf("full batch after every status was written picks %d", len(got))
			}
			if n := testing.AllocsPerRun(100, func() { e.m.collect(true) }); n != 0 {
				t.Errorf("full batch with nothing to write: %v allocations, want 0", n)
			}
			tc.change(e)
			var got []types.UID
			for _, w := range e.m.collect(true) {
				got = append(got, w.uid)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("full batch picks (-want +got):\n%s", diff)
			}
			if !slices.IsSorted(got) {
				t.Errorf("full batch picks %v, want them in name order", got)
			}
		})
	}
}
