package nodestatus

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// The lease controller's retries (component-helpers' lease controller).
const (
	// maxLeaseUpdateRetries is how many updates one renewal tries at once before it gives up
	// until the next period.
	maxLeaseUpdateRetries = 5
	// leaseBackoffMin and leaseBackoffMax bound the delay between attempts to read or create
	// the lease while they fail (backoffEnsureLease).
	leaseBackoffMin = 200 * time.Millisecond
	leaseBackoffMax = 7 * time.Second
)

// Lease is the kubelet's node lease controller as a core: every LeaseRenewPeriod it renews
// kube-node-lease/<node> by updating the lease it wrote last, and reads the lease from the API
// server only when it has none yet or an update failed. A new lease is created only once its
// owner, the node, can be read (the kubelet's setNodeOwnerFunc). A Lease is driven by one
// goroutine: the node status' own heartbeat, or the lease controller's runner once detached
// (Status.DetachLease).
type Lease struct {
	name   string
	clock  clock.PassiveClock
	tracer trace.Tracer
	client Client
	// latest is the lease as last written or read; nil until then and after a failed update.
	latest *coordinationv1.Lease
	// next is when the next renewal is due, and backoff the delay after a failed read.
	next    time.Time
	backoff time.Duration
	// jitter draws the renew interval's jitter.
	jitter *rand.Rand
}

// newLeaseController returns the lease core of the node, its first renewal due at once.
func newLeaseController(o Options, jitter *rand.Rand) *Lease {
	return &Lease{name: o.NodeName, clock: o.Clock, tracer: o.Tracer, client: o.Client, next: o.Clock.Now(), jitter: jitter}
}

// NextWake returns when the next renewal is due.
func (l *Lease) NextWake() (time.Time, bool) { return l.next, true }

// Renew renews the lease when a renewal is due: the lease controller's sync. A failure is traced
// and returned. As the controller's sliding JitterUntil, the next renewal is the renew interval
// plus up to 4% after this one ends, or after the back-off when the lease could not be read.
func (l *Lease) Renew(ctx context.Context) error {
	now := l.clock.Now()
	if now.Before(l.next) {
		return nil
	}
	l.next = time.Time{}
	err := l.sync(ctx, now)
	if l.next.IsZero() {
		l.next = l.clock.Now().Add(jitter(l.jitter, LeaseRenewPeriod, periodJitter))
	}
	if err != nil {
		l.tracer.Emit(trace.Event{Component: trace.Node, Event: trace.KindError, Pod: l.name, Reason: "FailedToRenewLease", Message: err.Error(), Func: "renewLease"})
		return fmt.Errorf("renew lease of node %s: %w", l.name, err)
	}
	return nil
}

// sync updates the lease last written, and falls back to reading it (creating it if it does
// not exist) when there is none or the update failed.
func (l *Lease) sync(ctx context.Context, now time.Time) error {
	var errs []error
	if l.latest != nil {
		err := l.retryUpdate(ctx, l.latest, now)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	lease, created, err := l.ensure(ctx, now)
	if err != nil {
		// backoffEnsureLease blocks the controller, retrying after a doubling delay, which it
		// sleeps once the failed call has returned.
		l.backoff = min(max(2*l.backoff, leaseBackoffMin), leaseBackoffMax)
		l.next = l.clock.Now().Add(l.backoff)
		return errors.Join(append(errs, err)...)
	}
	l.backoff = 0
	l.latest = lease
	if lease == nil || created {
		// Not created for want of its owner (tried again next period), or just created.
		return nil
	}
	if err := l.retryUpdate(ctx, lease, now); err != nil {
		return err
	}
	return nil
}

// ensure reads the lease, and creates it when it does not exist and its owner can be read. It
// returns nil without an error when the owner cannot be read yet.
func (l *Lease) ensure(ctx context.Context, now time.Time) (lease *coordinationv1.Lease, created bool, err error) {
	lease, err = l.client.GetLease(ctx, LeaseNamespace, l.name)
	if err == nil {
		return lease, false, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, false, err
	}
	fresh, err := l.newLease(ctx, nil, now)
	if err != nil {
		return nil, false, nil
	}
	if lease, err = l.client.CreateLease(ctx, fresh); err != nil {
		return nil, false, err
	}
	return lease, true, nil
}

// retryUpdate writes base renewed at now, at most maxLeaseUpdateRetries times in a row; after a
// conflict it reads the lease again first.
func (l *Lease) retryUpdate(ctx context.Context, base *coordinationv1.Lease, now time.Time) error {
	var last error
	for range maxLeaseUpdateRetries {
		upd, err := l.newLease(ctx, base, now)
		if err != nil {
			last = err
			continue
		}
		lease, err := l.client.UpdateLease(ctx, upd)
		if err == nil {
			l.latest = lease
			return nil
		}
		last = err
		if apierrors.IsConflict(err) {
			if fresh, _, err := l.ensure(ctx, now); err == nil && fresh != nil {
				base = fresh
			}
		}
	}
	l.latest = nil
	return fmt.Errorf("failed %d attempts to update lease: %w", maxLeaseUpdateRetries, last)
}

// newLease is the lease renewed at now: base's copy, or a new one, with the node as its owner.
// The owner is read from the API server while the lease has none (setNodeOwnerFunc); an error
// then stops the write.
func (l *Lease) newLease(ctx context.Context, base *coordinationv1.Lease, now time.Time) (*coordinationv1.Lease, error) {
	var lease *coordinationv1.Lease
	if base == nil {
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: l.name, Namespace: LeaseNamespace}}
	} else {
		lease = base.DeepCopy()
	}
	renew := metav1.NewMicroTime(now)
	lease.Spec.HolderIdentity = ptr.To(l.name)
	lease.Spec.LeaseDurationSeconds = ptr.To[int32](leaseDurationSeconds)
	lease.Spec.RenewTime = &renew
	if len(lease.OwnerReferences) == 0 {
		node, err := l.client.GetNode(ctx, l.name)
		if err != nil {
			return nil, fmt.Errorf("get node %s to own its lease: %w", l.name, err)
		}
		lease.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: l.name, UID: node.UID}}
	}
	return lease, nil
}
