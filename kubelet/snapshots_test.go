package kubelet

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/kubelet/config"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestRunTakesSnapshotsOnDemand runs a standalone kubelet in a bubble: an idle node whose server
// nobody asks takes no snapshot however long it runs; a request gets one taken when it asks, a
// second request within the freshness bound gets the same one, and a log follower makes the loop
// publish after its passes again.
func TestRunTakesSnapshotsOnDemand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, err := trace.NewRecorder(trace.RecorderOptions{Clock: clock.RealClock{}})
		if err != nil {
			t.Fatal(err)
		}
		k, err := New(Options{NodeName: testNode, Config: config.Default(), Clock: clock.RealClock{}, Tracer: rec})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- k.Run(ctx, RunOptions{Snapshots: true, SnapshotPeriod: 500 * time.Millisecond}) }()

		time.Sleep(time.Minute)
		synctest.Wait()
		if s, _ := k.Board.Latest(); !s.Taken.IsZero() {
			t.Errorf("an idle node nobody asked took a snapshot at %v", s.Taken)
		}

		asked := time.Now()
		s := k.Board.Get(t.Context(), asked)
		if s.Taken.Before(asked) || s.Node != testNode {
			t.Errorf("Get at %v = snapshot of %q taken at %v, want one of %q taken after the request", asked, s.Node, s.Taken, testNode)
		}
		time.Sleep(100 * time.Millisecond)
		if again := k.Board.Get(t.Context(), time.Now()); again != s {
			t.Errorf("a request within the freshness bound got a new snapshot taken at %v", again.Taken)
		}

		stop := k.Board.Follow()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if latest, _ := k.Board.Latest(); !latest.Taken.After(s.Taken) {
			t.Errorf("with a follower, the latest snapshot is still the one taken at %v", latest.Taken)
		}
		stop()

		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v", err)
		}
		// The loop has stopped: a request gets the latest snapshot at once.
		latest, _ := k.Board.Latest()
		if got := k.Board.Get(t.Context(), time.Now().Add(time.Hour)); got != latest {
			t.Errorf("Get after Run ended = snapshot taken at %v, want the latest", got.Taken)
		}
	})
}
