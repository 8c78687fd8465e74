package syncloop

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/podmanager"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// mirrorWorkers records, for each update, its type and the UID of the mirror pod it carries.
type mirrorWorkers struct {
	fakeWorkers
	updates []string
}

func (w *mirrorWorkers) UpdatePod(o podworkers.UpdateOptions) {
	mirror := "none"
	if o.MirrorPod != nil {
		mirror = string(o.MirrorPod.UID)
		if o.MirrorPod.DeletionTimestamp != nil {
			mirror += " (deleting)"
		}
	}
	w.updates = append(w.updates, o.UpdateType.String()+" "+o.Pod.Name+" mirror="+mirror)
}

// TestRemovedMirrorPodIsSyncedAgain pins the kubelet's handling of a mirror pod that its static
// pod's SyncPod deleted (kubectl had set its deletionTimestamp) when the watch's REMOVE of it
// arrives before the ADD of the replacement the same sync created. HandlePodRemoves takes the
// static pod and, from GetPodAndMirrorPod, the removed object itself as the mirror: the worker's
// next SyncPod gets the old mirror, deletionTimestamp and all, and tryReconcileMirrorPods deletes
// it a second time with its UID as the precondition (the API server answers Conflict or NotFound).
// v1.35 does the same (HandlePodRemoves, basicManager.GetPodAndMirrorPod); once the ADD is seen,
// the update carries the new mirror instead.
func TestRemovedMirrorPodIsSyncedAgain(t *testing.T) {
	w := &mirrorWorkers{}
	pm, err := podmanager.New(podmanager.Options{Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(o *Options) { o.Pods, o.Workers = pm, w })
	static := podtest.New("web-node-1", podtest.Static("hash-1"))
	mirror := func(uid types.UID) *v1.Pod {
		return podtest.New("web-node-1", podtest.UID(uid), podtest.Source("api"),
			podtest.Annotation(kubecontainer.ConfigMirrorAnnotationKey, "hash-1"))
	}
	old := mirror("mirror-1")
	deleting := old.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: f.clk.Now().Add(30 * time.Second)}
	replacement := mirror("mirror-2")

	ctx := context.Background()
	for _, u := range []podconfig.Update{
		{Op: podconfig.ADD, Source: "file", Pods: []*v1.Pod{static}},
		{Op: podconfig.ADD, Source: "api", Pods: []*v1.Pod{old}},
		{Op: podconfig.DELETE, Source: "api", Pods: []*v1.Pod{deleting}}, // kubectl delete pod
		{Op: podconfig.REMOVE, Source: "api", Pods: []*v1.Pod{deleting}}, // SyncPod deleted it
		{Op: podconfig.ADD, Source: "api", Pods: []*v1.Pod{replacement}}, // and created this one
	} {
		if err := f.loop.Step(ctx, ConfigUpdate{u}); err != nil {
			t.Fatalf("Step(%s) error = %v", u.Op, err)
		}
	}
	want := []string{
		"create web-node-1 mirror=none",
		"update web-node-1 mirror=mirror-1",
		"update web-node-1 mirror=mirror-1 (deleting)",
		// The REMOVE: the removed mirror, still deleting, not "none".
		"update web-node-1 mirror=mirror-1 (deleting)",
		"update web-node-1 mirror=mirror-2",
	}
	if diff := cmp.Diff(want, w.updates); diff != "" {
		t.Errorf("pod worker updates (-want +got):\n%s", diff)
	}
	if got, ok := pm.GetMirrorPodByPod(static); !ok || got.UID != "mirror-2" {
		t.Errorf("GetMirrorPodByPod() = %v, %v; want mirror-2", got, ok)
	}
}

// stepDelivers is a pod worker set whose Step takes long enough for the config updates in
// deliver to arrive meanwhile, as a watch's events arrive during a sync that waits on the API
// server.
type stepDelivers struct {
	fakeWorkers
	updates chan podconfig.Update
	deliver []podconfig.Update
}

func (w *stepDelivers) Step(ctx context.Context) {
	w.fakeWorkers.Step(ctx)
	for _, u := range w.deliver {
		w.updates <- u
	}
	w.deliver = nil
}

// TestAdvanceReadsUpdatesQueuedDuringTheSyncs: a pass of a Runner's Loop hands the sync tick
// the pod manager as of the updates that arrived while the pod workers synced. The kubelet's sync
// loop reads its config channel while the workers sync on their own goroutines; without this
// read the tick synced a pod its source had already removed, and a static pod whose sync deleted
// its mirror pod got the deleted mirror again, and deleted it twice.
func TestAdvanceReadsUpdatesQueuedDuringTheSyncs(t *testing.T) {
	updates := make(chan podconfig.Update, 1)
	var w *stepDelivers
	f := newFixture(t, func(o *Options) {
		w = &stepDelivers{fakeWorkers: *o.Workers.(*fakeWorkers), updates: updates}
		o.Workers = w
	})
	a := pod("a")
	f.pods.pods[a.UID] = a
	f.queue.due = []types.UID{a.UID}
	w.deliver = []podconfig.Update{{Op: podconfig.REMOVE, Source: "file", Pods: []*v1.Pod{a}}}
	if _, err := NewRunner(RunnerOptions{Loop: f.loop, Updates: updates, Clock: clock.RealClock{}}); err != nil {
		t.Fatalf("NewRunner() error = %v", err)
	}
	f.clk.Set(f.clk.Now().Add(2 * time.Second)) // the PLEG and the sync tick are due
	if err := f.loop.Advance(context.Background()); err != nil {
		t.Fatalf("Advance() error = %v", err)
	}
	want := calls{
		"runtime.Advance", "state.Advance", "kills.Advance", "pleg.Relist",
		"workers.Step",
		// The removal that arrived during the syncs, before the sync tick: a is not synced.
		"pods.RemovePod a", "workers.UpdatePod kill a",
		"housekeeping.HandlePodCleanups",
		"status.Step",
	}
	if diff := cmp.Diff(want, *f.log); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestAdvanceReadsUpdatesQueuedBeforeTheRelist: an update that queued while the Runner was not
// reading (during the last pass) is handled before the PLEG's relist resolves its events against
// the pod manager, and one read takes only what was queued when it began.
func TestAdvanceReadsUpdatesQueuedBeforeTheRelist(t *testing.T) {
	updates := make(chan podconfig.Update, 2)
	f := newFixture(t, nil)
	a := pod("a")
	f.pods.pods[a.UID] = a
	if _, err := NewRunner(RunnerOptions{Loop: f.loop, Updates: updates, Clock: clock.RealClock{}}); err != nil {
		t.Fatalf("NewRunner() error = %v", err)
	}
	updates <- podconfig.Update{Op: podconfig.REMOVE, Source: "file", Pods: []*v1.Pod{a}}
	f.clk.Set(f.clk.Now().Add(2 * time.Second)) // the PLEG and the sync tick are due
	if err := f.loop.Advance(context.Background()); err != nil {
		t.Fatalf("Advance() error = %v", err)
	}
	want := calls{
		"runtime.Advance", "state.Advance", "kills.Advance",
		// The removal queued before the pass, before the relist.
		"pods.RemovePod a", "workers.UpdatePod kill a",
		"pleg.Relist",
		"workers.Step",
		"housekeeping.HandlePodCleanups",
		"status.Step",
	}
	if diff := cmp.Diff(want, *f.log); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestNewRunnerRefusesASecondRunner: the Loop reads its queued updates through one Runner; a
// second would take the first one's reads.
func TestNewRunnerRefusesASecondRunner(t *testing.T) {
	f := newFixture(t, nil)
	updates := make(chan podconfig.Update)
	if _, err := NewRunner(RunnerOptions{Loop: f.loop, Updates: updates, Clock: clock.RealClock{}}); err != nil {
		t.Fatalf("NewRunner() error = %v", err)
	}
	if _, err := NewRunner(RunnerOptions{Loop: f.loop, Updates: updates, Clock: clock.RealClock{}}); err == nil {
		t.Errorf("NewRunner() on a loop that has a runner: error = nil, want one")
	}
}
