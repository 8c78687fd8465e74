package syncloop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/status"
	"github.com/minikubelet/minikubelet/trace"
)

// Loop is the kubelet's sync loop: it dispatches inputs to the pod handlers, runs housekeeping,
// implements the four sync functions the pod workers call, and keeps the node object alive.
//
// A Loop is a core: it has no goroutines and is not safe for concurrent use. Step and Advance are
// called from one goroutine, the scenario engine's or the Runner's.
type Loop struct {
	opts    Options
	workers *podworkers.Workers
	status  *status.Manager
	// backoff is the crash-loop back-off shared by every pod, the kubelet's kl.backOff. (The
	// image-pull back-off lives in the runtime, as the kubelet's imageBackOff does.)
	backoff *fakeruntime.Backoff
	// reasons is the kubelet's reasonCache: why the last runtime sync could not start a container.
	reasons reasonCache
	// seen is the set of sources that delivered at least one update, the kubelet's sourcesReady.
	seen sets.Set[string]
	// ticks holds when each periodic input is next due.
	ticks ticks
	// deferred holds inputs that arrived while the runtime state had errors, in arrival order.
	deferred []Input
	// skipping records which skips are in progress, so that each is traced once.
	skipping skipping
	// kills are SyncTerminatingPod calls whose kill ends after the call returned.
	kills killQueue
	// node is the node object's registration and heartbeat state.
	node nodeState
	// rt is when the runtime last answered its status check.
	rt runtimeState
}

// skipping is true for a part of the loop while it is held back: dispatch while the PLEG is
// unhealthy, housekeeping while a source has not been seen.
type skipping struct {
	dispatch, housekeeping bool
}

// ticks are the due times of the kubelet's tickers.
type ticks struct {
	sync, housekeeping time.Time
}

// New returns a Loop and builds its pod workers, with the Loop as their Syncer.
func New(opts Options) (*Loop, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new sync loop: %w", err)
	}
	if opts.Tracer == nil {
		opts.Tracer = trace.Discard
	}
	now := opts.Clock.Now()
	l := &Loop{
		opts:    opts,
		backoff: fakeruntime.NewBackoff(opts.Clock),
		reasons: reasonCache{},
		seen:    sets.New[string](),
		ticks:   ticks{sync: now.Add(SyncPeriod), housekeeping: now.Add(HousekeepingPeriod)},
		kills:   killQueue{},
	}
	wopts := opts.Workers
	wopts.Syncer = l
	if wopts.Clock == nil {
		wopts.Clock = opts.Clock
	}
	if wopts.Tracer == nil {
		wopts.Tracer = opts.Tracer
	}
	if wopts.Rand == nil && opts.Rand != nil {
		wopts.Rand = opts.Rand
	}
	if wopts.Cache == nil {
		wopts.Cache = opts.Cache
	}
	if wopts.Queue == nil {
		wopts.Queue = opts.WorkQueue
	}
	l.workers = podworkers.New(wopts)

	sopts := opts.Status
	if sopts.Clock == nil {
		sopts.Clock = opts.Clock
	}
	if sopts.Tracer == nil {
		sopts.Tracer = opts.Tracer
	}
	if sopts.PodManager == nil {
		sopts.PodManager = opts.PodManager
	}
	if sopts.DeletionSafety == nil {
		sopts.DeletionSafety = l
	}
	l.status = status.New(sopts)
	return l, nil
}

// Workers returns the pod workers the Loop built, for callers that check invariants or inspect
// pod states.
func (l *Loop) Workers() *podworkers.Workers { return l.workers }

// StatusManager returns the status manager the Loop built.
func (l *Loop) StatusManager() *status.Manager { return l.status }

// PodCouldHaveRunningContainers reports whether the pod's worker may still have containers
// running: the kubelet's podDeletionSafety, which keeps a terminal phase out of the API until the
// pod is stopped.
func (l *Loop) PodCouldHaveRunningContainers(pod *v1.Pod) bool {
	return l.workers.CouldHaveRunningContainers(pod.UID)
}

// SourcesSeen returns the sources the loop has received an update from, sorted.
func (l *Loop) SourcesSeen() []string { return sets.List(l.seen) }

// ErrUnsupportedOp is returned by Step for a config update whose Op the sync loop does not
// handle: SET (the kubelet runs PodConfig in incremental mode) or a value outside the enum.
var ErrUnsupportedOp = errors.New("unsupported pod operation")

// Step handles one input as the kubelet's syncLoopIteration handles one ready channel. While the
// PLEG is unhealthy nothing is dispatched: config updates and PLEG events wait in arrival order,
// and each ticker keeps one pending tick, as a Go ticker's channel does; they are dispatched by the
// first Advance after the PLEG is healthy again.
func (l *Loop) Step(ctx context.Context, in Input) error {
	if in == nil {
		return nil
	}
	if !l.healthy() {
		l.deferInput(in)
		return nil
	}
	err := l.dispatchDeferred(ctx)
	return errors.Join(err, l.dispatch(ctx, in))
}

// dispatchDeferred dispatches the inputs held while the PLEG was unhealthy, oldest first.
func (l *Loop) dispatchDeferred(ctx context.Context) error {
	var errs []error
	for len(l.deferred) > 0 {
		in := l.deferred[0]
		l.deferred = l.deferred[1:]
		errs = append(errs, l.dispatch(ctx, in))
	}
	l.deferred = nil
	return errors.Join(errs...)
}

func (l *Loop) dispatch(ctx context.Context, in Input) error {
	switch in := in.(type) {
	case ConfigUpdate:
		return l.handleConfig(ctx, in)
	case PLEGEvent:
		l.handlePLEG(ctx, in)
	case SyncTick:
		l.handleSyncTick(ctx)
	case HousekeepingTick:
		return l.handleHousekeepingTick(ctx)
	}
	return nil
}

// healthy reports whether the runtime state allows dispatch: the check syncLoop makes before each
// iteration. It traces the transitions between healthy and not.
func (l *Loop) healthy() bool {
	err := l.runtimeErrors()
	switch {
	case err != nil && !l.skipping.dispatch:
		l.skipping.dispatch = true
		l.emit(trace.Event{Event: "skip", Reason: "RuntimeErrors", Message: strings.ReplaceAll(err.Error(), "\n", "; "), Func: "syncLoop"})
	case err == nil && l.skipping.dispatch:
		l.skipping.dispatch = false
		l.emit(trace.Event{Event: "resume", Func: "syncLoop"})
	}
	return err == nil
}

// deferInput keeps in until dispatch resumes. Ticks are coalesced to one pending tick each.
func (l *Loop) deferInput(in Input) {
	switch in.(type) {
	case SyncTick, HousekeepingTick:
		for _, d := range l.deferred {
			if d == in {
				return
			}
		}
	}
	l.deferred = append(l.deferred, in)
}

// Advance does every piece of work due at the clock's current time, in a fixed order. Errors
// from individual steps do not stop the others; they are returned joined.
func (l *Loop) Advance(ctx context.Context) error {
	now := l.opts.Clock.Now()
	var errs []error
	if l.opts.NodeClient != nil && !l.node.registered {
		errs = append(errs, l.registerNode(ctx, now))
	}
	l.opts.Runtime.Advance()
	l.updateRuntimeUp(now)
	l.completeKills(now)
	if due(l.plegNextWake(), now) {
		for _, e := range l.opts.PLEG.Relist() {
			errs = append(errs, l.Step(ctx, PLEGEvent{e}))
		}
	}
	if len(l.deferred) > 0 && l.healthy() {
		errs = append(errs, l.dispatchDeferred(ctx))
	}
	l.workers.Step(ctx)
	if due(l.ticks.sync, now) {
		l.ticks.sync = nextTick(l.ticks.sync, SyncPeriod, now)
		errs = append(errs, l.Step(ctx, SyncTick{}))
	}
	if due(l.ticks.housekeeping, now) {
		l.ticks.housekeeping = nextTick(l.ticks.housekeeping, HousekeepingPeriod, now)
		errs = append(errs, l.Step(ctx, HousekeepingTick{}))
	}
	errs = append(errs, l.status.Step(ctx))
	if l.opts.NodeClient != nil {
		errs = append(errs, l.heartbeat(ctx, now))
	}
	return errors.Join(errs...)
}

// NextWake returns the earliest instant at which Advance has work: the minimum over the runtime,
// pending kill completions, the PLEG, the pod workers, the tickers, the status manager and the
// node heartbeat. Deferred inputs make it now once the PLEG can be healthy again.
func (l *Loop) NextWake() time.Time {
	w := l.ticks.sync
	earliest := func(t time.Time) {
		if !t.IsZero() && t.Before(w) {
			w = t
		}
	}
	earliest(l.ticks.housekeeping)
	earliest(l.runtimeNextWake())
	earliest(l.kills.nextWake())
	earliest(l.plegNextWake())
	earliest(l.workersNextWake())
	earliest(l.statusNextWake())
	if l.opts.NodeClient != nil {
		earliest(l.node.nextWake(l.opts.Clock.Now()))
	}
	earliest(l.rt.nextCheck)
	if len(l.deferred) > 0 && l.runtimeErrors() == nil {
		earliest(l.opts.Clock.Now())
	}
	return w
}

// due reports whether a wake-up at t is due at now. A zero t means no wake-up.
func due(t, now time.Time) bool { return !t.IsZero() && !t.After(now) }

// nextTick returns the first tick after now on the grid of period that starts at last, dropping
// missed ticks as a Go ticker does.
func nextTick(last time.Time, period time.Duration, now time.Time) time.Time {
	next := last.Add(period)
	for !next.After(now) {
		next = next.Add(period)
	}
	return next
}

// emit sends e with the sync loop's component unless it names another.
func (l *Loop) emit(e trace.Event) {
	if e.Component == "" {
		e.Component = trace.SyncLoop
	}
	l.opts.Tracer.Emit(e)
}

// The collaborators report "no wake-up" as (zero, false); the Loop folds that into a zero time.

func (l *Loop) plegHealthy() (bool, error) { return l.opts.PLEG.Healthy() }

func (l *Loop) plegNextWake() time.Time { return wake(l.opts.PLEG.NextWake()) }

func (l *Loop) runtimeNextWake() time.Time { return wake(l.opts.Runtime.NextWake()) }

func (l *Loop) workersNextWake() time.Time { return wake(l.workers.NextWake()) }

func (l *Loop) statusNextWake() time.Time { return wake(l.status.NextWake()) }

func wake(t time.Time, ok bool) time.Time {
	if !ok {
		return time.Time{}
	}
	return t
}
