package status

import (
	"context"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
)

// Runner is the status manager's goroutine in `run`: the kubelet's status manager Start, which
// syncs a batch whenever podStatusChannel signals a changed status and every SyncPeriod, and
// makes the batch's API calls on its own goroutine, so that the sync loop never waits for them.
//
// The Manager stays a core of the goroutine that owns it (the sync loop's, which sets the
// statuses): the Runner takes each batch there through Do, with what its writes need of the pod
// manager and the pod workers, writes it from its own goroutine, and hands what the writes
// changed (the versions written, the statuses to forget, the startup tracker's records) back
// through Do.
type Runner struct {
	m       *Manager
	do      func(context.Context, func()) bool
	clock   clock.WithTicker
	changed minikubelet.Signal
}

// RunnerOptions configure a Runner.
type RunnerOptions struct {
	// Manager is the core. Required.
	Manager *Manager
	// Do runs f on the goroutine that owns Manager and returns once f has run; false when ctx
	// ended first. Required.
	Do func(ctx context.Context, f func()) bool
	// Clock wakes the Runner for full batches. Required.
	Clock clock.WithTicker
}

// NewRunner returns a Runner, or an error wrapping ErrMissingOption. It must be called before
// the Manager's owner starts: from then on every changed status signals the Runner, as
// SetPodStatus signals podStatusChannel.
func NewRunner(opts RunnerOptions) (*Runner, error) {
	var missing minikubelet.Missing
	missing.Check("Manager", opts.Manager == nil)
	missing.Check("Do", opts.Do == nil)
	missing.Check("Clock", opts.Clock == nil)
	if err := missing.Err("new status manager runner"); err != nil {
		return nil, err
	}
	r := &Runner{m: opts.Manager, do: opts.Do, clock: opts.Clock, changed: minikubelet.NewSignal()}
	opts.Manager.notify = r.changed.Notify
	return r, nil
}

// Run syncs batches until ctx is done, and returns nil then. A standalone Manager (no API
// client) has nothing to write: Run only waits, as the kubelet's Start returns at once.
func (r *Runner) Run(ctx context.Context) error {
	if r.m.client == nil {
		klog.FromContext(ctx).Info("Kubernetes client is nil, not starting status manager")
		<-ctx.Done()
		return nil
	}
	klog.FromContext(ctx).Info("Starting to sync pod status with apiserver")
	wake := minikubelet.NewWake(r.clock)
	defer wake.Stop()
	for {
		var (
			batch []write
			sw    statusWriter
			next  time.Time
		)
		if !r.do(ctx, func() { batch, sw, next = r.m.takeBatch(), r.m.writer(), r.m.nextFull }) {
			return nil
		}
		if len(batch) > 0 {
			done := make([]written, len(batch))
			for i, w := range batch {
				// A failure is traced; a later batch retries it, as in the kubelet.
				done[i], _ = sw.sync(ctx, w)
			}
			if !r.do(ctx, func() {
				for _, d := range done {
					r.m.apply(d)
				}
			}) {
				return nil
			}
		}
		if !wake.Sleep(ctx, next, r.changed) {
			return nil
		}
	}
}
