package housekeeping

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/minikubelet/minikubelet/test/podtest"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// fakePods is a pod manager with regular pods, mirror pods and orphaned mirror full names.
type fakePods struct {
	pods, mirrors []*v1.Pod
	orphaned      []string
}

func (p *fakePods) GetPodsAndMirrorPods() ([]*v1.Pod, []*v1.Pod, []string) {
	return p.pods, p.mirrors, append([]string(nil), p.orphaned...)
}

func (p *fakePods) GetPodAndMirrorPod(pod *v1.Pod) (*v1.Pod, *v1.Pod, bool) { return pod, nil, false }

// fakeWorkers knows the states in states and logs every update.
type fakeWorkers struct {
	states      map[types.UID]podworkers.State
	terminating map[string]bool // static full names whose pod is terminating
	updates     []string
}

func (w *fakeWorkers) SyncKnownPods([]*v1.Pod) map[types.UID]podworkers.PodWorkerSync {
	out := map[types.UID]podworkers.PodWorkerSync{}
	for uid, s := range w.states {
		out[uid] = podworkers.PodWorkerSync{State: s}
	}
	return out
}

func (w *fakeWorkers) UpdatePod(o podworkers.UpdateOptions) {
	name := ""
	if o.Pod != nil {
		name = o.Pod.Name
	} else {
		name = o.RunningPod.Name
	}
	grace := ""
	if o.KillPodOptions != nil && o.KillPodOptions.PodTerminationGracePeriodSecondsOverride != nil {
		grace = " grace=1"
		if *o.KillPodOptions.PodTerminationGracePeriodSecondsOverride != 1 {
			grace = " grace=other"
		}
	}
	w.updates = append(w.updates, o.UpdateType.String()+" "+name+grace)
}

func (w *fakeWorkers) IsPodForMirrorPodTerminatingByFullName(fullname string) bool {
	return w.terminating[fullname]
}

func (w *fakeWorkers) IsPodKnownTerminated(uid types.UID) bool {
	s, ok := w.states[uid]
	return ok && s >= podworkers.Terminated
}

func (w *fakeWorkers) IsPodTerminationRequested(uid types.UID) bool {
	s, ok := w.states[uid]
	return ok && s >= podworkers.Terminating
}

// fakeRuntime lists running pods, or fails.
type fakeRuntime struct {
	running []*kubecontainer.Pod
	err     error
}

func (r *fakeRuntime) GetPods(bool) ([]*kubecontainer.Pod, error) { return r.running, r.err }

// fakeStatus logs the UIDs it was told to keep and knows phases.
type fakeStatus struct {
	kept   []types.UID
	phases map[types.UID]v1.PodPhase
}

func (s *fakeStatus) RemoveOrphanedStatuses(uids map[types.UID]bool) {
	for uid := range uids {
		s.kept = append(s.kept, uid)
	}
}

func (s *fakeStatus) GetPodPhase(uid types.UID) (v1.PodPhase, bool) {
	p, ok := s.phases[uid]
	return p, ok
}

// logMirror logs deletes with their precondition.
type logMirror struct{ deletes []string }

func (m *logMirror) DeleteMirrorPod(_ context.Context, fullName string, uid *types.UID) (bool, error) {
	pre := "none"
	if uid != nil {
		pre = string(*uid)
	}
	m.deletes = append(m.deletes, fullName+" precondition="+pre)
	return true, nil
}

// countingGC counts GC calls.
type countingGC struct{ n int }

func (g *countingGC) GC() { g.n++ }

// apiPod is the kubelet tests' simplePod: pod1/ns1, UID "1".
func apiPod() *v1.Pod {
	return podtest.New("pod1", podtest.Namespace("ns1"), podtest.UID("1"), podtest.Source("api"),
		podtest.Containers(podtest.Container("container-1", podtest.DefaultImage)))
}

type fixture struct {
	pods    *fakePods
	workers *fakeWorkers
	runtime *fakeRuntime
	status  *fakeStatus
	mirror  *logMirror
	gc      *countingGC
	rec     *trace.Recorder
	c       *Cleaner
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{
		pods:    &fakePods{},
		workers: &fakeWorkers{states: map[types.UID]podworkers.State{}, terminating: map[string]bool{}},
		runtime: &fakeRuntime{},
		status:  &fakeStatus{phases: map[types.UID]v1.PodPhase{}},
		mirror:  &logMirror{},
		gc:      &countingGC{},
	}
	var err error
	if f.rec, err = trace.NewRecorder(trace.RecorderOptions{Clock: vclock.New(vclock.Epoch), Keep: true}); err != nil {
		t.Fatal(err)
	}
	f.c, err = New(Options{Tracer: f.rec, Pods: f.pods, Workers: f.workers, Runtime: f.runtime, Status: f.status, CrashLoopBackOff: f.gc, Mirror: f.mirror})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	return f
}

// events returns the housekeeping trace as "event reason".
func (f *fixture) events() []string {
	var out []string
	for _, e := range f.rec.Events() {
		out = append(out, string(e.Event)+" "+e.Reason)
	}
	return out
}

// TestHandlePodCleanups ports the kubelet's TestKubelet_HandlePodCleanups cases that apply.
func TestHandlePodCleanups(t *testing.T) {
	terminal := apiPod()
	terminal.Status.Phase = v1.PodFailed
	deletedTerminal := terminal.DeepCopy()
	deletedTerminal.DeletionTimestamp = &metav1.Time{}
	for _, tc := range []struct {
		name        string
		config      []*v1.Pod
		running     []*kubecontainer.Pod
		states      map[types.UID]podworkers.State
		wantUpdates []string
		wantEvents  []string
	}{
		{
			name:        "missing pod is requested for termination with short grace period",
			running:     []*kubecontainer.Pod{{ID: "1", Name: "pod1", Namespace: "ns1"}},
			wantUpdates: []string{"kill pod1 grace=1"},
			wantEvents:  []string{"kill OrphanedRuntimePod"},
		},
		{
			name:        "pod is added to worker by sync method",
			config:      []*v1.Pod{apiPod()},
			wantUpdates: []string{"create pod1"},
			wantEvents:  []string{"restart "},
		},
		{
			name:   "pod is not added to worker by sync method because it is in a terminal phase",
			config: []*v1.Pod{terminal},
		},
		{
			name:        "deleted terminal pod nobody runs is killed so its deletion finishes",
			config:      []*v1.Pod{deletedTerminal},
			wantUpdates: []string{"kill pod1"},
			wantEvents:  []string{"kill TerminalPodDeleted"},
		},
		{
			name:    "known pod is left alone",
			config:  []*v1.Pod{apiPod()},
			running: []*kubecontainer.Pod{{ID: "1", Name: "pod1", Namespace: "ns1"}},
			states:  map[types.UID]podworkers.State{"1": podworkers.Sync},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.pods.pods, f.runtime.running = tc.config, tc.running
			if tc.states != nil {
				f.workers.states = tc.states
			}
			if err := f.c.HandlePodCleanups(context.Background()); err != nil {
				t.Fatalf("HandlePodCleanups() error = %v", err)
			}
			if diff := cmp.Diff(tc.wantUpdates, f.workers.updates); diff != "" {
				t.Errorf("worker updates (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, f.events()); diff != "" {
				t.Errorf("housekeeping events (-want +got):\n%s", diff)
			}
			if f.gc.n != 1 {
				t.Errorf("crash-loop back-off GC calls = %d, want 1", f.gc.n)
			}
		})
	}
}

// TestDeleteOrphanedMirrorPods ports the kubelet's test: mirror pods without a static pod are
// deleted, with no UID precondition, except the one whose static pod is still terminating.
func TestDeleteOrphanedMirrorPods(t *testing.T) {
	f := newFixture(t)
	f.pods.orphaned = []string{"pod3-node-1_default", "pod1-node-1_default", "pod2-node-1_default"}
	f.workers.terminating["pod3-node-1_default"] = true
	if err := f.c.HandlePodCleanups(context.Background()); err != nil {
		t.Fatalf("HandlePodCleanups() error = %v", err)
	}
	want := []string{"pod1-node-1_default precondition=none", "pod2-node-1_default precondition=none"}
	if diff := cmp.Diff(want, f.mirror.deletes); diff != "" {
		t.Errorf("mirror deletes while pod3 terminates (-want +got):\n%s", diff)
	}

	// Once pod3 is terminated its mirror is no longer protected.
	f.workers.terminating["pod3-node-1_default"] = false
	f.mirror.deletes = nil
	if err := f.c.HandlePodCleanups(context.Background()); err != nil {
		t.Fatalf("HandlePodCleanups() error = %v", err)
	}
	want = []string{"pod1-node-1_default precondition=none", "pod2-node-1_default precondition=none", "pod3-node-1_default precondition=none"}
	if diff := cmp.Diff(want, f.mirror.deletes); diff != "" {
		t.Errorf("mirror deletes after pod3 terminated (-want +got):\n%s", diff)
	}
}

func TestHandlePodCleanupsStopsWhenTheRuntimeCannotList(t *testing.T) {
	f := newFixture(t)
	f.runtime.err = errors.New("container runtime is down")
	f.pods.orphaned = []string{"pod1-node-1_default"}
	if err := f.c.HandlePodCleanups(context.Background()); err == nil {
		t.Fatal("HandlePodCleanups() error = nil, want the listing error")
	}
	if len(f.mirror.deletes) != 0 || f.gc.n != 0 {
		t.Errorf("after a failed listing: mirror deletes %v, GC calls %d, want none", f.mirror.deletes, f.gc.n)
	}
	if diff := cmp.Diff([]string{"error FailedToListPods"}, f.events()); diff != "" {
		t.Errorf("housekeeping events (-want +got):\n%s", diff)
	}
}

func TestStandaloneDeletesNoMirrorPods(t *testing.T) {
	f := newFixture(t)
	opts := f.c.opts
	opts.Mirror = nil
	c, err := New(opts)
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	f.pods.orphaned = []string{"pod1-node-1_default"}
	if err := c.HandlePodCleanups(context.Background()); err != nil {
		t.Fatalf("HandlePodCleanups() error = %v", err)
	}
	if len(f.rec.Events()) != 0 {
		t.Errorf("standalone housekeeping traced %v, want nothing", f.events())
	}
}

func TestNewNamesMissingOptions(t *testing.T) {
	_, err := New(Options{})
	if !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Fatalf("New() error = %v, want %v", err, minikubelet.ErrMissingOption)
	}
	want := "new housekeeping: options Tracer, Pods, Workers, Runtime, Status, CrashLoopBackOff: missing required option"
	if err.Error() != want {
		t.Errorf("New() error = %q, want %q", err, want)
	}
}

// probeCleanup records what CleanupPods was given.
type probeCleanup struct{ desired map[types.UID]bool }

func (p *probeCleanup) CleanupPods(desired map[types.UID]bool) { p.desired = desired }

// TestCleanupPodsKeepsProbingPossiblyRunningPods checks the probe clean-up: pods whose worker is
// syncing or terminating keep their probe workers; terminated (and finished) ones lose them.
func TestCleanupPodsKeepsProbingPossiblyRunningPods(t *testing.T) {
	f := newFixture(t)
	probes := &probeCleanup{}
	c, err := New(Options{Tracer: f.rec, Pods: f.pods, Workers: f.workers, Runtime: f.runtime, Status: f.status, CrashLoopBackOff: f.gc, Prober: probes})
	if err != nil {
		t.Fatal(err)
	}
	f.workers.states = map[types.UID]podworkers.State{"sync": podworkers.Sync, "terminating": podworkers.Terminating, "terminated": podworkers.Terminated}
	if err := c.HandlePodCleanups(context.Background()); err != nil {
		t.Fatalf("HandlePodCleanups() error = %v", err)
	}
	want := map[types.UID]bool{"sync": true, "terminating": true}
	if diff := cmp.Diff(want, probes.desired); diff != "" {
		t.Errorf("CleanupPods desired (-want +got):\n%s", diff)
	}
}

// allocationCleanup records what RemoveOrphanedPods was given.
type allocationCleanup struct{ remaining map[types.UID]bool }

func (a *allocationCleanup) RemoveOrphanedPods(remaining map[types.UID]bool) {
	a.remaining = maps.Clone(remaining)
}

// TestRemoveOrphanedAllocations: the allocation manager keeps the allocations of the pods the pod
// manager has, and forgets the others: a mirror pod's UID is not among the pods kept.
func TestRemoveOrphanedAllocations(t *testing.T) {
	f := newFixture(t)
	allocs := &allocationCleanup{}
	c, err := New(Options{Tracer: f.rec, Pods: f.pods, Workers: f.workers, Runtime: f.runtime, Status: f.status, CrashLoopBackOff: f.gc, Allocations: allocs})
	if err != nil {
		t.Fatal(err)
	}
	f.pods.pods = []*v1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "web"}}, {ObjectMeta: metav1.ObjectMeta{Name: "db", UID: "db"}}}
	f.pods.mirrors = []*v1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "etcd-node", UID: "etcd-mirror"}}}
	if err := c.HandlePodCleanups(context.Background()); err != nil {
		t.Fatalf("HandlePodCleanups() error = %v", err)
	}
	want := map[types.UID]bool{"web": true, "db": true}
	if diff := cmp.Diff(want, allocs.remaining); diff != "" {
		t.Errorf("RemoveOrphanedPods remaining (-want +got):\n%s", diff)
	}
}
