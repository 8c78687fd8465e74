package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/prober"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/sim/world"
	"github.com/minikubelet/minikubelet/syncloop"
)

// StaticPodPath is the static pod directory of every replay, kubeadm's usual path. It is
// virtual: replay keeps the directory in memory.
const StaticPodPath = "/etc/kubernetes/manifests"

// RunOptions configure one replay.
type RunOptions struct {
	// Out receives the trace as it is produced. Nil writes nothing.
	Out io.Writer
	// Format is the trace's format on Out.
	Format trace.Format
	// Until stops the replay at this virtual time. Zero plays every step.
	Until time.Duration
	// Report receives, in Format, each expectation's verdict and each step that could not be
	// carried out, at its instant, between the trace lines written to Out. Nil writes nothing.
	// It is apart from Out so that Out holds the trace alone, as a golden file does.
	Report io.Writer
	// KeepEvents keeps every trace event for Result.Events. Without it a replay forgets the
	// events no check will read again, so that a long replay's memory stays flat, and
	// Result.Events holds only the last of them.
	KeepEvents bool
	// View, when not nil, chooses the trace events written to Out; the expectations and
	// Result.Events see every event all the same. A View has state: one per replay.
	View *trace.View
	// Text are the text format's options on Out.
	Text trace.TextOptions
	// PodDiffs keeps, for Result.PodDiffs, what each UPDATE or RECONCILE changed in its pods.
	PodDiffs bool
	// CheckReadOnlyPods keeps a copy of every pod a PodConfig hands a sync loop, of every
	// stored pod the API server's watch hands an api source or its list hands the controllers,
	// of every stored node and lease the controllers read, and of every status a status manager
	// caches (taken after each settle of its node), and makes Run fail if any of them
	// was changed by the end of the replay: the pods are shared read-only by every component that
	// gets them (docs/design/008-shared-pods.md). It holds every such pod until the end; tests
	// use it.
	CheckReadOnlyPods bool
	// CheckStatusSkip makes every kubelet's pod sync build the status where its periodic skip
	// of an unchanged status would not (kubelet.Options.CheckStatusSkip), and makes Run fail if
	// the status manager did not find one of those statuses unchanged, as the skip takes it to
	// be; Result.StatusSkips counts the syncs that took the skip. Tests use it.
	CheckStatusSkip bool
	// WakeCache says how the engine uses the wakes a kubelet reports right after its Settle:
	// kept until the engine's next settle (WakeCacheOn, the zero value), asked afresh every time
	// (WakeCacheOff), or kept and checked against a fresh answer at every use (WakeCacheChecked,
	// which panics on a difference). Tests use the last two to show that keeping them changes
	// nothing.
	WakeCache WakeCacheMode
}

// validate checks the options up front.
func (o *RunOptions) validate() error {
	switch o.WakeCache {
	case WakeCacheOn, WakeCacheOff, WakeCacheChecked:
		return nil
	}
	return fmt.Errorf("RunOptions.WakeCache: unknown mode %v", o.WakeCache)
}

// engine is one replay in progress. It is used from one goroutine only: that is what makes the
// trace deterministic (docs/design/002-replay.md).
type engine struct {
	s   *Scenario
	clk *vclock.Clock
	rec *trace.Recorder

	// cluster is the API server, with the controllers and peer nodes beside it; nil without the
	// api source.
	cluster *world.Cluster
	client  kubernetes.Interface // the cluster's client; nil without the api source
	keep    bool                 // RunOptions.KeepEvents: forget no trace event
	diffs   *podDiffs            // nil without RunOptions.PodDiffs
	// handedOn is every pod handed to a sync loop; nil without RunOptions.CheckReadOnlyPods.
	handedOn *handedOn
	// skips is every kubelet's evidence for the status skip, across restarts; nil without
	// RunOptions.CheckStatusSkip.
	skips *kubelet.StatusSkipCheck
	seed  int64
	// probes is what the containers' probes answer, as the probe steps script it: the world's,
	// shared by every node and kept across kubelet restarts.
	probes *prober.Script

	// nodes are the simulated nodes, in the scenario's order. What works on one node takes it
	// as an argument; what works on every node loops over them.
	nodes []*node
	// sched is which nodes an instant settles: those due and those something reached.
	sched *schedule
	// byName is each node's index in nodes.
	byName map[string]int
	// seenBy is, for each pod name (namespace/name) a node's PodConfig has handed its sync
	// loop, the index of the first node in nodes that has seen it (node.uids): what nodeFor
	// would find scanning every node's uids in order. Like the uids, it only grows. Nil with a
	// single node, where nodeFor needs no lookup.
	seenBy map[string]int
	// checkNodeFor, when set (by tests), is called with each answer of nodeFor, and whether
	// seenBy gave it.
	checkNodeFor func(ctx context.Context, st *Step, got *node, seen bool)
	// scanned is how many trace events distribute has handed to the nodes' checks.
	scanned int
	// checks lists, each once (inChecks), the nodes whose invariants the end of an instant
	// checks: those distribute handed a trace event since their last check, and those with a
	// grace running. Every node whose needsCheck holds is in it, so that an instant's checks
	// cost what the nodes that traced something cost, not a look at every node of the fleet
	// (whose instants grow with the nodes too). spare is the other buffer of the list.
	checks, spare []int
	inChecks      []bool

	// wakeCache is RunOptions.WakeCache, which every node takes.
	wakeCache WakeCacheMode
	// gen counts the calls of settle: the wakes a node read after a Settle (node.readWakes)
	// hold until the settle during which it read them returns.
	gen uint64

	window int // index of the first trace event the next expectEvent looks at
	result Result
	report reporter
	// step is the index of the last step played, -1 before the first.
	step int
}

// Run replays s and returns the verdicts on its expectations. An error means the replay itself
// could not go on (a livelock, a broken component), not that an expectation failed. When ctx is
// done, Run returns within the instant it is playing, with an error that wraps ctx.Err() and
// names the virtual time reached.
func Run(ctx context.Context, s *Scenario, opts RunOptions) (*Result, error) {
	// Building the nodes starts their kubelets' start-up trace: a replay cancelled before it
	// begins traces nothing.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("replay %s: stopped at 0s: %w", s.path, err)
	}
	e, err := newEngine(s, opts)
	if err != nil {
		return nil, err
	}
	if err := e.run(ctx, opts.Until); err != nil {
		return nil, fmt.Errorf("replay %s: %w", s.path, err)
	}
	if e.handedOn != nil {
		if err := e.handedOn.check(); err != nil {
			return nil, fmt.Errorf("replay %s: a shared object changed: %w", s.path, err)
		}
	}
	if e.skips != nil {
		if err := e.skips.Err; err != nil {
			return nil, fmt.Errorf("replay %s: the periodic status skip diverged: %w", s.path, err)
		}
		e.result.StatusSkips = e.skips.Skips
	}
	if err := e.rec.Err(); err != nil {
		return nil, err
	}
	e.result.Events = e.rec.Events()
	return &e.result, nil
}

func newEngine(s *Scenario, opts RunOptions) (*engine, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("replay %s: %w", s.path, err)
	}
	clk := vclock.New(vclock.Epoch)
	rec, err := trace.NewRecorder(trace.RecorderOptions{Clock: clk, Start: vclock.Epoch, Out: opts.Out, Format: opts.Format, Keep: true,
		View: opts.View, Text: opts.Text})
	if err != nil {
		return nil, err
	}
	e := &engine{
		s:      s,
		clk:    clk,
		rec:    rec,
		result: Result{Name: s.Name, StepSeqs: make([]uint64, len(s.Steps))},
		report: reporter{w: opts.Report, format: opts.Format},
		step:   -1,
		keep:   opts.KeepEvents,
		probes: prober.NewScript(),

		wakeCache: opts.WakeCache,
	}
	if opts.PodDiffs {
		e.diffs = &podDiffs{last: map[types.UID][]string{}, diffs: map[uint64]string{}}
		e.result.PodDiffs = e.diffs.diffs
	}
	if opts.CheckReadOnlyPods {
		e.handedOn = &handedOn{}
	}
	if opts.CheckStatusSkip {
		e.skips = &kubelet.StatusSkipCheck{}
	}
	e.seed = 1
	if s.Seed != nil {
		e.seed = *s.Seed
	}
	if s.hasSource(podconfig.APISource) {
		if e.cluster, err = world.NewCluster(clk, e.rec, e.seed); err != nil {
			return nil, err
		}
		e.client = e.cluster.Client()
		if e.handedOn != nil {
			// The api sources keep the API server's stored objects, and the controllers read
			// them: no side may change one.
			e.cluster.OnPodDelivered(func(node string, pod *v1.Pod) {
				e.handedOn.add(node, e.clk.Since(vclock.Epoch), []*v1.Pod{pod})
			})
			e.cluster.OnStoredRead(func(reader string, obj runtime.Object) {
				e.handedOn.addObject(reader, e.clk.Since(vclock.Epoch), obj)
			})
		}
	}
	if len(s.nodeNames()) > 1 {
		e.seenBy = map[string]int{}
	}
	for i, name := range s.nodeNames() {
		n, err := e.newNode(i, name)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", name, err)
		}
		e.nodes = append(e.nodes, n)
	}
	e.sched = newSchedule(len(e.nodes))
	e.inChecks = make([]bool, len(e.nodes))
	e.byName = make(map[string]int, len(e.nodes))
	for i, n := range e.nodes {
		e.byName[n.name] = i
		// Every kubelet's start-up is due at the first instant.
		e.sched.reach(i)
	}
	if len(s.Controllers) > 0 || len(s.PeerNodes) > 0 {
		// The peers' addresses follow the simulated nodes'.
		if err := e.cluster.StartControlPlane(s.Controllers, s.PeerNodes, len(e.nodes), e.seed); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// run is the discrete-event loop: settle the current instant, play the steps due at it, then
// jump to the earliest wake-up of any component or step. It looks at ctx once per instant, which
// costs nothing next to settling one, so that a cancelled replay stops within the instant it is
// playing.
func (e *engine) run(ctx context.Context, until time.Duration) error {
	if err := e.interrupted(ctx); err != nil {
		return err
	}
	if err := e.settle(ctx); err != nil {
		return err
	}
	next := 0
	for next < len(e.s.Steps) {
		if err := e.interrupted(ctx); err != nil {
			return err
		}
		if !e.keep {
			e.forget(next)
		}
		now := e.clk.Since(vclock.Epoch)
		for next < len(e.s.Steps) && e.s.Steps[next].At.Duration <= now {
			e.apply(ctx, next)
			if err := e.settle(ctx); err != nil {
				return err
			}
			next++
		}
		if next == len(e.s.Steps) {
			break
		}
		wake := e.earliestWake(vclock.Epoch.Add(e.s.Steps[next].At.Duration))
		if until > 0 && wake.After(vclock.Epoch.Add(until)) {
			e.clk.Set(vclock.Epoch.Add(until))
			if err := e.settle(ctx); err != nil {
				return err
			}
			e.result.NotReached = e.notReached(next)
			break
		}
		e.clk.Set(wake)
		if err := e.settle(ctx); err != nil {
			return err
		}
	}
	e.result.End = e.clk.Since(vclock.Epoch)
	return nil
}

// forget lets the recorder drop the trace events no check will look at again: those the
// invariants have seen, unless the next step, an expectEvent, still looks at them. They have
// already gone to Out; only what a long replay holds in memory changes.
func (e *engine) forget(next int) {
	keep := min(e.rec.Len(), e.scanned)
	if e.s.Steps[next].checksEvents() {
		keep = min(keep, e.window)
	}
	e.rec.Forget(keep)
}

// interrupted returns ctx's error, with the virtual time the replay reached, once ctx is done.
func (e *engine) interrupted(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("stopped at %v: %w", e.clk.Since(vclock.Epoch), err)
	}
	return nil
}

// earliestWake returns the earliest of step, the next step's instant, and every component's
// next wake: the controllers', the peers' and the nodes' (the schedule's heap, not a look at
// every node).
func (e *engine) earliestWake(step time.Time) time.Time {
	wake := step
	if e.cluster != nil {
		for _, t := range e.cluster.Wakes() {
			if t.Before(wake) {
				wake = t
			}
		}
	}
	if t, ok := e.sched.earliest(); ok && t.Before(wake) {
		wake = t
	}
	return wake
}

// settle runs everything due at the current instant until nothing is left, in the fixed order
// of docs/design/002-replay.md: sources, PodConfig, the sync loop, and the API echo of what the
// sync loop wrote. Each pass goes over the nodes in the scenario's order, but settles only those
// the schedule names: in the first pass, the nodes whose wake has come and those a step reached;
// in each pass, the nodes another node's or the controllers' pod writes reached; in the passes
// after the first, the nodes still due after their last Settle (kubelet.Due). A node that is not
// due and that nothing reached is left alone: in a fleet, most nodes at most instants.
func (e *engine) settle(ctx context.Context) error {
	s := e.sched
	now := e.clk.Now()
	e.gen++
	s.begin(now)
	var settled []int // the nodes settled in the pass, whose sync loop may want another
	for spins := 0; ; spins++ {
		// The same bound as every driver of the sync loop: a component that keeps asking to be
		// woken "now" is a bug, and a hang would hide it.
		if spins == syncloop.MaxAdvancesPerInstant {
			return fmt.Errorf("replay at %v: %w", e.clk.Since(vclock.Epoch), syncloop.ErrLivelock)
		}
		// A node's writes reach the nodes after it in the same pass, those before it in the
		// next.
		progressed := false
		settled = settled[:0]
		s.pass()
		for {
			i, ok := s.take()
			if !ok {
				break
			}
			n := e.nodes[i]
			var did bool
			switch {
			case n.stopped:
				// A stopped node does nothing: only the world outside its kubelet moves.
				did = n.advanceStoppedRuntime(now)
				if t, ok := n.kubelet.Runtime.NextWake(); ok && !t.After(now) {
					s.again(i)
				}
			case spins == 0 || n.due(e.gen):
				did = e.settleNode(ctx, n)
				settled = append(settled, i)
				e.routed()
				n.readWakes(e.gen)
				if n.due(e.gen) {
					s.again(i)
				}
			}
			progressed = progressed || did
		}
		if e.cluster != nil && e.cluster.Advance(ctx) {
			progressed = true
		}
		e.routed()
		if progressed || slices.ContainsFunc(settled, func(i int) bool { return e.nodes[i].loopDue(now, e.gen) }) {
			continue
		}
		// Every instant ends settled; that is when the components must agree. A node that
		// traced nothing is as it was at its last check, unless a grace runs out.
		errs := e.checkNodes()
		s.end(e.nodeWake)
		return errors.Join(errs...)
	}
}

// checkNodes checks the invariants of the nodes that need it (invariants.needsCheck), in the
// nodes' order: those listed in e.checks. A node with a grace still running stays listed for the
// next instant.
func (e *engine) checkNodes() []error {
	e.distribute()
	todo := e.checks
	e.checks = e.spare[:0]
	slices.Sort(todo)
	for _, i := range todo {
		e.inChecks[i] = false
	}
	var errs []error
	for _, i := range todo {
		n := e.nodes[i]
		if n.inv.needsCheck() {
			if err := e.checkInvariants(n, e.step); err != nil {
				errs = append(errs, e.onNode(n, err))
			}
		}
		if n.inv.graced() {
			e.toCheck(i)
		}
	}
	e.spare = todo[:0]
	return errs
}

// toCheck lists node i for the invariants' check at the end of the instant.
func (e *engine) toCheck(i int) {
	if !e.inChecks[i] {
		e.inChecks[i] = true
		e.checks = append(e.checks, i)
	}
}

// routed tells the schedule which nodes the shared pod watch queued a change for since it last
// asked: their kubelets have a watch event to handle.
func (e *engine) routed() {
	if e.cluster == nil {
		return
	}
	for _, name := range e.cluster.Reached() {
		if i, ok := e.byName[name]; ok {
			e.sched.reach(i)
		}
	}
}

// nodeWake is node i's next wake, for the schedule.
func (e *engine) nodeWake(i int) time.Time {
	return e.nodes[i].nextWake(e.gen)
}

// stepEvent traces a scenario step, so the trace shows what the world did to the kubelet.
func (e *engine) stepEvent(action trace.Kind, pod, msg string) {
	e.rec.Emit(trace.Event{Component: trace.Scenario, Event: action, Pod: pod, Message: msg})
}

// stepError traces a step that could not be carried out, such as removing a file that does not
// exist or creating a pod that already exists, and fails the replay. The replay goes on, so
// that the trace shows what followed.
func (e *engine) stepError(action trace.Kind, err error) {
	e.rec.Emit(trace.Event{Component: trace.Scenario, Event: trace.KindError, Reason: string(action), Message: err.Error()})
	e.failStep(string(action), err)
}
