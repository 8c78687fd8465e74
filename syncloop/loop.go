package syncloop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// The sync loop's periods.
const (
	// SyncPeriod is the kubelet's syncTicker period: how often due work queue entries are synced.
	SyncPeriod = time.Second
	// HousekeepingPeriod is the kubelet's housekeepingPeriod: how often HandlePodCleanups runs.
	HousekeepingPeriod = 2 * time.Second
)

// MaxAdvancesPerInstant bounds how often the work due at one instant may make more work due at
// that same instant. Every driver of a Loop (Settle, the Runner, the replay engine) uses it, so a
// bug that spins fails the same way in run and in replay.
const MaxAdvancesPerInstant = 1000

// ErrLivelock is returned when the work due at one instant keeps making more work due at that
// instant, MaxAdvancesPerInstant times in a row.
var ErrLivelock = errors.New("made no progress in time")

// Loop is the kubelet's sync loop: it dispatches inputs to the pod handlers, ticks the sync and
// housekeeping tickers, holds dispatch back while the runtime state has errors, and wakes every
// collaborator when its work is due, in a fixed order.
//
// A Loop is a core: it has no goroutines and no lock. Step, Advance and Settle are called from one
// goroutine, the scenario engine's or the Runner's.
type Loop struct {
	opts Options
	// runtime is the runtime's optional Timed capability, nil when it has none.
	runtime Timed
	// seen is the set of sources that delivered at least one update, the kubelet's sourcesReady.
	seen sets.Set[string]
	// ticks holds when each periodic input is next due.
	ticks ticks
	// deferred holds inputs that arrived while the runtime state had errors, in arrival order.
	deferred []Input
	// skipping records which skips are in progress, so that each is traced once.
	skipping skipping
	// keyPod and key are the last pod a PLEG or probe event was traced for and its
	// "namespace/name": a relist hands over each pod's events together (keyOf).
	keyPod *v1.Pod
	key    string
	// asked is what getPodsToSync asks the sync loop handlers about (handlerPods).
	asked askedPods
	// queued, if set, hands the loop the config updates that queued while it was busy; a Runner
	// sets it (readQueued).
	queued func(ctx context.Context)
}

// readQueued handles the config updates that queued while the loop was busy, if the loop is
// driven by a Runner. The kubelet's sync loop reads its config channel while the pod workers sync
// on goroutines of their own, so a PLEG event or a sync tick seldom resolves a pod against a pod
// manager that lags behind updates already delivered (its select takes one ready channel at a
// time, at random, so it can). Here the workers sync on the loop's
// goroutine, and a pass whose syncs wait on the API server can last seconds: without this read, a
// static pod's sync that deleted its mirror pod could be followed, within the same pass, by a
// sync tick that hands its worker the deleted mirror once more, which it deletes a second time.
func (l *Loop) readQueued(ctx context.Context) {
	if l.queued != nil {
		l.queued(ctx)
	}
}

// askedPods are the pods some sync loop handler may ask for (PodSyncLoopFilter.MaySync), in the
// pod manager's order, as of the pod manager's version; valid is false until listed. versioned
// is nil, and every pod is asked about, unless the pod manager numbers its changes and every
// handler is one of filters.
type askedPods struct {
	versioned VersionedPods
	filters   []PodSyncLoopFilter
	valid     bool
	version   uint64
	pods      []*v1.Pod
}

// newAskedPods returns the handlers' pods for opts: filtered when they all filter.
func newAskedPods(opts Options) askedPods {
	versioned, ok := opts.Pods.(VersionedPods)
	if !ok {
		return askedPods{}
	}
	filters := make([]PodSyncLoopFilter, 0, len(opts.SyncLoopHandlers))
	for _, h := range opts.SyncLoopHandlers {
		f, ok := h.(PodSyncLoopFilter)
		if !ok {
			return askedPods{}
		}
		filters = append(filters, f)
	}
	return askedPods{versioned: versioned, filters: filters}
}

// skipping is true for a part of the loop while it is held back: dispatch while the runtime state
// has errors, housekeeping while a source has not been seen.
type skipping struct {
	dispatch, housekeeping bool
}

// ticks are the due times of the kubelet's tickers.
type ticks struct {
	sync, housekeeping time.Time
}

// New returns a Loop whose first ticks are one period from now.
func New(opts Options) (*Loop, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new sync loop: %w", err)
	}
	now := opts.Clock.Now()
	l := &Loop{
		opts:  opts,
		seen:  sets.New[string](),
		ticks: ticks{sync: now.Add(SyncPeriod), housekeeping: now.Add(HousekeepingPeriod)},
		asked: newAskedPods(opts),
	}
	if t, ok := opts.Runtime.(Timed); ok {
		l.runtime = t
	}
	return l, nil
}

// SourcesSeen returns the sources the loop has received an update from, sorted.
func (l *Loop) SourcesSeen() []string { return sets.List(l.seen) }

// Step handles one input as the kubelet's syncLoopIteration handles one ready channel. While the
// runtime state has errors nothing is dispatched: config updates and PLEG events wait in arrival
// order, and each ticker keeps one pending tick, as a Go ticker's channel does; they are
// dispatched by the first Advance after the runtime state is healthy again.
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

// stepPLEG is Step for a PLEG event, which it boxes as an Input only when it has to hold it
// back: Advance hands the loop every event of every relist.
func (l *Loop) stepPLEG(ctx context.Context, e PLEGEvent) error {
	if !l.healthy() {
		l.deferInput(e)
		return nil
	}
	err := l.dispatchDeferred(ctx)
	l.handlePLEG(ctx, e)
	return errors.Join(err, nil)
}

// dispatchDeferred dispatches the inputs held while the runtime state had errors, oldest first.
func (l *Loop) dispatchDeferred(ctx context.Context) error {
	var errs []error
	for len(l.deferred) > 0 {
		in := l.deferred[0]
		l.deferred = l.deferred[1:]
		errs = appendErr(errs, l.dispatch(ctx, in))
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
	case ProbeUpdate:
		l.handleProbe(ctx, in)
	}
	return nil
}

// healthy reports whether the runtime state allows dispatch: the check syncLoop makes before each
// iteration. It traces the transitions between healthy and not.
func (l *Loop) healthy() bool {
	err := l.opts.RuntimeState.Errors()
	switch {
	case err != nil && !l.skipping.dispatch:
		l.skipping.dispatch = true
		l.emit(trace.Event{Event: trace.KindSkip, Reason: "RuntimeErrors", Message: strings.ReplaceAll(err.Error(), "\n", "; "), Func: "syncLoop"})
	case err == nil && l.skipping.dispatch:
		l.skipping.dispatch = false
		l.emit(trace.Event{Event: trace.KindResume, Func: "syncLoop"})
	}
	return err == nil
}

// Dispatching reports whether the loop dispatches its inputs, as opposed to holding them back
// while the runtime state has errors: the kubelet's syncLoop stores its sync loop monitor (what
// /healthz/syncloop reads) only on the iterations it runs.
func (l *Loop) Dispatching() bool { return !l.skipping.dispatch }

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

// Advance does every piece of work due at the clock's current time, in a fixed order:
//
//	node registration → runtime → runtime state check → kill completions → volume manager
//	pass → queued config updates (Runner) → PLEG relist (each event is a PLEGEvent) → deferred
//	inputs → probe workers (each results change is a ProbeUpdate) → pending resize retry → pod
//	workers → queued config updates (Runner) → sync tick → housekeeping tick → status manager →
//	node heartbeat
//
// Go picks at random among ready channels; this order is one of the orders the kubelet can take,
// chosen so that replays are byte-identical. Errors from individual steps do not stop the others;
// they are returned joined.
func (l *Loop) Advance(ctx context.Context) error {
	now := l.opts.Clock.Now()
	// Most steps succeed: errs is appended to only on an error, so that an idle Advance, which
	// every node makes every second, allocates nothing.
	var errs []error
	if l.opts.Node != nil {
		errs = appendErr(errs, l.opts.Node.Register(ctx))
	}
	if l.runtime != nil {
		l.runtime.Advance()
	}
	l.opts.RuntimeState.Advance()
	l.opts.Kills.Advance()
	if l.opts.Volumes != nil {
		// Before the pod workers: a volume wait that looks at this instant sees this pass.
		l.opts.Volumes.Advance()
	}
	l.readQueued(ctx)
	if t, ok := l.opts.PLEG.NextWake(); ok && !t.After(now) {
		for _, e := range l.opts.PLEG.Relist() {
			errs = appendErr(errs, l.stepPLEG(ctx, PLEGEvent{e}))
		}
	}
	if len(l.deferred) > 0 && l.healthy() {
		errs = appendErr(errs, l.dispatchDeferred(ctx))
	}
	if l.opts.Prober != nil {
		if t, ok := l.opts.Prober.NextWake(); ok && !t.After(now) {
			for _, u := range l.opts.Prober.Advance(ctx) {
				errs = appendErr(errs, l.Step(ctx, ProbeUpdate{u}))
			}
		}
	}
	if r := l.opts.Resizes; r != nil {
		if t, ok := r.NextWake(); ok && !t.After(now) {
			l.handlePodSyncs(ctx, r.Advance(ctx))
		}
	}
	l.opts.Workers.Step(ctx)
	// The syncs may have taken a while: read what queued before the sync tick resolves pods.
	l.readQueued(ctx)
	if vclock.Due(l.ticks.sync, now) {
		l.ticks.sync = vclock.NextTick(l.ticks.sync, SyncPeriod, now)
		errs = appendErr(errs, l.Step(ctx, SyncTick{}))
	}
	if vclock.Due(l.ticks.housekeeping, now) {
		l.ticks.housekeeping = vclock.NextTick(l.ticks.housekeeping, HousekeepingPeriod, now)
		errs = appendErr(errs, l.Step(ctx, HousekeepingTick{}))
	}
	errs = appendErr(errs, l.opts.Status.Step(ctx))
	if l.opts.Node != nil {
		errs = appendErr(errs, l.opts.Node.Heartbeat(ctx))
	}
	return errors.Join(errs...)
}

// appendErr appends err to errs unless it is nil.
func appendErr(errs []error, err error) []error {
	if err == nil {
		return errs
	}
	return append(errs, err)
}

// NextWake returns the earliest instant at which Advance has work: the minimum over the tickers,
// the runtime, the runtime state, pending kill completions, the volume manager, the PLEG, the
// probe workers, the pod workers, the status manager and the node heartbeat. Deferred inputs make
// it now once the runtime state is healthy again. The tickers always run, so it always reports a wake-up.
func (l *Loop) NextWake() (time.Time, bool) {
	// The wakes fit in an array on the stack: the engine asks every node after every instant.
	var buf [12]vclock.Wake
	wakes := append(buf[:0],
		vclock.Wake{At: l.ticks.sync, OK: true},
		vclock.Wake{At: l.ticks.housekeeping, OK: true},
		vclock.WakeOf(l.opts.RuntimeState.NextWake()),
		vclock.WakeOf(l.opts.Kills.NextWake()),
		vclock.WakeOf(l.opts.PLEG.NextWake()),
		vclock.WakeOf(l.opts.Workers.NextWake()),
		vclock.WakeOf(l.opts.Status.NextWake()),
	)
	if l.runtime != nil {
		wakes = append(wakes, vclock.WakeOf(l.runtime.NextWake()))
	}
	if l.opts.Volumes != nil {
		wakes = append(wakes, vclock.WakeOf(l.opts.Volumes.NextWake()))
	}
	if l.opts.Prober != nil {
		wakes = append(wakes, vclock.WakeOf(l.opts.Prober.NextWake()))
	}
	if l.opts.Node != nil {
		wakes = append(wakes, vclock.WakeOf(l.opts.Node.NextWake()))
	}
	if l.opts.Resizes != nil {
		wakes = append(wakes, vclock.WakeOf(l.opts.Resizes.NextWake()))
	}
	if len(l.deferred) > 0 && l.opts.RuntimeState.Errors() == nil {
		wakes = append(wakes, vclock.Wake{At: l.opts.Clock.Now(), OK: true})
	}
	return vclock.Earliest(wakes...)
}

// Settle calls Advance until no work is due at the clock's current instant. It fails with
// ErrLivelock after MaxAdvancesPerInstant calls; Advance errors are returned joined, and do not
// stop it.
func (l *Loop) Settle(ctx context.Context) error {
	var errs []error
	for range MaxAdvancesPerInstant {
		errs = appendErr(errs, l.Advance(ctx))
		if t, _ := l.NextWake(); t.After(l.opts.Clock.Now()) {
			return errors.Join(errs...)
		}
	}
	errs = append(errs, fmt.Errorf("sync loop at %v: %w", l.opts.Clock.Now(), ErrLivelock))
	return errors.Join(errs...)
}

// emit sends e with the sync loop's component unless it names another.
func (l *Loop) emit(e trace.Event) {
	if e.Component == "" {
		e.Component = trace.SyncLoop
	}
	l.opts.Tracer.Emit(e)
}
