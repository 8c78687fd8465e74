package nodestatus

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// renewUntil calls Renew at every wake-up until the instant until; before is called first at
// each wake-up, with its instant.
func renewUntil(l *Lease, clk *vclock.Clock, until time.Duration, before func(time.Duration)) {
	for {
		before(clk.Since(vclock.Epoch))
		_ = l.Renew(context.Background()) // failures are in the calls
		next, _ := l.NextWake()
		if next.After(vclock.Epoch.Add(until)) {
			return
		}
		// A call that took time may have moved the clock past the wake-up already.
		if next.After(clk.Now()) {
			clk.Set(next)
		}
	}
}

// TestLeaseController checks the kubelet's lease controller, detached from the node status: it
// reads the lease only when it has none or an update failed, creates it only once its owner, the
// node, exists, and backs off while the lease cannot be read.
func TestLeaseController(t *testing.T) {
	conflict := apierrors.NewConflict(coordinationv1.Resource("leases"), "node-1", errors.New("the object has been modified"))
	refused := errors.New("connection refused")
	for _, tc := range []struct {
		name string
		// at is called at each wake-up with the client and the instant.
		at   func(c *fakeClient, now time.Duration)
		want []string
	}{{
		name: "renewals update the lease last written",
		at: func(c *fakeClient, now time.Duration) {
			if now == 0 {
				c.node = &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}}
			}
		},
		want: []string{"0s get lease", "0s get", "0s lease", "10s lease", "20s lease", "30s lease"},
	}, {
		name: "no lease before its node exists",
		at: func(c *fakeClient, now time.Duration) {
			if now > 15*time.Second && c.node == nil {
				c.node = &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}}
			}
		},
		want: []string{"0s get lease", "0s get", "10s get lease", "10s get", "20s get lease", "20s get", "20s lease", "30s lease"},
	}, {
		name: "a conflict reads the lease again",
		at: func(c *fakeClient, now time.Duration) {
			if now == 0 {
				c.node = &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}}
			}
			if now == 20*time.Second {
				c.leaseErrs = []error{conflict}
			}
		},
		want: []string{"0s get lease", "0s get", "0s lease", "10s lease", "20s lease", "20s get lease", "20s lease", "30s lease"},
	}, {
		name: "failed updates are tried five times, then the lease is read back",
		at: func(c *fakeClient, now time.Duration) {
			if now == 0 {
				c.node = &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}}
			}
			if now == 10*time.Second {
				c.leaseErrs = []error{refused, refused, refused, refused, refused}
			}
		},
		want: []string{
			"0s get lease", "0s get", "0s lease",
			"10s lease", "10s lease", "10s lease", "10s lease", "10s lease", "10s get lease", "10s lease",
			"20s lease", "30s lease",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			clk := vclock.New(vclock.Epoch)
			client := &fakeClient{clk: clk}
			s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: &fakeState{}, Jitter: noJitter()})
			if err != nil {
				t.Fatal(err)
			}
			l := s.DetachLease()
			// The detached lease draws from a stream of its own, seeded from the Status' one: the
			// renewals here are exactly 10s apart.
			l.jitter = noJitter()
			renewUntil(l, clk, 35*time.Second, func(now time.Duration) { tc.at(client, now) })
			if diff := cmp.Diff(tc.want, client.calls); diff != "" {
				t.Errorf("API calls (-want +got):\n%s", diff)
			}
			if client.lease != nil {
				if got := client.lease.OwnerReferences; len(got) != 1 || got[0].UID != "node-uid" {
					t.Errorf("lease owner references = %v, want the node", got)
				}
				if got := *client.lease.Spec.LeaseDurationSeconds; got != 40 {
					t.Errorf("lease duration = %d, want 40", got)
				}
			}
		})
	}
}

// TestLeaseBacksOffWhileItCannotBeRead: backoffEnsureLease retries after 200ms, doubling to 7s.
func TestLeaseBacksOffWhileItCannotBeRead(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	client := &failingLeaseReads{fakeClient: fakeClient{clk: clk}}
	s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: &fakeState{}, Jitter: noJitter()})
	if err != nil {
		t.Fatal(err)
	}
	l := s.DetachLease()
	renewUntil(l, clk, 20*time.Second, func(time.Duration) {})
	want := []string{"0s get lease", "200ms get lease", "600ms get lease", "1.4s get lease", "3s get lease", "6.2s get lease", "12.6s get lease", "19.6s get lease"}
	if diff := cmp.Diff(want, client.calls); diff != "" {
		t.Errorf("API calls (-want +got):\n%s", diff)
	}
}

// failingLeaseReads is an API server that never answers a lease read.
type failingLeaseReads struct{ fakeClient }

func (c *failingLeaseReads) GetLease(context.Context, string, string) (*coordinationv1.Lease, error) {
	c.log("get lease")
	return nil, errors.New("connection refused")
}

// TestDetachedLeaseLeavesTheHeartbeat: once detached, Heartbeat no longer renews the lease.
func TestDetachedLeaseLeavesTheHeartbeat(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	client := &fakeClient{clk: clk}
	s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: &fakeState{}, Jitter: noJitter()})
	if err != nil {
		t.Fatal(err)
	}
	if s.DetachLease() == nil || s.DetachLease() != nil {
		t.Fatal("DetachLease() = nil the first time or not nil the second, want the lease once")
	}
	drive(t, s, clk, 11*time.Second)
	want := []string{
		"0s get",                                    // fastStatusUpdateOnce's first poll: no node yet
		"100ms create", "100ms get", "100ms status", // registered, and the first status written
		"100ms get", // fastStatusUpdateOnce: the node was registered Ready, nothing to do
		"10.1s get", // unchanged: not written until nodeStatusReportFrequency
	}
	if diff := cmp.Diff(want, client.calls); diff != "" {
		t.Errorf("API calls (-want +got):\n%s", diff)
	}
}
