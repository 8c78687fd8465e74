package draplugin

import (
	"context"
	"runtime"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// chanSlices hands each delete's selector to the test.
type chanSlices chan string

func (c chanSlices) DeleteSlices(_ context.Context, sel fields.Set) error {
	c <- sel.String()
	return nil
}

// TestRunner: Run wipes the node's slices at start, and a driver's slices once its plugin has been
// gone for the wiping delay on the clock.
func TestRunner(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	deletes := make(chanSlices, 4)
	m, err := New(Options{Clock: clk, Tracer: trace.Discard, Rand: fixedRand(0), NodeName: "node-1", Wipes: true})
	if err != nil {
		t.Fatal(err)
	}
	waker := NewWaker()
	conns := &fakeConnector{conns: map[string]*fakeConn{}}
	h, err := NewHandler(HandlerOptions{Manager: m, Connector: conns, Slices: deletes, Tracer: trace.Discard, Wake: waker.Wake})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(RunnerOptions{Handler: h, Clock: clk, Waker: waker})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	if got := <-deletes; got != "spec.nodeName=node-1" {
		t.Errorf("start wiped %q", got)
	}
	if err := h.RegisterPlugin("d", "/p/d.sock", []string{"v1.DRAPlugin"}, nil); err != nil {
		t.Fatal(err)
	}
	// The runner wakes up and sets its timer for the wipe.
	for !clk.HasWaiters() {
		runtime.Gosched()
	}
	clk.Step(WipingDelay)
	if got := <-deletes; got != "spec.driver=d,spec.nodeName=node-1" {
		t.Errorf("wiped %q", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
	if !conns.conns["/p/d.sock"].closed {
		t.Error("Run's end left the connection open")
	}
}
