package housekeeping

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/metrics"
	"github.com/minikubelet/minikubelet/podworkers"
)

// numbered gives a fake a change number a test moves by hand.
type numbered struct{ v uint64 }

func (n *numbered) Version() uint64 { return n.v }

type numberedPods struct {
	*fakePods
	numbered
}

// numberedWorkers counts the SyncKnownPods calls, which only a full pass makes, and reports the
// UIDs in orphans as orphaned workers.
type numberedWorkers struct {
	*fakeWorkers
	numbered
	calls   int
	orphans map[types.UID]bool
}

func (w *numberedWorkers) SyncKnownPods(pods []*v1.Pod) map[types.UID]podworkers.PodWorkerSync {
	w.calls++
	out := w.fakeWorkers.SyncKnownPods(pods)
	for uid := range w.orphans {
		s := out[uid]
		s.Orphan = true
		out[uid] = s
	}
	return out
}

type numberedStatus struct {
	*fakeStatus
	numbered
}

// numberedRuntime counts the listings.
type numberedRuntime struct {
	*fakeRuntime
	state, lists uint64
}

func (r *numberedRuntime) StateVersion() uint64 { return r.state }

func (r *numberedRuntime) GetPods(all bool) ([]*kubecontainer.Pod, error) {
	r.lists++
	return r.fakeRuntime.GetPods(all)
}

type numberedProber struct {
	probeCleanup
	numbered
	calls int
}

func (p *numberedProber) CleanupPods(desired map[types.UID]bool) {
	p.calls++
	p.probeCleanup.CleanupPods(desired)
}

// lastCounts keeps the pod counts last set.
type lastCounts struct {
	counts metrics.PodCounts
	sets   int
}

func (l *lastCounts) SetPodCounts(c metrics.PodCounts) { l.counts, l.sets = c, l.sets+1 }

type quietFixture struct {
	*fixture
	pods    *numberedPods
	workers *numberedWorkers
	status  *numberedStatus
	runtime *numberedRuntime
	prober  *numberedProber
	metrics *lastCounts
}

// newQuietFixture is newFixture with numbered components: one running API pod with a syncing
// worker, and a prober.
func newQuietFixture(t *testing.T) *quietFixture {
	t.Helper()
	f := &quietFixture{fixture: newFixture(t)}
	f.pods = &numberedPods{fakePods: f.fixture.pods}
	f.workers = &numberedWorkers{fakeWorkers: f.fixture.workers}
	f.status = &numberedStatus{fakeStatus: f.fixture.status}
	f.runtime = &numberedRuntime{fakeRuntime: f.fixture.runtime}
	f.prober = &numberedProber{}
	f.metrics = &lastCounts{}
	f.fixture.pods.pods = []*v1.Pod{apiPod()}
	f.fixture.runtime.running = []*kubecontainer.Pod{{ID: "1", Name: "pod1", Namespace: "ns1"}}
	f.fixture.workers.states = map[types.UID]podworkers.State{"1": podworkers.Sync}
	var err error
	f.c, err = New(Options{Tracer: f.rec, Pods: f.pods, Workers: f.workers, Runtime: f.runtime, Status: f.status,
		CrashLoopBackOff: f.gc, Mirror: f.mirror, Prober: f.prober, Metrics: f.metrics})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	return f
}

// pass runs one pass and reports whether it ran in full (SyncKnownPods was called).
func (f *quietFixture) pass(t *testing.T) (full bool, err error) {
	t.Helper()
	calls, lists, gcs := f.workers.calls, f.runtime.lists, f.gc.n
	err = f.c.HandlePodCleanups(context.Background())
	if got := f.runtime.lists - lists; got != 1 {
		t.Errorf("runtime listings in the pass = %d, want 1", got)
	}
	if got := f.gc.n - gcs; err == nil && got != 1 {
		t.Errorf("crash-loop back-off GC calls in the pass = %d, want 1", got)
	}
	return f.workers.calls > calls, err
}

// TestQuietPassIsSkipped checks that a pass finding every number as a pass that did nothing
// left it skips its work, keeps the pod counts that pass set, and still lists the runtime and
// collects the crash-loop back-off.
func TestQuietPassIsSkipped(t *testing.T) {
	f := newQuietFixture(t)
	for i, want := range []bool{true, false, false} {
		full, err := f.pass(t)
		if err != nil {
			t.Fatalf("pass %d: HandlePodCleanups() error = %v", i, err)
		}
		if full != want {
			t.Errorf("pass %d ran in full = %v, want %v", i, full, want)
		}
	}
	if f.c.skipped != 2 {
		t.Errorf("passes skipped = %d, want 2", f.c.skipped)
	}
	if len(f.rec.Events()) != 0 {
		t.Errorf("quiet passes traced %v, want nothing", f.events())
	}
	want := metrics.PodCounts{DesiredRegular: 1, ActiveRegular: 1, Working: map[metrics.WorkingKey]int{{Lifecycle: "sync", Config: "runtime_only", Static: "unknown"}: 1}}
	if diff := cmp.Diff(want, f.metrics.counts); diff != "" || f.metrics.sets != 1 {
		t.Errorf("pod counts set %d times, want 1; last (-want +got):\n%s", f.metrics.sets, diff)
	}
}

// TestQuietPassNoticesEveryChange is the table of the change signals: after a quiet pass, a
// change of each thing a pass reads, with its component's number moved, runs the next pass in
// full and does what the change asks; a pass that did something, or that found an orphaned
// worker, is never followed by a skip.
func TestQuietPassNoticesEveryChange(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(f *quietFixture)
		// wantEvents is what the full pass after the change traces.
		wantEvents []string
		// wantNextFull: the pass after that runs in full too (the full one was not quiet).
		wantNextFull bool
	}{
		{
			name: "pod manager: a pod the workers do not know is restarted",
			change: func(f *quietFixture) {
				pod := apiPod()
				pod.Name, pod.UID = "pod2", "2"
				f.pods.pods = append(f.pods.pods, pod)
				f.pods.v++
			},
			wantEvents: []string{"restart "}, wantNextFull: true,
		},
		{
			name: "pod manager: an orphaned mirror pod is deleted",
			change: func(f *quietFixture) {
				f.pods.orphaned = []string{"pod9-node-1_default"}
				f.pods.v++
			},
			wantEvents: []string{"delete-mirror OrphanedMirrorPod"}, wantNextFull: true,
		},
		{
			name: "workers: the pod's worker was forgotten, so it is restarted",
			change: func(f *quietFixture) {
				delete(f.workers.states, "1")
				f.workers.v++
			},
			wantEvents: []string{"restart "}, wantNextFull: true,
		},
		{
			name: "workers: an orphaned worker keeps every pass full",
			change: func(f *quietFixture) {
				f.workers.orphans = map[types.UID]bool{"1": true}
				f.workers.v++
			},
			wantNextFull: true,
		},
		{
			name: "workers: a terminated worker stops its probes, then the passes are quiet",
			change: func(f *quietFixture) {
				f.workers.states["1"] = podworkers.Terminated
				f.workers.v++
			},
		},
		{
			name: "status manager: a terminal phase makes the pod inactive, then the passes are quiet",
			change: func(f *quietFixture) {
				f.status.phases["1"] = v1.PodSucceeded
				f.status.v++
			},
		},
		{
			name:   "prober: a new worker is looked at",
			change: func(f *quietFixture) { f.prober.v++ },
		},
		{
			name: "runtime: a pod nothing knows is killed",
			change: func(f *quietFixture) {
				f.runtime.running = append(f.runtime.running, &kubecontainer.Pod{ID: "3", Name: "pod3", Namespace: "ns1"})
				f.runtime.state++
			},
			wantEvents: []string{"kill OrphanedRuntimePod"}, wantNextFull: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newQuietFixture(t)
			for range 2 {
				if _, err := f.pass(t); err != nil {
					t.Fatalf("HandlePodCleanups() error = %v", err)
				}
			}
			if f.c.skipped != 1 {
				t.Fatalf("passes skipped before the change = %d, want 1", f.c.skipped)
			}
			tc.change(f)
			probes, sets := f.prober.calls, f.metrics.sets
			full, err := f.pass(t)
			if err != nil {
				t.Fatalf("HandlePodCleanups() after the change error = %v", err)
			}
			if !full || f.prober.calls != probes+1 || f.metrics.sets != sets+1 {
				t.Errorf("after the change: full pass %v, CleanupPods calls %d, pod counts set %d times, want a full pass, 1 and 1",
					full, f.prober.calls-probes, f.metrics.sets-sets)
			}
			if diff := cmp.Diff(tc.wantEvents, f.events()); diff != "" {
				t.Errorf("events of the pass after the change (-want +got):\n%s", diff)
			}
			full, err = f.pass(t)
			if err != nil {
				t.Fatalf("HandlePodCleanups() error = %v", err)
			}
			if full != tc.wantNextFull {
				t.Errorf("the next pass ran in full = %v, want %v", full, tc.wantNextFull)
			}
		})
	}
}

// TestQuietPassWhenTheRuntimeIsDown checks that a skipped pass still fails, and traces, when the
// runtime cannot list, and that the pass after the outage runs in full.
func TestQuietPassWhenTheRuntimeIsDown(t *testing.T) {
	f := newQuietFixture(t)
	for range 2 {
		if _, err := f.pass(t); err != nil {
			t.Fatalf("HandlePodCleanups() error = %v", err)
		}
	}
	f.runtime.err = errors.New("container runtime is down")
	if _, err := f.pass(t); err == nil {
		t.Fatal("HandlePodCleanups() with the runtime down: error = nil, want the listing error")
	}
	if diff := cmp.Diff([]string{"error FailedToListPods"}, f.events()); diff != "" {
		t.Errorf("events with the runtime down (-want +got):\n%s", diff)
	}
	f.runtime.err = nil
	if full, err := f.pass(t); err != nil || !full {
		t.Errorf("the pass after the outage: full %v, error %v; want a full pass", full, err)
	}
}

// TestNoNumbersNoSkip checks that a component without a change number makes every pass full.
func TestNoNumbersNoSkip(t *testing.T) {
	f := newQuietFixture(t)
	c, err := New(Options{Tracer: f.rec, Pods: f.fixture.pods, Workers: f.workers, Runtime: f.runtime, Status: f.status,
		CrashLoopBackOff: f.gc, Prober: f.prober})
	if err != nil {
		t.Fatal(err)
	}
	f.c = c
	for i := range 3 {
		if full, err := f.pass(t); err != nil || !full {
			t.Errorf("pass %d: full %v, error %v; want a full pass", i, full, err)
		}
	}
}
