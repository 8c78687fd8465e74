package syncloop

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/podconfig"
)

// fakeResizer logs the allocation manager's calls and asks for a sync of the pod it was given.
// pending is what HasPendingResizes answers; RequestsShrank answers shrank of the pod's name.
type fakeResizer struct {
	log     *calls
	next    time.Time
	pod     *v1.Pod
	pending bool
	shrank  map[string]bool
}

func (r *fakeResizer) HasPendingResizes() bool { return r.pending }
func (r *fakeResizer) RequestsShrank(old, pod *v1.Pod) bool {
	r.log.add("resizes.RequestsShrank old=%s %s", old.Name, pod.Name)
	return r.shrank[pod.Name]
}

func (r *fakeResizer) HandlePodUpdate(_ context.Context, old, pod *v1.Pod) []*v1.Pod {
	r.log.add("resizes.HandlePodUpdate old=%v %s", old != nil, pod.Name)
	return []*v1.Pod{pod}
}
func (r *fakeResizer) HandlePodAdditions(_ context.Context, pods []*v1.Pod) []*v1.Pod {
	r.log.add("resizes.HandlePodAdditions pods=%d", len(pods))
	return nil
}
func (r *fakeResizer) RemovePod(uid types.UID) { r.log.add("resizes.RemovePod %s", uid) }
func (r *fakeResizer) RetryPendingResizes(context.Context) []*v1.Pod {
	r.log.add("resizes.RetryPendingResizes")
	return nil
}
func (r *fakeResizer) Advance(context.Context) []*v1.Pod {
	r.log.add("resizes.Advance")
	return []*v1.Pod{r.pod}
}
func (r *fakeResizer) NextWake() (time.Time, bool) { return r.next, !r.next.IsZero() }

// TestResizes: HandlePodUpdates hands each updated pod, with the one it replaces, to the allocation
// manager and syncs what it returns before the update itself; HandlePodRemoves forgets each
// allocation, then retries the pending resizes once; the retry timer is advanced before the pod
// workers and counts in NextWake.
func TestResizes(t *testing.T) {
	r := &fakeResizer{}
	f := newFixture(t, func(o *Options) { o.Resizes = r })
	r.log = f.log
	web := pod("web")
	f.pods.pods[web.UID] = web
	ctx := context.Background()
	if err := f.loop.Step(ctx, ConfigUpdate{podconfig.Update{Op: podconfig.UPDATE, Source: "api", Pods: []*v1.Pod{web}}}); err != nil {
		t.Fatal(err)
	}
	if err := f.loop.Step(ctx, ConfigUpdate{podconfig.Update{Op: podconfig.REMOVE, Source: "api", Pods: []*v1.Pod{web}}}); err != nil {
		t.Fatal(err)
	}
	want := calls{
		"pods.UpdatePod web", "resizes.HandlePodUpdate old=true web", "workers.UpdatePod sync web", "workers.UpdatePod update web",
		"pods.RemovePod web", "resizes.RemovePod " + string(web.UID), "workers.UpdatePod kill web", "resizes.RetryPendingResizes",
	}
	if diff := cmp.Diff(want, *f.log); diff != "" {
		t.Errorf("calls mismatch (-want +got):\n%s", diff)
	}

	r.next, r.pod = f.clk.Now().Add(time.Minute), web
	if at, _ := f.loop.NextWake(); !at.Equal(f.clk.Now().Add(time.Second)) {
		t.Errorf("NextWake() = %v, want the PLEG's relist first", at)
	}
	f.clk.Set(r.next)
	*f.log = nil
	if err := f.loop.Advance(ctx); err != nil {
		t.Fatal(err)
	}
	got := *f.log
	i := indexOf(got, "resizes.Advance")
	if i < 0 || i+1 >= len(got) || got[i+1] != "workers.UpdatePod sync web" || indexOf(got, "workers.Step") < i {
		t.Errorf("Advance calls = %v, want resizes.Advance, its pod synced, then workers.Step", got)
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// refuse is an Admitter that refuses the pods named in it.
type refuse map[string]bool

func (r refuse) Admit(_ context.Context, pod *v1.Pod) bool { return !r[pod.Name] }

// TestResizesAfterAdditions: HandlePodAdditions hands the allocation manager the update's pods
// once every pod was added and its worker told (refused ones included: their resize conditions
// are taken in too), and syncs what it returns.
func TestResizesAfterAdditions(t *testing.T) {
	r := &fakeResizer{}
	f := newFixture(t, func(o *Options) { o.Resizes, o.Admit = r, refuse{"db": true} })
	r.log = f.log
	web, db := pod("web"), pod("db")
	ctx := context.Background()
	if err := f.loop.Step(ctx, ConfigUpdate{podconfig.Update{Op: podconfig.ADD, Source: "api", Pods: []*v1.Pod{web, db}}}); err != nil {
		t.Fatal(err)
	}
	want := calls{"pods.AddPod web", "workers.UpdatePod create web", "pods.AddPod db", "resizes.HandlePodAdditions pods=2"}
	if diff := cmp.Diff(want, *f.log); diff != "" {
		t.Errorf("calls mismatch (-want +got):\n%s", diff)
	}
}

// TestResizesAfterReconcile: HandlePodReconcile asks, while a resize is pending, whether each pod
// that the pod manager held before shrank its requests, until one did, and then retries the
// pending resizes once, after every pod of the update was recorded.
func TestResizesAfterReconcile(t *testing.T) {
	tests := []struct {
		name    string
		pending bool
		shrank  map[string]bool
		want    calls
	}{{
		name: "no pending resize",
		want: calls{"pods.UpdatePod web", "pods.UpdatePod db", "pods.UpdatePod new"},
	}, {
		name:    "pending, nothing shrank",
		pending: true,
		want: calls{"pods.UpdatePod web", "resizes.RequestsShrank old=web web", "pods.UpdatePod db",
			"resizes.RequestsShrank old=db db", "pods.UpdatePod new"},
	}, {
		name:    "pending, the first pod shrank",
		pending: true,
		shrank:  map[string]bool{"web": true},
		want: calls{"pods.UpdatePod web", "resizes.RequestsShrank old=web web", "pods.UpdatePod db", "pods.UpdatePod new",
			"resizes.RetryPendingResizes"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &fakeResizer{pending: tt.pending, shrank: tt.shrank}
			f := newFixture(t, func(o *Options) { o.Resizes = r })
			r.log = f.log
			web, db, added := pod("web"), pod("db"), pod("new")
			f.pods.pods[web.UID], f.pods.pods[db.UID] = web, db // "new" is not in the pod manager
			err := f.loop.Step(context.Background(), ConfigUpdate{podconfig.Update{Op: podconfig.RECONCILE, Source: "api", Pods: []*v1.Pod{web, db, added}}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *f.log); diff != "" {
				t.Errorf("calls mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
