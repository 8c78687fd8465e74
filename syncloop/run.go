package syncloop

import (
	"context"
	"fmt"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/podconfig"
)

// Runner drives a Loop on a real clock: the kubelet's syncLoop goroutine. One goroutine reads
// config updates and sleeps until the Loop's next wake-up; every call into the Loop is made from
// it.
type Runner struct {
	loop    *Loop
	updates <-chan podconfig.Update
	calls   <-chan func()
	clock   clock.WithTicker
	settled func()
	asks    <-chan struct{}
	asked   func()
}

// RunnerOptions configure a Runner.
type RunnerOptions struct {
	// Loop is the core the Runner drives. Required.
	Loop *Loop
	// Updates is PodConfig's output, the kubelet's configCh. Required.
	Updates <-chan podconfig.Update
	// Clock wakes the Runner when the Loop's next work is due. Required.
	Clock clock.WithTicker
	// Settled, if set, is called on the Runner's goroutine after every pass, once the Loop has
	// settled: the moment to read the cores, for example to publish a snapshot of them.
	Settled func()
	// Calls, if set, are functions to run on the Runner's goroutine between passes: how the
	// goroutines beside the loop (the status manager's) reach the cores the loop owns.
	Calls <-chan func()
	// Asks, if set, signal Asked, which the Runner calls on its goroutine between passes: a
	// request with nothing to wait for, such as the kubelet server's for a snapshot, which
	// needs no goroutine of its own to carry it as a call. Both or neither.
	Asks  <-chan struct{}
	Asked func()
}

func (o RunnerOptions) validate() error {
	var missing minikubelet.Missing
	missing.Check("Loop", o.Loop == nil)
	missing.Check("Updates", o.Updates == nil)
	missing.Check("Clock", o.Clock == nil)
	missing.Check("Asked", o.Asks != nil && o.Asked == nil)
	missing.Check("Asks", o.Asks == nil && o.Asked != nil)
	return missing.Err("new sync loop runner")
}

// NewRunner returns a Runner that feeds the updates to the Loop and wakes it on the clock.
func NewRunner(opts RunnerOptions) (*Runner, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	r := &Runner{loop: opts.Loop, updates: opts.Updates, calls: opts.Calls, clock: opts.Clock, settled: opts.Settled,
		asks: opts.Asks, asked: opts.Asked}
	// The Runner owns the Loop from here on: the Loop reads the updates queued during its passes
	// through it. A second Runner would take the channel's reads from the first.
	if r.loop.queued != nil {
		return nil, fmt.Errorf("new sync loop runner: the loop already has a runner")
	}
	r.loop.queued = r.readQueued
	return r, nil
}

// readQueued hands the Loop, without waiting, the updates queued when it is called, and no more:
// a source that keeps sending does not hold the PLEG, the workers and the ticks off, as the
// kubelet's select takes one ready channel at a time. A closed channel is left to Run, which logs
// it at its next read (a closed channel stays readable).
func (r *Runner) readQueued(ctx context.Context) {
	logger := klog.FromContext(ctx)
	for n := len(r.updates); n > 0; n-- {
		select {
		case u, ok := <-r.updates:
			if !ok {
				return
			}
			r.step(ctx, logger, u)
		default:
			return
		}
	}
}

// Run advances the Loop until ctx is done and returns nil then. Step and Advance errors are
// logged, not returned: the kubelet logs them and keeps looping. A closed updates channel is
// logged and no longer read; the kubelet's syncLoop would return, but a runner returns only when
// its context ends, so the Loop keeps running the pods it has.
func (r *Runner) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	updates := r.updates
	r.advance(ctx, logger)
	wake := minikubelet.NewWake(r.clock)
	defer wake.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case u, ok := <-updates:
			if !ok {
				logger.Info("Update channel is closed, no more pod updates")
				updates = nil
				continue
			}
			r.step(ctx, logger, u)
			// The updates that queued while the loop was busy are read before the pod workers
			// run again. The kubelet's sync loop reads its config channel while the workers sync
			// on goroutines of their own, so an update that arrives during a sync replaces the
			// worker's pending update before the worker takes it at the sync's end: when a static
			// pod's sync deletes and recreates its mirror pod, the watch's DELETE and REMOVE of
			// the old mirror and the ADD of the new one, all delivered during the sync, are
			// handled by then, and the next sync sees the new mirror. Here the loop runs the
			// workers itself, so it reads what queued first (a replay merges every pending update
			// before the loop advances, the same order).
			r.readQueued(ctx)
			r.advance(ctx, logger)
		case f := <-r.calls:
			f()
		case <-r.asks:
			r.asked()
		case <-wake.At(r.next()):
			r.advance(ctx, logger)
		}
	}
}

// step hands the loop one config update; a failure is logged, as the kubelet logs it.
func (r *Runner) step(ctx context.Context, logger klog.Logger, u podconfig.Update) {
	if err := r.loop.Step(ctx, ConfigUpdate{u}); err != nil {
		logger.Error(err, "Failed to handle pod update", "op", u.Op, "source", u.Source)
	}
}

func (r *Runner) advance(ctx context.Context, logger klog.Logger) {
	// Work due now can make more work due now (a sync that ends at once, a requeue); Settle runs
	// it all before the Runner sleeps, and gives up after a bound so that a bug cannot spin
	// forever. At shutdown an API call in flight sees the cancelled context; that is not a failure.
	if err := r.loop.Settle(ctx); err != nil && ctx.Err() == nil {
		logger.Error(err, "Sync loop iteration failed")
	}
	if r.settled != nil {
		r.settled()
	}
}

// next is the Loop's next wake-up; the Loop always has one (its sync tick).
func (r *Runner) next() time.Time {
	next, _ := r.loop.NextWake()
	return next
}
