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

// countingPods is fakePods counting the lookups a batch makes.
type countingPods struct {
	*fakePods
	lookups int
}

func (p *countingPods) GetPodByUID(uid types.UID) (*v1.Pod, bool) {
	p.lookups++
	return p.fakePods.GetPodByUID(uid)
}

// versionedPods is countingPods with a change number a test moves by hand.
type versionedPods struct {
	*countingPods
	v uint64
}

func (p *versionedPods) Version() uint64 { return p.v }

// TestQuietFullBatch is the table of the full batch's change signals: after a full batch that
// picked nothing, one whose numbers did not move looks at no status, and a change of what a
// batch reads, with its number moved, is picked again; a pod manager without a number never lets
// a batch skip.
func TestQuietFullBatch(t *testing.T) {
	pods := []*v1.Pod{apiPod("web-0", "uid-0"), apiPod("web-1", "uid-1")}
	for _, tc := range []struct {
		name      string
		unversion bool
		change    func(e *env, vp *versionedPods)
		// wantLooked: the batch after the change looks at the statuses; want is what it picks.
		wantLooked bool
		want       []types.UID
	}{
		{name: "nothing changed", change: func(*env, *versionedPods) {}},
		{name: "a status changed", change: func(e *env, _ *versionedPods) {
			s := runningStatus(pods[1], e.clock.Now())
			s.Phase = v1.PodSucceeded
			e.m.SetPodStatus(pods[1], s)
		}, wantLooked: true, want: []types.UID{"uid-1"}},
		{name: "the pod manager's copy changed", change: func(_ *env, vp *versionedPods) {
			stale := pods[0].DeepCopy()
			stale.Status = v1.PodStatus{Phase: v1.PodPending}
			vp.add(stale)
			vp.v++
		}, wantLooked: true, want: []types.UID{"uid-0"}},
		{name: "a version was written", change: func(e *env, _ *versionedPods) {
			e.m.apply(written{apiUID: "uid-0", version: 1})
		}, wantLooked: true},
		{name: "a pod manager without a number", unversion: true, change: func(*env, *versionedPods) {}, wantLooked: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, couldRun(true), pods...)
			vp := &versionedPods{countingPods: &countingPods{fakePods: e.pods}}
			e.m.pods = vp
			if tc.unversion {
				e.m.pods = vp.countingPods
			}
			for _, p := range pods {
				e.pods.add(p)
				e.m.SetPodStatus(p, runningStatus(p, e.clock.Now()))
			}
			e.step(t)
			for _, p := range pods {
				e.pods.add(e.apiPod(t, p.Namespace, p.Name))
			}
			vp.v++ // the pod manager learned the writes
			if got := e.m.collect(true); len(got) != 0 {
				t.Fatalf("first full batch after the writes picks %d, want none", len(got))
			}
			tc.change(e, vp)
			lookups := vp.lookups
			var got []types.UID
			for _, w := range e.m.collect(true) {
				got = append(got, w.uid)
			}
			if looked := vp.lookups > lookups; looked != tc.wantLooked {
				t.Errorf("full batch looked at the statuses = %v, want %v", looked, tc.wantLooked)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("full batch picks (-want +got):\n%s", diff)
			}
		})
	}
}
