package syncloop_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/syncloop"
)

// TestRunnerCallsSettled: the hook runs on the runner's goroutine after the first pass and after
// every wake-up, so a reader of the cores sees them between passes.
func TestRunnerCallsSettled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, err := kubelet.New(kubelet.Options{NodeName: "node-1", Clock: clock.RealClock{}, Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		var calls atomic.Int32
		r, err := syncloop.NewRunner(syncloop.RunnerOptions{Loop: n.Loop, Updates: make(chan podconfig.Update), Clock: clock.RealClock{},
			Settled: func() { calls.Add(1) }})
		if err != nil {
			t.Fatal(err)
		}
		_, ctx := ktesting.NewTestContext(t)
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- r.Run(ctx) }()
		synctest.Wait()
		if got := calls.Load(); got != 1 {
			t.Errorf("calls after the first pass = %d, want 1", got)
		}
		time.Sleep(3 * time.Second) // the loop wakes at least every second (sync ticks, relists)
		synctest.Wait()
		if got := calls.Load(); got < 4 {
			t.Errorf("calls after 3s = %d, want one per wake-up, at least 4", got)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v", err)
		}
	})
}
