package nodestatus

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// lockedClient shares a fakeClient between the node status runner and the lease runner.
type lockedClient struct {
	mu sync.Mutex
	c  *fakeClient
}

func (l *lockedClient) GetNode(ctx context.Context, name string) (*v1.Node, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c.GetNode(ctx, name)
}

func (l *lockedClient) CreateNode(ctx context.Context, node *v1.Node) (*v1.Node, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c.CreateNode(ctx, node)
}

func (l *lockedClient) PatchNodeStatus(ctx context.Context, original, node *v1.Node) (*v1.Node, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c.PatchNodeStatus(ctx, original, node)
}

func (l *lockedClient) GetLease(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c.GetLease(ctx, namespace, name)
}

func (l *lockedClient) CreateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c.CreateLease(ctx, lease)
}

func (l *lockedClient) UpdateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c.UpdateLease(ctx, lease)
}

// TestRunners: in `run` the node status and the lease controller run on goroutines of their
// own. Over 25s the node registers once (the Registered hook once), the lease is read once and
// then updated from the cached copy every 10s, whatever the node status does meanwhile.
func TestRunners(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.RealClock{}
		fake := &fakeClient{clk: vclock.New(vclock.Epoch)} // its stamps are not read here
		client := &lockedClient{c: fake}
		s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: &fakeState{}, Jitter: noJitter()})
		if err != nil {
			t.Fatal(err)
		}
		registered, first := 0, make(chan struct{})
		nr, err := NewRunner(RunnerOptions{Status: s, Clock: clk, Registered: func() {
			if registered++; registered == 1 {
				close(first)
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		lr, err := NewLeaseRunner(s.DetachLease(), clk)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := nr.Run(ctx); err != nil {
				t.Errorf("Runner.Run() = %v, want nil", err)
			}
		})
		// The lease runner starts once the node exists, so that the lease is created at once
		// (before, it would wait a period for its owner; TestLeaseController covers that).
		<-first
		wg.Go(func() {
			if err := lr.Run(ctx); err != nil {
				t.Errorf("LeaseRunner.Run() = %v, want nil", err)
			}
		})
		time.Sleep(25 * time.Second)
		cancel()
		wg.Wait()

		counts := map[string]int{}
		for _, call := range fake.calls {
			_, name, _ := strings.Cut(call, " ")
			counts[name]++
		}
		if counts["get lease"] != 1 || counts["lease"] != 3 {
			t.Errorf("calls %v, want the lease read once, created, and updated twice from the cached copy", counts)
		}
		if diff := cmp.Diff(1, counts["create"]); diff != "" {
			t.Errorf("node creations (-want +got):\n%s", diff)
		}
		if registered != 1 {
			t.Errorf("Registered called %d times, want 1", registered)
		}
	})
}

func TestNewRunnersMissingOptions(t *testing.T) {
	if _, err := NewRunner(RunnerOptions{}); !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Errorf("NewRunner(RunnerOptions{}) = %v, want ErrMissingOption", err)
	}
	if _, err := NewLeaseRunner(nil, nil); !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Errorf("NewLeaseRunner(nil, nil) = %v, want ErrMissingOption", err)
	}
	if _, err := NewCSINodeRunner(nil, nil); !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Errorf("NewCSINodeRunner(nil, nil) = %v, want ErrMissingOption", err)
	}
}

// lockedCSINodes shares the fakeClient of a lockedClient with the CSINode runner, under its lock.
type lockedCSINodes struct {
	l *lockedClient
	f *fakeCSINodes
}

func (c lockedCSINodes) GetNode(ctx context.Context, name string) (*v1.Node, error) {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	return c.f.GetNode(ctx, name)
}

func (c lockedCSINodes) GetCSINode(ctx context.Context, name string, opts metav1.GetOptions) (*storagev1.CSINode, error) {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	return c.f.GetCSINode(ctx, name, opts)
}

func (c lockedCSINodes) CreateCSINode(ctx context.Context, cn *storagev1.CSINode) (*storagev1.CSINode, error) {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	return c.f.CreateCSINode(ctx, cn)
}

func (c lockedCSINodes) UpdateCSINode(ctx context.Context, cn *storagev1.CSINode) (*storagev1.CSINode, error) {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	return c.f.UpdateCSINode(ctx, cn)
}

func (c lockedCSINodes) DeleteCSINode(ctx context.Context, name string) error {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	return c.f.DeleteCSINode(ctx, name)
}

// TestCSINodeRunner: in `run` the CSINode's initialization runs on a goroutine of its own, and
// the node status reads the storage error it publishes: the node registers NotReady ("CSINode is
// not yet initialized"), the runner creates the CSINode once it can read the node, ends, and
// fastStatusUpdateOnce reports the node Ready. A second DetachCSINode has nothing to hand over.
func TestCSINodeRunner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.RealClock{}
		fake := &fakeClient{clk: vclock.New(vclock.Epoch)}
		client := &lockedClient{c: fake}
		csi := &fakeCSINodes{c: fake}
		s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: &fakeState{},
			Jitter: noJitter(), CSINodes: lockedCSINodes{l: client, f: csi}})
		if err != nil {
			t.Fatal(err)
		}
		s.DetachLease()
		detached := s.DetachCSINode()
		if s.DetachCSINode() != nil {
			t.Error("DetachCSINode() a second time is not nil")
		}
		nr, _ := NewRunner(RunnerOptions{Status: s, Clock: clk})
		cr, err := NewCSINodeRunner(detached, clk)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		done := make(chan struct{})
		wg.Go(func() {
			defer close(done)
			if err := cr.Run(ctx); err != nil {
				t.Errorf("CSINodeRunner.Run() = %v, want nil", err)
			}
		})
		wg.Go(func() { _ = nr.Run(ctx) })
		time.Sleep(5 * time.Second)
		select {
		case <-done:
		default:
			t.Error("CSINodeRunner still running 5s after the start, want it done once the CSINode exists")
		}
		client.mu.Lock()
		ready, created := "none", csi.csiNode != nil
		if fake.node != nil {
			ready = readyOf(fake.node)
		}
		client.mu.Unlock()
		cancel()
		wg.Wait()
		if !created {
			t.Error("no CSINode 5s after the start")
		}
		if want := "True " + readyMessage; ready != want {
			t.Errorf("node Ready %q 5s after the start, want %q", ready, want)
		}
	})
}
