package nodestatus

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// hangingCSINodes is an API client whose CSINode read hangs (a slow or blackholed request on
// the kubelet's main client, which has no timeout) until ctx is done.
type hangingCSINodes struct{ fakeCSINodes }

func (h *hangingCSINodes) GetCSINode(ctx context.Context, _ string, _ metav1.GetOptions) (*storagev1.CSINode, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestSlowCSINodeReadDoesNotStallRegistration: as v1.35 runs initializeCSINode on a goroutine of
// its own, a CSINode read that hangs holds up neither registration (registerWithAPIServer on the
// node status goroutine, at 100ms) nor the status updates; the node stays NotReady with the
// storage error meanwhile.
func TestSlowCSINodeReadDoesNotStallRegistration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.RealClock{}
		fake := &fakeClient{clk: vclock.New(vclock.Epoch)}
		client := &lockedClient{c: fake}
		s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: &fakeState{},
			Jitter: noJitter(), CSINodes: &hangingCSINodes{fakeCSINodes{c: fake}}})
		if err != nil {
			t.Fatal(err)
		}
		s.DetachLease()
		nr, _ := NewRunner(RunnerOptions{Status: s, Clock: clk})
		cr, err := NewCSINodeRunner(s.DetachCSINode(), clk)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { _ = cr.Run(ctx) })
		wg.Go(func() { _ = nr.Run(ctx) })
		time.Sleep(5 * time.Second)
		client.mu.Lock()
		var ready string
		if fake.node != nil {
			ready = readyOf(fake.node)
		}
		client.mu.Unlock()
		cancel()
		wg.Wait()
		if want := "False CSINode is not yet initialized"; ready != want {
			t.Errorf("5s after the start while the CSINode read hangs: node Ready %q, want registered with %q (v1.35 registers at 100ms)", ready, want)
		}
	})
}
