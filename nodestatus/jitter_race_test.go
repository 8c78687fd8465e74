package nodestatus

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestRunnersDrawTheirOwnJitter: in `run` the detached lease (LeaseRunner's goroutine) and the
// Status (Runner's goroutine) each draw their periods' jitter, which New gave them from one
// stream; DetachLease gives the lease a stream of its own. Under -race the detector would report
// a shared one. Both loops must keep their periods: about 12 renewals and status updates in 2m.
func TestRunnersDrawTheirOwnJitter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.RealClock{}
		fake := &fakeClient{clk: vclock.New(vclock.Epoch)}
		client := &lockedClient{c: fake}
		// Jitter nil: the default stream, as kubelet/sync.go passes one stream too.
		s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: &fakeState{}})
		if err != nil {
			t.Fatal(err)
		}
		first := make(chan struct{})
		var once sync.Once
		nr, _ := NewRunner(RunnerOptions{Status: s, Clock: clk, Registered: func() { once.Do(func() { close(first) }) }})
		lr, _ := NewLeaseRunner(s.DetachLease(), clk)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { _ = nr.Run(ctx) })
		<-first
		wg.Go(func() { _ = lr.Run(ctx) })
		time.Sleep(120 * time.Second)
		cancel()
		wg.Wait()
		counts := map[string]int{}
		for _, c := range fake.calls {
			_, call, _ := strings.Cut(c, " ")
			counts[call]++
		}
		// A renewal is one update once the lease exists; each status update reads the node (no
		// lister), and writes it once, at the registration, the status unchanged since.
		if counts["lease"] < 10 || counts["get"] < 10 || counts["status"] != 1 {
			t.Errorf("in 2m: %d lease writes, %d node reads, %d status writes; want about 12, 12 and 1", counts["lease"], counts["get"], counts["status"])
		}
	})
}
