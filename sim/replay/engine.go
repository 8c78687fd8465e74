package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"path"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/minikubelet/minikubelet/api/eventrecord"
	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/metrics"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/prober"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/sources"
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
}

// engine is one replay in progress. It is used from one goroutine only: that is what makes the
// trace deterministic (docs/design/002-replay.md).
type engine struct {
	s   *Scenario
	clk *vclock.Clock
	rec *trace.Recorder

	server *fakeapiserver.Server // nil without the api source
	client kubernetes.Interface  // nil without the api source
	keep   bool                  // RunOptions.KeepEvents: forget no trace event
	diffs  *podDiffs             // nil without RunOptions.PodDiffs
	seed   int64
	// cp is the control plane beside the API server; nil without controllers and peers.
	cp *controlPlane
	// eventNano is the name suffix counter every event recorder of the replay shares.
	eventNano int64
	// probes is what the containers' probes answer, as the probe steps script it: the world's,
	// shared by every node and kept across kubelet restarts.
	probes *prober.Script

	// proc is the node the engine is working on: the one a step names, or each in turn while an
	// instant settles; procs are every node, in the scenario's order. Code that works on one
	// node reads the current node's fields through the embedding.
	*proc
	procs []*proc

	window int // index of the first trace event the next expectEvent looks at
	result Result
	report reporter
	// step is the index of the last step played, -1 before the first.
	step int
}

// proc is one simulated node: its kubelet process (sources, PodConfig, the sync side), the static
// pod directory and manifest URL it reads, and its connection to the API server.
type proc struct {
	// tracer is the trace as this node's components write to it: the recorder, which with
	// several nodes first stamps each event with the node's name.
	tracer trace.Tracer
	name   string
	index  int    // position in the scenario's nodes
	ip     string // the node's InternalIP

	storage *podconfig.Storage
	dir     *memDir       // nil without the file source
	file    *sources.File // nil without the file source
	serve   *scriptedHTTP // nil without the http source
	http    *sources.HTTP // nil without the http source
	// link and kubeletClient are the kubelet's own connection to the API server, which an
	// apiServerDown step can cut; nil without the api source.
	link          *outage
	kubeletClient kubernetes.Interface
	api           *sources.API // nil without the api source
	apiRV         uint64
	// unlisted: the api source's first list failed (the API server was unreachable).
	unlisted bool
	node     *kubelet.Node
	plugins  *pluginWorld // nil unless a step needs the plugin pipeline (first node only)

	apiEvents record.EventRecorder // nil without the api source
	restarts  int                  // kubelet restarts so far
	// stopped is true between a stopNode and a startNode: nothing of the kubelet runs.
	stopped bool

	pending []podconfig.Update   // source output not yet merged, in the order it was produced
	uids    map[string]types.UID // the last non-mirror UID seen for each namespace/name
	inv     *invariants
}

// Run replays s and returns the verdicts on its expectations. An error means the replay itself
// could not go on (a livelock, a broken component), not that an expectation failed. When ctx is
// done, Run returns within the instant it is playing, with an error that wraps ctx.Err() and
// names the virtual time reached.
func Run(ctx context.Context, s *Scenario, opts RunOptions) (*Result, error) {
	e, err := newEngine(s, opts)
	if err != nil {
		return nil, err
	}
	if err := e.run(ctx, opts.Until); err != nil {
		return nil, fmt.Errorf("replay %s: %w", s.path, err)
	}
	if err := e.rec.Err(); err != nil {
		return nil, err
	}
	e.result.Events = e.rec.Events()
	return &e.result, nil
}

func newEngine(s *Scenario, opts RunOptions) (*engine, error) {
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
	}
	if opts.PodDiffs {
		e.diffs = &podDiffs{last: map[types.UID][]string{}, diffs: map[uint64]string{}}
		e.result.PodDiffs = e.diffs.diffs
	}
	e.seed = 1
	if s.Seed != nil {
		e.seed = *s.Seed
	}
	if s.hasSource(podconfig.APISource) {
		if e.server, err = fakeapiserver.New(fakeapiserver.Options{Clock: clk, Tracer: e.rec, Rand: rand.New(rand.NewSource(e.seed))}); err != nil {
			return nil, err
		}
		if e.client, err = kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: e.server.Transport(), QPS: -1}); err != nil {
			return nil, err
		}
	}
	for i, name := range s.nodeNames() {
		p := &proc{name: name, index: i, ip: fmt.Sprintf("10.0.0.%d", 10+i), uids: map[string]types.UID{}, inv: newInvariants(), tracer: e.rec}
		if len(s.nodeNames()) > 1 {
			rec := e.rec
			p.tracer = trace.Func(func(ev trace.Event) {
				ev.Node = name
				rec.Emit(ev)
			})
		}
		if e.server != nil {
			p.link = &outage{next: e.server.Transport(), clk: clk}
			if p.kubeletClient, err = kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: p.link, QPS: -1}); err != nil {
				return nil, err
			}
			// The kubelet's Kubernetes events go to the API server synchronously, on the
			// virtual clock.
			if p.apiEvents, err = eventrecord.NewAPIRecorder(eventrecord.APIRecorderOptions{Clock: clk, Client: e.client,
				Source: v1.EventSource{Component: "kubelet", Host: name}, LastNano: &e.eventNano}); err != nil {
				return nil, err
			}
		}
		e.proc = p
		e.procs = append(e.procs, p)
		if err := e.startKubelet(nil); err != nil {
			return nil, fmt.Errorf("node %s: %w", name, err)
		}
	}
	e.proc = e.procs[0]
	if e.cp, err = e.newControlPlane(); err != nil {
		return nil, err
	}
	return e, nil
}

// each runs f on every node in turn, as the current node, then makes the node that was current
// current again. It reports whether f did for any.
func (e *engine) each(f func() bool) bool {
	cur, any := e.proc, false
	for _, p := range e.procs {
		e.proc = p
		if f() {
			any = true
		}
	}
	e.proc = cur
	return any
}

// startKubelet builds what lives in the kubelet process: PodConfig, the sources and the sync
// side. A restart calls it again with the runtime, whose containers outlive the process; the API
// server, the static pod directory and what the manifest URL serves stay as they are.
func (e *engine) startKubelet(runtime *fakeruntime.Runtime) error {
	s, clk := e.s, e.clk
	configEvents, err := eventrecord.NewTracing(e.apiEvents, e.tracer)
	if err != nil {
		return err
	}
	storage, err := podconfig.NewStorage(podconfig.StorageOptions{Clock: clk, Tracer: e.tracer, Recorder: configEvents})
	if err != nil {
		return err
	}
	e.storage = storage
	// Sources register in the kubelet's order (makePodSourceConfig): file, http, api.
	if s.hasSource(podconfig.FileSource) {
		storage.Register(podconfig.FileSource)
		if e.dir == nil {
			e.dir = newMemDir(StaticPodPath)
		}
		if e.file, err = sources.NewFile(sources.FileOptions{Path: StaticPodPath, NodeName: e.name,
			Period: s.kubelet.Sources.FileCheckFrequency, Clock: clk, Tracer: e.tracer, FS: e.dir}); err != nil {
			return err
		}
	}
	if s.hasSource(podconfig.HTTPSource) {
		storage.Register(podconfig.HTTPSource)
		if e.serve == nil {
			e.serve = &scriptedHTTP{status: http.StatusNotFound}
		}
		if e.http, err = sources.NewHTTP(sources.HTTPOptions{URL: manifestURL, NodeName: e.name,
			Period: s.kubelet.Sources.HTTPCheckFrequency,
			Client: &http.Client{Transport: e.serve}, Clock: clk, Tracer: e.tracer}); err != nil {
			return err
		}
	}
	if s.hasSource(podconfig.APISource) {
		storage.Register(podconfig.APISource)
		if e.api, err = sources.NewAPI(sources.APIOptions{Tracer: e.tracer}); err != nil {
			return err
		}
	}
	var lat fakeruntime.Latencies
	if r := s.Runtime; r != nil {
		lat = fakeruntime.Latencies{SandboxStart: r.SandboxStart.Duration, ImagePull: r.ImagePull.Duration,
			ContainerStart: r.ContainerStart.Duration, ContainerStop: r.ContainerStop.Duration}
	}
	// Every kubelet start has its own registry: a restarted kubelet's metrics start from zero.
	reg, err := metrics.New(metrics.Options{NodeName: e.name})
	if err != nil {
		return err
	}
	var devices kubelet.Devices
	if s.hasPluginSteps() && e.index == 0 {
		// The plugin world outlives a restartKubelet: its sockets and plugins are not the
		// kubelet's, and the device manager keeps its state (the kubelet reads it back from its
		// checkpoint).
		if e.plugins == nil {
			if e.plugins, err = newPluginWorld(clk, e.tracer, e.client, e.name); err != nil {
				return err
			}
			e.plugins.stepFail = e.stepError
		}
		devices = e.plugins.dm
	}
	kopts := kubelet.Options{
		Metrics:  reg,
		NodeName: e.name,
		NodeIP:   e.ip,
		Clock:    clk,
		Tracer:   e.tracer,
		// Node 0's seed is the scenario's, so that a single-node scenario's jitter does not
		// depend on this; the others get their own streams.
		Seed:         uint64(e.seed) + uint64(e.restarts) + uint64(e.index)<<32,
		Client:       e.kubeletClient,
		Latencies:    lat,
		Runtime:      runtime,
		SourcesReady: storage.SeenAllSources,
		Devices:      devices,
		Recorder:     e.apiEvents,
		ProbeScript:  e.probes,
	}
	s.kubeletOptions(&kopts)
	n, err := kubelet.New(kopts)
	if err != nil {
		return err
	}
	e.node = n
	return nil
}

func (s *Scenario) hasPluginSteps() bool {
	for i := range s.Steps {
		if s.Steps[i].isPluginStep() {
			return true
		}
	}
	return false
}

func (s *Scenario) hasSource(name string) bool {
	for _, src := range s.Sources {
		if src == name {
			return true
		}
	}
	return false
}

func durationOr(d *Duration, def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	return d.Duration
}

// run is the discrete-event loop: settle the current instant, play the steps due at it, then
// jump to the earliest wake-up of any component or step. It looks at ctx once per instant, which
// costs nothing next to settling one, so that a cancelled replay stops within the instant it is
// playing.
func (e *engine) run(ctx context.Context, until time.Duration) error {
	if err := e.interrupted(ctx); err != nil {
		return err
	}
	e.each(func() bool { e.listAPI(); return false })
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
		wake := vclock.Epoch.Add(e.s.Steps[next].At.Duration)
		for _, t := range e.wakes() {
			if t.Before(wake) {
				wake = t
			}
		}
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

// listAPI gives the api source the node's pods as its first list does (the reflector's
// initial list), and watches from there.
func (e *engine) listAPI() {
	if e.api == nil {
		return
	}
	if e.link.down() {
		// The list fails; the reflector lists again once the API server answers.
		e.unlisted = true
		return
	}
	e.unlisted = false
	pods, rv := e.server.NodePods(e.name)
	e.pending = append(e.pending, e.api.Replace(pods))
	e.apiRV = rv
}

// forget lets the recorder drop the trace events no check will look at again: those the
// invariants have seen, unless the next step, an expectEvent, still looks at them. They have
// already gone to Out; only what a long replay holds in memory changes.
func (e *engine) forget(next int) {
	keep := e.inv.traced
	for _, p := range e.procs {
		keep = min(keep, p.inv.traced)
	}
	if st := &e.s.Steps[next]; st.ExpectEvent != nil || st.ExpectNoEvent != nil {
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

// wakes lists when each component next wants attention.
func (e *engine) wakes() []time.Time {
	out := e.controlPlaneWakes()
	e.each(func() bool {
		switch {
		case !e.stopped:
			out = append(out, e.procWakes()...)
		default:
			// The kubelet is frozen, its containers are not: the runtime's exits go on.
			if t, ok := e.node.Runtime.NextWake(); ok {
				out = append(out, t)
			}
		}
		return false
	})
	return out
}

// advanceStoppedRuntime moves the runtime of a stopped node to now: its containers run and exit
// with no kubelet to notice. It reports whether anything was due.
func (e *engine) advanceStoppedRuntime(now time.Time) bool {
	if t, ok := e.node.Runtime.NextWake(); ok && !t.After(now) {
		e.node.Runtime.Advance()
		return true
	}
	return false
}

// procWakes lists when each component of the current node next wants attention.
func (e *engine) procWakes() []time.Time {
	loopWake, _ := e.node.Loop.NextWake()
	out := []time.Time{loopWake}
	if e.file != nil {
		if t, ok := e.file.NextWake(); ok {
			out = append(out, t)
		}
	}
	if e.http != nil {
		if t, ok := e.http.NextWake(); ok {
			out = append(out, t)
		}
	}
	if e.plugins != nil {
		out = append(out, e.plugins.nextWake())
	}
	if e.link != nil && e.link.down() {
		// The reflector's watch comes back when the API server does.
		out = append(out, e.link.until)
	}
	return out
}

// settle runs everything due at the current instant until nothing is left, in the fixed order
// of docs/design/002-replay.md: sources, PodConfig, the sync loop, and the API echo of what the
// sync loop wrote.
func (e *engine) settle(ctx context.Context) error {
	for spins := 0; ; spins++ {
		// The same bound as every driver of the sync loop: a component that keeps asking to be
		// woken "now" is a bug, and a hang would hide it.
		if spins == syncloop.MaxAdvancesPerInstant {
			return fmt.Errorf("replay at %v: %w", e.clk.Since(vclock.Epoch), syncloop.ErrLivelock)
		}
		now := e.clk.Now()
		// Each node in the scenario's order; a node's writes reach the others' watches in the
		// same pass or the next.
		// A stopped node does nothing: only the world outside its kubelet moves.
		progressed := e.each(func() bool {
			if e.stopped {
				return e.advanceStoppedRuntime(now)
			}
			return e.settleProc(ctx, now)
		})
		if e.advanceControlPlane(ctx) {
			progressed = true
		}
		idle := !progressed && !e.each(func() bool {
			wake, _ := e.node.Loop.NextWake()
			return !e.stopped && !wake.After(now)
		})
		if idle {
			// Every instant ends settled; that is when the components must agree.
			var errs []error
			e.each(func() bool {
				if err := e.checkInvariants(e.step); err != nil {
					errs = append(errs, e.onNode(err))
				}
				return false
			})
			return errors.Join(errs...)
		}
	}
}

// onNode names the current node in err when the scenario has several.
func (e *engine) onNode(err error) error {
	if len(e.procs) == 1 {
		return err
	}
	return fmt.Errorf("node %s: %w", e.name, err)
}

// settleProc runs one pass over the current node's components due now, and reports whether any
// made progress other than its sync loop, whose next wake says that.
func (e *engine) settleProc(ctx context.Context, now time.Time) bool {
	progressed := false
	if e.file != nil {
		if t, ok := e.file.NextWake(); ok && !t.After(now) {
			u, _ := e.file.Relist() // errors are in the trace
			e.queue(u)
			progressed = true
		}
	}
	if e.http != nil {
		if t, ok := e.http.NextWake(); ok && !t.After(now) {
			u, _ := e.http.Poll(ctx)
			e.queue(u)
			progressed = true
		}
	}
	if e.pumpAPI() {
		progressed = true
	}
	if e.plugins != nil {
		if e.plugins.advance(ctx, now) {
			progressed = true
		}
		// The caches change in passes and in the socket steps; the gauge follows them.
		e.node.Metrics.SetTotalPlugins(e.plugins.pm.TotalPlugins())
	}
	if len(e.pending) > 0 {
		progressed = true
		e.merge(ctx)
	}
	// The sync loop traces what failed and goes on, as the kubelet logs and loops; a replay
	// of a runtime outage must not stop at the first failed housekeeping.
	_ = e.node.Loop.Advance(ctx)
	if e.pumpAPI() {
		progressed = true
	}
	return progressed
}

func (e *engine) queue(u *podconfig.Update) {
	if u != nil {
		e.pending = append(e.pending, *u)
	}
}

// merge hands every pending source update to PodConfig, and what PodConfig emits to the sync
// loop, in the order the sources produced them.
func (e *engine) merge(ctx context.Context) {
	for len(e.pending) > 0 {
		in := e.pending[0]
		e.pending = e.pending[1:]
		for _, out := range e.storage.Merge(in.Source, in) {
			for _, p := range out.Pods {
				if !kubecontainer.IsMirrorPod(p) {
					e.uids[podkey.Of(p)] = p.UID
				}
			}
			mark := e.rec.Len()
			// The sync loop traces what it cannot handle (an unsupported operation) and goes on.
			_ = e.node.Loop.Step(ctx, syncloop.ConfigUpdate{Update: out})
			if e.diffs != nil {
				for _, ev := range e.rec.EventsSince(mark) {
					if ev.Component == trace.SyncLoop && ev.Event == trace.KindConfig {
						e.diffs.record(ev, out)
						break
					}
				}
			}
		}
	}
}

// pumpAPI feeds the api source every watch event its node's pods got since it last looked, the
// way the reflector would, and reports whether there were any. A history that has been
// compacted is a 410 Gone: the source relists, as the reflector does.
func (e *engine) pumpAPI() bool {
	// While the API server is unreachable the watch is broken; the reflector resumes it from
	// the last resource version it saw once the server answers again, or makes the list it
	// could not make.
	if e.server == nil || e.link.down() {
		return false
	}
	if e.unlisted {
		e.listAPI()
		return true
	}
	if e.server.ResourceVersion() == e.apiRV {
		return false
	}
	evs, next, err := e.server.PodEventsSince(e.name, e.apiRV)
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		pods, rv := e.server.NodePods(e.name)
		e.pending = append(e.pending, e.api.Replace(pods))
		e.apiRV = rv
		return true
	}
	e.apiRV = next
	for _, ev := range evs {
		switch ev.Type {
		case watch.Added:
			e.pending = append(e.pending, e.api.Add(ev.Pod))
		case watch.Modified:
			e.pending = append(e.pending, e.api.Update(ev.Pod))
		case watch.Deleted:
			e.pending = append(e.pending, e.api.Delete(ev.Pod))
		}
	}
	return len(evs) > 0
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

func (e *engine) manifestPath(name string) string { return path.Join(StaticPodPath, name) }
