package pleg_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/metrics"
	"github.com/minikubelet/minikubelet/pleg"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// TestRelistUnchangedAllocatesNothing checks the PLEG's steady state, a relist every second of a
// runtime where nothing changed: with the fake runtime's listing, and with metrics, it allocates
// nothing.
func TestRelistUnchangedAllocatesNothing(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	rt, err := fakeruntime.New(fakeruntime.Options{Clock: clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := rt.SyncPod(podtest.New(fmt.Sprintf("p%02d", i), numbered(2)), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := metrics.New(metrics.Options{NodeName: "node-1"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := pleg.New(pleg.Options{Runtime: rt, Cache: pleg.NewCache(), Clock: clk, Tracer: trace.Discard, Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(g.Relist()); n != 20*3 {
		t.Fatalf("first Relist() = %d events, want %d", n, 20*3)
	}
	clk.Advance(time.Second)
	g.Relist() // the metrics' series exist from here on
	if n := testing.AllocsPerRun(50, func() {
		clk.Advance(time.Second)
		if events := g.Relist(); len(events) != 0 {
			t.Fatalf("Relist() of an unchanged runtime = %v, want no events", events)
		}
	}); n != 0 {
		t.Errorf("Relist() of an unchanged runtime = %v allocations, want 0", n)
	}
}
