package syncloop

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/prober"
	"github.com/minikubelet/minikubelet/prober/results"
)

// fakeProber hands out its updates once, at next.
type fakeProber struct {
	log     *calls
	next    time.Time
	updates []prober.Update
}

func (p *fakeProber) Advance(context.Context) []prober.Update {
	p.log.add("prober.Advance")
	u := p.updates
	p.updates, p.next = nil, time.Time{}
	return u
}
func (p *fakeProber) NextWake() (time.Time, bool) { return p.next, !p.next.IsZero() }

// probeStatus is a status manager that also takes readiness and startup at once.
type probeStatus struct{ fakeStatus }

func (s *probeStatus) SetContainerReadiness(uid types.UID, id string, ready bool) {
	s.log.add("status.SetContainerReadiness %s %s %v", uid, id, ready)
}
func (s *probeStatus) SetContainerStartup(uid types.UID, id string, started bool) {
	s.log.add("status.SetContainerStartup %s %s %v", uid, id, started)
}

// TestProbeUpdates checks syncLoopIteration's probe cases: a liveness Success is dropped, a
// liveness Failure syncs, readiness and startup changes go to the status manager first, and an
// update for a pod the pod manager no longer has syncs nothing.
func TestProbeUpdates(t *testing.T) {
	update := func(t prober.ProbeType, r results.Result, uid types.UID) prober.Update {
		return prober.Update{Probe: t, Update: results.Update{ContainerID: "c1", Result: r, PodUID: uid}}
	}
	var fp *fakeProber
	f := newFixture(t, func(o *Options) {
		log := o.Workers.(*fakeWorkers).log
		fp = &fakeProber{log: log}
		o.Prober = fp
		o.Status = &probeStatus{fakeStatus{log: log}}
	})
	web := pod("web")
	f.pods.pods[web.UID] = web
	fp.next = f.clk.Now()
	fp.updates = []prober.Update{
		update(prober.Liveness, results.Success, web.UID),
		update(prober.Liveness, results.Failure, web.UID),
		update(prober.Readiness, results.Success, web.UID),
		update(prober.Startup, results.Unknown, web.UID),
		update(prober.Readiness, results.Failure, "uid-gone"),
	}
	if err := f.loop.Advance(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range *f.log {
		if c != "state.Advance" && c != "kills.Advance" && c != "runtime.Advance" && c != "workers.Step" && c != "status.Step" {
			got = append(got, c)
		}
	}
	want := []string{
		"prober.Advance",
		"workers.UpdatePod sync web",
		"status.SetContainerReadiness uid-web c1 true",
		"workers.UpdatePod sync web",
		"status.SetContainerStartup uid-web c1 false",
		"workers.UpdatePod sync web",
		"status.SetContainerReadiness uid-gone c1 false",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
