package podworkers

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Defaults, with the kubelet's values.
const (
	// DefaultResyncInterval is the kubelet's SyncFrequency: a pod that synced without error is
	// queued again after jitter(1m, 0.5).
	DefaultResyncInterval = time.Minute
	// DefaultBackOffPeriod is how long a pod waits after a sync error, and how often a blocked
	// static pod retries, before jitter.
	DefaultBackOffPeriod = 10 * time.Second
	// networkNotReadyErrorMsg marks a sync error that is retried after jitter(1s, 0.5).
	networkNotReadyErrorMsg = "network is not ready"

	// jitterFactor is the kubelet's workerResyncIntervalJitterFactor and
	// workerBackOffPeriodJitterFactor.
	jitterFactor = 0.5
	// backOffOnTransientErrorPeriod is the base delay after a "network is not ready" error.
	backOffOnTransientErrorPeriod = time.Second
)

// ErrIllegalTransition is wrapped by the error of a state transition the lifecycle does not allow.
var ErrIllegalTransition = errors.New("illegal pod worker state transition")

// Options configures Workers.
type Options struct {
	// Syncer runs the four sync functions. Required.
	Syncer Syncer
	// Cache is the pod status cache. Required.
	Cache Cache
	// Queue receives the requeues. Required.
	Queue Queue
	// Clock gives the current time. Required.
	Clock clock.PassiveClock
	// ResyncInterval is the delay, before jitter, after a sync without error. Zero means
	// DefaultResyncInterval.
	ResyncInterval time.Duration
	// BackOffPeriod is the delay, before jitter, after a sync error. Zero means
	// DefaultBackOffPeriod.
	BackOffPeriod time.Duration
	// Rand supplies the jitter. Nil means a generator with a fixed seed.
	Rand Rand
	// Tracer receives the workers' events. Required; pass trace.Discard for none.
	Tracer trace.Tracer
	// Metrics receives the duration of every worker iteration. Nil records none.
	Metrics Metrics
}

// validate reports every missing required option (wrapping ErrMissingOption) and every invalid one.
func (o Options) validate() error {
	var missing []string
	if o.Syncer == nil {
		missing = append(missing, "Syncer")
	}
	if o.Cache == nil {
		missing = append(missing, "Cache")
	}
	if o.Queue == nil {
		missing = append(missing, "Queue")
	}
	if o.Clock == nil {
		missing = append(missing, "Clock")
	}
	if o.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	var errs []error
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption))
	}
	if o.ResyncInterval < 0 || o.BackOffPeriod < 0 {
		errs = append(errs, errors.New("ResyncInterval and BackOffPeriod must not be negative"))
	}
	return errors.Join(errs...)
}

// Workers is the kubelet's podWorkers as a passive core: one state machine per pod UID, driven by
// UpdatePod, Step and SyncKnownPods. It is a core: one goroutine drives it, and it is not safe for
// concurrent use. A sync function or an OnTerminated callback may call back into the Workers.
type Workers struct {
	syncer         Syncer
	cache          Cache
	queue          Queue
	clock          clock.PassiveClock
	resyncInterval time.Duration
	backOffPeriod  time.Duration
	rand           Rand
	tracer         trace.Tracer
	metrics        Metrics

	// pods is the kubelet's podSyncStatuses.
	pods map[types.UID]*podStatus
	// startedStatic is the kubelet's startedStaticPodsByFullname.
	startedStatic map[string]types.UID
	// waitingStatic is the kubelet's waitingToStartStaticPodsByFullname.
	waitingStatic map[string][]types.UID
	// podsSynced becomes true with the first SyncKnownPods.
	podsSynced bool
	// seq orders pending updates, so that Step starts workers in the order their updates arrived.
	seq uint64
	// held lets tests keep a worker from picking up its wake-ups, as the kubelet's tests do with
	// workerChannelFn. Nil outside tests.
	held map[types.UID]bool

	// wakes indexes, by arrival, the workers with a wake-up to pick up; during a Step also the
	// workers retrying their taken update against the cache. See index.go.
	wakes minHeap[wakeEntry]
	// busy indexes the busy syncs by (Done, seq).
	busy minHeap[busyEntry]
	// waiting holds the workers whose taken update waits for a newer cache, for the next Step.
	waiting []*podStatus
	// inPass is true while advance visits the wakes; entries added meanwhile wait in deferred.
	inPass   bool
	deferred []wakeEntry
	// onChange are told of every change of what the workers answer about a pod (OnChange).
	onChange []func(types.UID)
	// version numbers what housekeeping reads of the workers (Version).
	version uint64
	// known holds SyncKnownPods' buffers between calls.
	known knownBuffers
}

// knownBuffers are SyncKnownPods' maps and slice, cleared and reused at every call.
type knownBuffers struct {
	desired map[types.UID]bool
	workers map[types.UID]PodWorkerSync
	uids    []types.UID
}

// OnChange registers fn to be called, on the Workers' goroutine, right after every change of what
// the Workers answer about a pod: with its UID when its worker changes state (created,
// terminating, terminated, finished, forgotten) or picks up its termination (no container may
// start again), and with the empty UID when the first SyncKnownPods makes every pod without a
// worker answer as removed. Admission keeps its counts of the active pods from it; the volume
// manager's populator looks again at its next pass, where the kubelet's polls every 100ms. fn
// must not call back into the Workers. Register before the first update.
func (w *Workers) OnChange(fn func(uid types.UID)) {
	w.onChange = append(w.onChange, fn)
}

// Version returns a number that grows with every change of what housekeeping reads of the
// workers: a worker's state, its termination picked up, the first SyncKnownPods (every call of
// OnChange's functions), a restart requested, a worker's config pod appearing or changing
// between static and not (SyncKnownPods' HasConfig and Static), and which worker holds a static
// pod's full name. Two calls that return the same number have, between them, the same answers to
// SyncKnownPods, IsPodKnownTerminated, IsPodTerminationRequested and
// IsPodForMirrorPodTerminatingByFullName, and a SyncKnownPods between them that found every
// worker desired and none to restart changed nothing: housekeeping skips the pass's work when it
// proves nothing changed. Updates that only replace a worker's pending pod, as every periodic
// sync does, leave it alone.
func (w *Workers) Version() uint64 { return w.version }

// changed tells the OnChange functions of a change about the pod uid ("" for every unknown pod).
func (w *Workers) changed(uid types.UID) {
	w.version++
	for _, f := range w.onChange {
		f(uid)
	}
}

// New returns Workers configured by opts. A missing required option is an error wrapping
// ErrMissingOption.
func New(opts Options) (*Workers, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new pod workers: %w", err)
	}
	if opts.ResyncInterval == 0 {
		opts.ResyncInterval = DefaultResyncInterval
	}
	if opts.BackOffPeriod == 0 {
		opts.BackOffPeriod = DefaultBackOffPeriod
	}
	if opts.Rand == nil {
		opts.Rand = rand.New(rand.NewPCG(1, 1))
	}
	return &Workers{
		syncer:         opts.Syncer,
		cache:          opts.Cache,
		queue:          opts.Queue,
		clock:          opts.Clock,
		resyncInterval: opts.ResyncInterval,
		backOffPeriod:  opts.BackOffPeriod,
		rand:           opts.Rand,
		tracer:         opts.Tracer,
		metrics:        opts.Metrics,
		pods:           map[types.UID]*podStatus{},
		startedStatic:  map[string]types.UID{},
		waitingStatic:  map[string][]types.UID{},
		wakes:          minHeap[wakeEntry]{less: wakeLess},
		busy:           minHeap[busyEntry]{less: busyLess},
	}, nil
}

// podStatus is one worker: the kubelet's podSyncStatus with its timestamps and flags folded into
// one state field where they decide behaviour. It has more than a dozen fields because it is the
// kubelet's record of a pod's whole lifecycle; the times and flags are grouped to keep it readable.
type podStatus struct {
	uid      types.UID
	key      string // "namespace/name" for the trace
	fullname string // the kubelet's full name at the first update
	state    State
	times    lifecycleTimes
	flags    statusFlags
	// gracePeriod is the effective grace period in seconds once termination was requested; it
	// only goes down.
	gracePeriod int64
	// pending is the next update to process; a newer update replaces it (coalescing). It
	// points to pendingBuf or is nil: the update is copied in rather than moved to the heap at
	// every UpdatePod, and nothing keeps the pointer past the next update.
	pending    *UpdateOptions
	pendingBuf UpdateOptions
	// pendingSeq is when pending arrived, in the Workers' sequence.
	pendingSeq uint64
	// active accumulates what the worker last processed; it is replayed on phase transitions.
	// It points to activeBuf once set (every worker that starts has one): one allocation less
	// a pod, and nothing outside the worker holds the pointer.
	active    *UpdateOptions
	activeBuf UpdateOptions
	// waitingSlot backs the static pod waiting list of the worker's full name when the worker is
	// the first to wait for it, as nearly every static pod is: the list is never written in
	// place (it is resliced, and an append to its capacity of one copies), and the UID in it
	// never changes, so the list needs no array of its own.
	waitingSlot [1]types.UID
	// lastSyncTime is when the last sync ended; the next sync waits for a cache newer than it.
	lastSyncTime time.Time
	// work is the update the worker took and is waiting on the cache for, or is running.
	work *work
	// wakeKey is the key of the worker's live entry in the Workers' wakes, or 0 for none.
	wakeKey uint64
	// onTerminated and statusFns come from the kill requests received while terminating.
	onTerminated []func()
	statusFns    []func(*v1.PodStatus)
}

// lifecycleTimes are the kubelet's timestamps. The state field decides behaviour; these record
// when each step happened, for tests and readers.
type lifecycleTimes struct {
	synced, started, terminating, terminated time.Time
}

// statusFlags are the kubelet's flags that are not a state of their own.
type statusFlags struct {
	// signalled is the kubelet's one-slot wake-up channel holding a value.
	signalled bool
	// startedTerminating: the worker has picked up the terminating work, so no container will
	// start again.
	startedTerminating bool
	deleted            bool
	evicted            bool
	// restartRequested: a Create arrived for the UID while it was terminating.
	restartRequested bool
	// observedRuntime: a runtime-only kill was seen for the UID.
	observedRuntime bool
	// forgotten: the worker's history was deleted (forget). A UID's worker is only made when
	// its UID has none, so a worker is the one Workers.pods holds for its UID until then: the
	// indexes ask this flag instead of looking the UID up at every entry they visit.
	forgotten bool
}

// work is one iteration of the kubelet's podWorkerLoop, from startPodSync to completeWork.
type work struct {
	// state is the kubelet's WorkType when the update was taken; it picks the sync function.
	state State
	opts  UpdateOptions
	seq   uint64
	// called is set once the sync function was invoked.
	called bool
	// taken is when the worker took the update; the iteration's duration is measured from it.
	taken time.Time
	// done is when the sync's blocking work ends; set once the sync function returned.
	done   time.Time
	result Result
	err    error
	// canceled is set when the worker's context is cancelled while the sync waits (Result.Wait).
	canceled bool
}

// config is what SyncKnownPods reports of the worker's config pod: whether it has one, and
// whether it is static.
func (s *podStatus) config() (has, static bool) {
	sync := s.sync(false)
	return sync.HasConfig, sync.Static
}

// configChanged moves Version when the worker's config pod differs from what config said before
// a change of its pending or active update (hadConfig, wasStatic).
func (w *Workers) configChanged(s *podStatus, hadConfig, wasStatic bool) {
	if has, static := s.config(); has != hadConfig || static != wasStatic {
		w.version++
	}
}

func (s *podStatus) isStarted() bool              { return !s.times.started.IsZero() }
func (s *podStatus) isTerminationRequested() bool { return s.state >= Terminating }
func (s *podStatus) isTerminated() bool           { return s.state >= Terminated }

// workType is the kubelet's WorkType: a finished worker still reads as Terminated.
func (s *podStatus) workType() State {
	if s.state == Finished {
		return Terminated
	}
	return s.state
}

// legalTransitions lists every edge of the lifecycle; see the diagram in doc.go.
var legalTransitions = map[[2]State]bool{
	{stateNone, Sync}:         true, // first update
	{stateNone, Terminated}:   true, // first update of a terminal pod the runtime shows stopped
	{Sync, Terminating}:       true, // kill, deletion, terminal phase, terminal SyncPod, orphaned
	{Terminating, Terminated}: true, // SyncTerminatingPod succeeded
	{Terminating, Finished}:   true, // runtime-only pod stopped, or killed before it could start
	{Terminated, Finished}:    true, // SyncTerminatedPod succeeded, or a static pod never started
	{Sync, stateNone}:         true, // forgotten orphan that never started
	{Terminating, stateNone}:  true,
	{Terminated, stateNone}:   true,
	{Finished, stateNone}:     true, // forgotten by SyncKnownPods
}

// checkTransition returns an error wrapping ErrIllegalTransition if the lifecycle has no edge from
// from to to.
func checkTransition(from, to State) error {
	if legalTransitions[[2]State{from, to}] {
		return nil
	}
	return fmt.Errorf("from %q to %q: %w", from.traceName(), to.traceName(), ErrIllegalTransition)
}

// transition is the one place a worker's state changes. An illegal transition leaves the state as
// it was, is traced as an error, and is returned.
func (w *Workers) transition(s *podStatus, to State, fn string) error {
	if err := checkTransition(s.state, to); err != nil {
		err = fmt.Errorf("pod %s: %w", s.uid, err)
		w.emit(s, trace.Event{Event: trace.KindError, Reason: "IllegalTransition", Message: err.Error(), Func: fn})
		return err
	}
	from := s.state
	s.state = to
	w.emit(s, trace.Event{Event: trace.KindState, From: from.traceName(), To: to.traceName(), Func: fn})
	w.changed(s.uid)
	return nil
}

// emit sends e about the pod s to the tracer.
func (w *Workers) emit(s *podStatus, e trace.Event) {
	e.Component = trace.PodWorkers
	e.Pod = s.key
	e.UID = string(s.uid)
	w.tracer.Emit(e)
}

// nextSeq returns the next number in the arrival order of pending updates.
func (w *Workers) nextSeq() uint64 {
	w.seq++
	return w.seq
}

// jitter is the kubelet's wait.Jitter(d, 0.5): a delay uniform in [d, 1.5d).
func (w *Workers) jitter(d time.Duration) time.Duration {
	return d + time.Duration(w.rand.Float64()*jitterFactor*float64(d))
}

// setPending makes opts the pending update, in the worker's own storage.
func (s *podStatus) setPending(opts UpdateOptions) {
	s.pendingBuf = opts
	s.pending = &s.pendingBuf
}

// PodKey returns the trace key ("namespace/name") the worker of uid keeps, if it has one and it
// is namespace/name (kubecontainer.KeyKeeper): the components that trace the pod share it
// instead of building their own.
func (w *Workers) PodKey(uid types.UID, namespace, name string) (string, bool) {
	s := w.pods[uid]
	if s == nil || !kubecontainer.IsKeyOf(s.key, namespace, name) {
		return "", false
	}
	return s.key, true
}
