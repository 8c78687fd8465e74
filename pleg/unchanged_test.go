package pleg_test

import (
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/metrics"
	"github.com/minikubelet/minikubelet/pleg"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// unversioned hides the fake runtime's StateVersion, so that the PLEG compares every listing.
type unversioned struct{ pleg.Lister }

// frozenVersion is a runtime whose state number never moves, whatever its listing does: a PLEG
// that trusts it skips every comparison after the first.
type frozenVersion struct{ pleg.Lister }

func (frozenVersion) StateVersion() uint64 { return 1 }

// side is one PLEG with its own runtime, cache, trace and metrics.
type side struct {
	rt     *fakeruntime.Runtime
	cache  *pleg.Cache
	g      *pleg.PLEG
	traced []trace.Event
	counts countsLog
}

// countsLog keeps a copy of the counts of every relist observed: the PLEG reuses its buffer.
type countsLog []metrics.RunningCounts

func (l *countsLog) ObserveRelist(_, _ time.Time, counts *metrics.RunningCounts) {
	if counts == nil {
		*l = append(*l, metrics.RunningCounts{Pods: -1})
		return
	}
	*l = append(*l, metrics.RunningCounts{Pods: counts.Pods, Containers: maps.Clone(counts.Containers)})
}

func newSide(t *testing.T, clk *vclock.Clock, wrap func(*fakeruntime.Runtime) pleg.Lister) *side {
	t.Helper()
	rt, err := fakeruntime.New(fakeruntime.Options{Clock: clk, Latencies: fakeruntime.DefaultLatencies, Tracer: trace.Discard})
	if err != nil {
		t.Fatalf("fakeruntime.New() = %v", err)
	}
	s := &side{rt: rt, cache: pleg.NewCache()}
	s.g, err = pleg.New(pleg.Options{Runtime: wrap(rt), Cache: s.cache, Clock: clk, Metrics: &s.counts,
		Tracer: trace.Func(func(e trace.Event) { s.traced = append(s.traced, e) })})
	if err != nil {
		t.Fatalf("pleg.New() = %v", err)
	}
	return s
}

// TestUnchangedRelistMatchesFullRelist drives two PLEGs through the same runtime history, one
// that skips the comparison while the runtime's state number stands still and one that compares
// every listing, and checks that they send the same events, trace the same and cache the same
// statuses and running counts at every relist: after pods start, after a container exits by
// itself, after a kill, after a reinspection is asked for and while a watch condition waits.
func TestUnchangedRelistMatchesFullRelist(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	skipping := newSide(t, clk, func(rt *fakeruntime.Runtime) pleg.Lister { return rt })
	full := newSide(t, clk, func(rt *fakeruntime.Runtime) pleg.Lister { return unversioned{rt} })
	pods := []string{"a", "b", "c"}
	uids := make([]types.UID, len(pods))
	for _, s := range []*side{skipping, full} {
		for i, name := range pods {
			pod := podtest.New(name, numbered(2), podtest.Annotation(fakeruntime.AnnotationExitAfter+"c1", fmt.Sprintf("%ds", 10+5*i)))
			uids[i] = pod.UID
			if _, err := s.rt.SyncPod(pod, nil, nil); err != nil {
				t.Fatalf("SyncPod(%s) = %v", name, err)
			}
		}
	}
	watchMet := false
	for sec := 1; sec <= 40; sec++ {
		clk.Set(vclock.Epoch.Add(time.Duration(sec) * time.Second))
		for _, s := range []*side{skipping, full} {
			switch sec {
			case 20: // a change the runtime makes on request
				running, err := s.rt.GetPods(false)
				if err != nil {
					t.Fatalf("GetPods() = %v", err)
				}
				for _, p := range running {
					if p.ID == uids[0] {
						if _, err := s.rt.KillPod(nil, p, nil); err != nil {
							t.Fatalf("KillPod() = %v", err)
						}
					}
				}
			case 25: // a reinspection with no change in the runtime
				s.g.RequestReinspect(uids[1])
			case 30: // a watch that holds only from 33s on
				s.g.SetPodWatchCondition(uids[2], "after-33s", func(*kubecontainer.PodStatus) bool {
					return !clk.Now().Before(vclock.Epoch.Add(33 * time.Second))
				})
			}
		}
		got, want := skipping.g.Relist(), full.g.Relist()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%ds: Relist() events mismatch (-full +skipping):\n%s", sec, diff)
		}
		for _, e := range want {
			watchMet = watchMet || e.Type == pleg.ConditionMet
		}
		for _, uid := range uids {
			ws, werr := full.cache.Get(uid)
			gs, gerr := skipping.cache.Get(uid)
			if diff := cmp.Diff(ws, gs); diff != "" || fmt.Sprint(werr) != fmt.Sprint(gerr) {
				t.Errorf("%ds: cache of %s mismatch (-full +skipping), errors %v and %v:\n%s", sec, uid, werr, gerr, diff)
			}
		}
		if !skipping.cache.Timestamp().Equal(full.cache.Timestamp()) {
			t.Errorf("%ds: cache timestamp %v, want %v", sec, skipping.cache.Timestamp(), full.cache.Timestamp())
		}
	}
	if diff := cmp.Diff(full.traced, skipping.traced); diff != "" {
		t.Errorf("trace mismatch (-full +skipping):\n%s", diff)
	}
	if diff := cmp.Diff(full.counts, skipping.counts); diff != "" {
		t.Errorf("running counts observed (-full +skipping):\n%s", diff)
	}
	if !watchMet {
		t.Error("no ConditionMet event: the history did not exercise the watch")
	}
	if len(full.traced) == 0 {
		t.Error("nothing traced: the history changed nothing")
	}
}

// TestUnchangedRelistSkipsComparison checks that the skip is taken: a runtime whose state number
// never moves hides from the PLEG a container's exit that a full relist reports.
func TestUnchangedRelistSkipsComparison(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	frozen := newSide(t, clk, func(rt *fakeruntime.Runtime) pleg.Lister { return frozenVersion{rt} })
	full := newSide(t, clk, func(rt *fakeruntime.Runtime) pleg.Lister { return rt })
	for _, s := range []*side{frozen, full} {
		pod := podtest.New("web", numbered(1), podtest.Annotation(fakeruntime.AnnotationExitAfter+"c0", "10s"))
		if _, err := s.rt.SyncPod(pod, nil, nil); err != nil {
			t.Fatalf("SyncPod() = %v", err)
		}
	}
	var frozenDied, fullDied int
	for sec := 1; sec <= 20; sec++ {
		clk.Set(vclock.Epoch.Add(time.Duration(sec) * time.Second))
		for _, e := range frozen.g.Relist() {
			if e.Type == pleg.ContainerDied {
				frozenDied++
			}
		}
		for _, e := range full.g.Relist() {
			if e.Type == pleg.ContainerDied {
				fullDied++
			}
		}
	}
	if fullDied != 1 || frozenDied != 0 {
		t.Errorf("ContainerDied events: %d with a moving state number, %d with a frozen one; want 1 and 0", fullDied, frozenDied)
	}
	// Nor are the running counts made again: the frozen side observes its first listing's
	// counts to the end, while the moving side sees the container exit.
	if got, want := frozen.counts[len(frozen.counts)-1], full.counts[0]; !cmp.Equal(got, want) {
		t.Errorf("last counts observed with a frozen state number = %+v, want the first listing's, %+v", got, want)
	}
	if got, want := full.counts[len(full.counts)-1], (metrics.RunningCounts{Pods: 1, Containers: map[string]int{"exited": 1}}); !cmp.Equal(got, want) {
		t.Errorf("last counts observed with a moving state number = %+v, want %+v", got, want)
	}
}

// movingClock is a runtime whose clock moves on by a second right after each listing, as a real
// clock moves between two calls.
type movingClock struct {
	*fakeruntime.Runtime
	clk *vclock.Clock
}

func (m movingClock) GetPods(all bool) ([]*kubecontainer.Pod, error) {
	pods, err := m.Runtime.GetPods(all)
	m.clk.Advance(time.Second)
	return pods, err
}

// TestUnchangedRelistWithAMovingClock checks that a change the runtime makes between a listing and
// the reading of its state number is not taken as listed: the container's exit, which falls
// between the two in one relist, is reported by a later one.
func TestUnchangedRelistWithAMovingClock(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	s := newSide(t, clk, func(rt *fakeruntime.Runtime) pleg.Lister { return movingClock{rt, clk} })
	pod := podtest.New("web", numbered(1), podtest.Annotation(fakeruntime.AnnotationExitAfter+"c0", "10s"))
	if _, err := s.rt.SyncPod(pod, nil, nil); err != nil {
		t.Fatalf("SyncPod() = %v", err)
	}
	died := 0
	for range 30 {
		for _, e := range s.g.Relist() {
			if e.Type == pleg.ContainerDied {
				died++
			}
		}
	}
	if died != 1 {
		t.Errorf("ContainerDied events over 30 relists = %d, want 1", died)
	}
}
