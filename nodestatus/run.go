package nodestatus

import (
	"context"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
)

// Runner is the kubelet's node status loop in `run`: registration, fastStatusUpdateOnce and
// syncNodeStatus every nodeStatusUpdateFrequency, on a goroutine of their own beside the sync
// loop. It owns its Status: nothing else may call it once Run started.
type Runner struct {
	status     *Status
	clock      clock.WithTicker
	registered func()
}

// RunnerOptions configure a Runner.
type RunnerOptions struct {
	// Status is the core the Runner drives. Required.
	Status *Status
	// Clock wakes the Runner when the Status' next work is due. Required.
	Clock clock.WithTicker
	// Registered, if set, is called once, on the Runner's goroutine, when the node is first
	// registered.
	Registered func()
}

// NewRunner returns a Runner, or an error wrapping ErrMissingOption.
func NewRunner(opts RunnerOptions) (*Runner, error) {
	var missing minikubelet.Missing
	missing.Check("Status", opts.Status == nil)
	missing.Check("Clock", opts.Clock == nil)
	if err := missing.Err("new node status runner"); err != nil {
		return nil, err
	}
	return &Runner{status: opts.Status, clock: opts.Clock, registered: opts.Registered}, nil
}

// Run registers the node and keeps its status until ctx is done, and returns nil then. Failures
// are traced and logged, and retried on the Status' schedule.
func (r *Runner) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	s := r.status
	notified := false
	wake := minikubelet.NewWake(r.clock)
	defer wake.Stop()
	for {
		if err := s.Register(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "Unable to register node with API server")
		}
		if !notified && s.Registered() {
			notified = true
			if r.registered != nil {
				r.registered()
			}
		}
		if err := s.Heartbeat(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "Unable to update node status")
		}
		next, _ := s.NextWake()
		if !wake.Sleep(ctx, next, nil) {
			return nil
		}
	}
}

// LeaseRunner is the kubelet's node lease controller in `run`, on a goroutine of its own. It
// owns its Lease (from Status.DetachLease).
type LeaseRunner struct {
	lease *Lease
	clock clock.WithTicker
}

// NewLeaseRunner returns a LeaseRunner for lease, or an error wrapping ErrMissingOption.
func NewLeaseRunner(lease *Lease, clk clock.WithTicker) (*LeaseRunner, error) {
	var missing minikubelet.Missing
	missing.Check("lease", lease == nil)
	missing.Check("clock", clk == nil)
	if err := missing.Err("new lease runner"); err != nil {
		return nil, err
	}
	return &LeaseRunner{lease: lease, clock: clk}, nil
}

// Run renews the lease until ctx is done, and returns nil then.
func (r *LeaseRunner) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	wake := minikubelet.NewWake(r.clock)
	defer wake.Stop()
	for {
		if err := r.lease.Renew(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "Failed to renew the node lease")
		}
		next, _ := r.lease.NextWake()
		if !wake.Sleep(ctx, next, nil) {
			return nil
		}
	}
}

// CSINodeRunner is the CSI volume plugin's initializeCSINode in `run`, on a goroutine of its own.
// It owns its CSINode (from Status.DetachCSINode).
type CSINodeRunner struct {
	csi   *CSINode
	clock clock.WithTicker
}

// NewCSINodeRunner returns a CSINodeRunner for csi, or an error wrapping ErrMissingOption.
func NewCSINodeRunner(csi *CSINode, clk clock.WithTicker) (*CSINodeRunner, error) {
	var missing minikubelet.Missing
	missing.Check("csi", csi == nil)
	missing.Check("clock", clk == nil)
	if err := missing.Err("new CSINode runner"); err != nil {
		return nil, err
	}
	return &CSINodeRunner{csi: csi, clock: clk}, nil
}

// Run initializes the CSINode, and returns nil once it is done or has given up (the kubelet's
// goroutine ends there too; its process exits after the last failure), or when ctx is done.
func (r *CSINodeRunner) Run(ctx context.Context) error {
	wake := minikubelet.NewWake(r.clock)
	defer wake.Stop()
	for {
		r.csi.Step(ctx)
		next, ok := r.csi.NextWake()
		if !ok || !wake.Sleep(ctx, next, nil) {
			return nil
		}
	}
}
