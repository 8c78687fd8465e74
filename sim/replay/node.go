package replay

import (
	"context"
	"fmt"
	"net/http"
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
	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/metrics"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sources"
	"github.com/minikubelet/minikubelet/syncloop"
)

// node is one simulated node: its kubelet process (sources, PodConfig, the sync side), the static
// pod directory and manifest URL it reads, and its connection to the API server. The engine
// passes it to whatever works on one node; nothing holds a "current" node. It has more fields than
// a struct should because it is the kubelet process and its world in one: the kubelet's own
// assembly (sources, PodConfig, the plugin pipeline) is to move into package kubelet, which will
// leave here only what the world around the kubelet holds.
type node struct {
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
	kubelet  *kubelet.Node
	plugins  *pluginWorld // nil unless a step needs the plugin pipeline (first node only)

	apiEvents record.EventRecorder // nil without the api source
	restarts  int                  // kubelet restarts so far
	// stopped is true between a stopNode and a startNode: nothing of the kubelet runs.
	stopped bool

	pending []podconfig.Update   // source output not yet merged, in the order it was produced
	uids    map[string]types.UID // the last non-mirror UID seen for each namespace/name
	inv     *invariants
}

// newNode builds the node at index i of the scenario's nodes and starts its kubelet.
func (e *engine) newNode(i int, name string) (*node, error) {
	n := &node{name: name, index: i, ip: fmt.Sprintf("10.0.0.%d", 10+i), uids: map[string]types.UID{}, inv: newInvariants(), tracer: e.rec}
	if len(e.s.nodeNames()) > 1 {
		rec := e.rec
		n.tracer = trace.Func(func(ev trace.Event) {
			ev.Node = name
			rec.Emit(ev)
		})
	}
	if e.server != nil {
		var err error
		n.link = &outage{next: e.server.Transport(), clk: e.clk}
		if n.kubeletClient, err = kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: n.link, QPS: -1}); err != nil {
			return nil, err
		}
		// The kubelet's Kubernetes events go to the API server synchronously, on the virtual
		// clock.
		if n.apiEvents, err = eventrecord.NewAPIRecorder(eventrecord.APIRecorderOptions{Clock: e.clk, Client: e.client,
			Source: v1.EventSource{Component: "kubelet", Host: name}, LastNano: &e.eventNano}); err != nil {
			return nil, err
		}
	}
	if err := e.startKubelet(n, nil); err != nil {
		return nil, err
	}
	return n, nil
}

// startKubelet builds what lives in n's kubelet process: PodConfig, the sources and the sync
// side. A restart calls it again with the runtime, whose containers outlive the process; the API
// server, the static pod directory and what the manifest URL serves stay as they are.
func (e *engine) startKubelet(n *node, runtime *fakeruntime.Runtime) error {
	s, clk := e.s, e.clk
	configEvents, err := eventrecord.NewTracing(n.apiEvents, n.tracer)
	if err != nil {
		return err
	}
	storage, err := podconfig.NewStorage(podconfig.StorageOptions{Clock: clk, Tracer: n.tracer, Recorder: configEvents})
	if err != nil {
		return err
	}
	n.storage = storage
	// Sources register in the kubelet's order (makePodSourceConfig): file, http, api.
	if s.hasSource(podconfig.FileSource) {
		storage.Register(podconfig.FileSource)
		if n.dir == nil {
			n.dir = newMemDir(StaticPodPath)
		}
		if n.file, err = sources.NewFile(sources.FileOptions{Path: StaticPodPath, NodeName: n.name,
			Period: s.kubelet.Sources.FileCheckFrequency, Clock: clk, Tracer: n.tracer, FS: n.dir}); err != nil {
			return err
		}
	}
	if s.hasSource(podconfig.HTTPSource) {
		storage.Register(podconfig.HTTPSource)
		if n.serve == nil {
			n.serve = &scriptedHTTP{status: http.StatusNotFound}
		}
		if n.http, err = sources.NewHTTP(sources.HTTPOptions{URL: manifestURL, NodeName: n.name,
			Period: s.kubelet.Sources.HTTPCheckFrequency,
			Client: &http.Client{Transport: n.serve}, Clock: clk, Tracer: n.tracer}); err != nil {
			return err
		}
	}
	if s.hasSource(podconfig.APISource) {
		storage.Register(podconfig.APISource)
		if n.api, err = sources.NewAPI(sources.APIOptions{Tracer: n.tracer}); err != nil {
			return err
		}
	}
	var lat fakeruntime.Latencies
	if r := s.Runtime; r != nil {
		lat = fakeruntime.Latencies{SandboxStart: r.SandboxStart.Duration, ImagePull: r.ImagePull.Duration,
			ContainerStart: r.ContainerStart.Duration, ContainerStop: r.ContainerStop.Duration}
	}
	// Every kubelet start has its own registry: a restarted kubelet's metrics start from zero.
	reg, err := metrics.New(metrics.Options{NodeName: n.name})
	if err != nil {
		return err
	}
	var devices kubelet.Devices
	if s.hasPluginSteps() && n.index == 0 {
		// The plugin world outlives a restartKubelet: its sockets and plugins are not the
		// kubelet's, and the device manager keeps its state (the kubelet reads it back from its
		// checkpoint).
		if n.plugins == nil {
			if n.plugins, err = newPluginWorld(clk, n.tracer, e.client, n.name); err != nil {
				return err
			}
			n.plugins.stepFail = e.stepError
		}
		devices = n.plugins.dm
	}
	kopts := kubelet.Options{
		Metrics:  reg,
		NodeName: n.name,
		NodeIP:   n.ip,
		Clock:    clk,
		Tracer:   n.tracer,
		// Node 0's seed is the scenario's, so that a single-node scenario's jitter does not
		// depend on this; the others get their own streams.
		Seed:         uint64(e.seed) + uint64(n.restarts) + uint64(n.index)<<32,
		Client:       n.kubeletClient,
		Latencies:    lat,
		Runtime:      runtime,
		SourcesReady: storage.SeenAllSources,
		Devices:      devices,
		Recorder:     n.apiEvents,
		ProbeScript:  e.probes,
	}
	s.kubeletOptions(&kopts)
	k, err := kubelet.New(kopts)
	if err != nil {
		return err
	}
	n.kubelet = k
	return nil
}

func (s *Scenario) hasPluginSteps() bool {
	for i := range s.Steps {
		if s.Steps[i].usesPlugins() {
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

// wakes lists when each component of n next wants attention.
func (n *node) wakes() []time.Time {
	if n.stopped {
		// The kubelet is frozen, its containers are not: the runtime's exits go on.
		if t, ok := n.kubelet.Runtime.NextWake(); ok {
			return []time.Time{t}
		}
		return nil
	}
	loopWake, _ := n.kubelet.Loop.NextWake()
	out := []time.Time{loopWake}
	if n.file != nil {
		if t, ok := n.file.NextWake(); ok {
			out = append(out, t)
		}
	}
	if n.http != nil {
		if t, ok := n.http.NextWake(); ok {
			out = append(out, t)
		}
	}
	if n.plugins != nil {
		out = append(out, n.plugins.nextWake())
	}
	if n.link != nil && n.link.down() {
		// The reflector's watch comes back when the API server does.
		out = append(out, n.link.until)
	}
	return out
}

// loopDue reports whether n's sync loop runs and wants to run at or before now.
func (n *node) loopDue(now time.Time) bool {
	wake, _ := n.kubelet.Loop.NextWake()
	return !n.stopped && !wake.After(now)
}

// advanceStoppedRuntime moves the runtime of a stopped node to now: its containers run and exit
// with no kubelet to notice. It reports whether anything was due.
func (n *node) advanceStoppedRuntime(now time.Time) bool {
	if t, ok := n.kubelet.Runtime.NextWake(); ok && !t.After(now) {
		n.kubelet.Runtime.Advance()
		return true
	}
	return false
}

// settleNode runs one pass over n's components due now, and reports whether any made progress
// other than its sync loop, whose next wake says that.
func (e *engine) settleNode(ctx context.Context, n *node, now time.Time) bool {
	progressed := false
	if n.file != nil {
		if t, ok := n.file.NextWake(); ok && !t.After(now) {
			u, _ := n.file.Relist() // errors are in the trace
			n.queue(u)
			progressed = true
		}
	}
	if n.http != nil {
		if t, ok := n.http.NextWake(); ok && !t.After(now) {
			u, _ := n.http.Poll(ctx)
			n.queue(u)
			progressed = true
		}
	}
	if e.pumpAPI(n) {
		progressed = true
	}
	if n.plugins != nil {
		if n.plugins.advance(ctx, now) {
			progressed = true
		}
		// The caches change in passes and in the socket steps; the gauge follows them.
		n.kubelet.Metrics.SetTotalPlugins(n.plugins.pm.TotalPlugins())
	}
	if len(n.pending) > 0 {
		progressed = true
		e.merge(ctx, n)
	}
	// The sync loop traces what failed and goes on, as the kubelet logs and loops; a replay
	// of a runtime outage must not stop at the first failed housekeeping.
	_ = n.kubelet.Loop.Advance(ctx)
	if e.pumpAPI(n) {
		progressed = true
	}
	return progressed
}

func (n *node) queue(u *podconfig.Update) {
	if u != nil {
		n.pending = append(n.pending, *u)
	}
}

// merge hands every pending source update of n to its PodConfig, and what PodConfig emits to its
// sync loop, in the order the sources produced them.
func (e *engine) merge(ctx context.Context, n *node) {
	for len(n.pending) > 0 {
		in := n.pending[0]
		n.pending = n.pending[1:]
		for _, out := range n.storage.Merge(in.Source, in) {
			for _, p := range out.Pods {
				if !kubecontainer.IsMirrorPod(p) {
					n.uids[podkey.Of(p)] = p.UID
				}
			}
			mark := e.rec.Len()
			// The sync loop traces what it cannot handle (an unsupported operation) and goes on.
			_ = n.kubelet.Loop.Step(ctx, syncloop.ConfigUpdate{Update: out})
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

// listAPI gives n's api source the node's pods as its first list does (the reflector's initial
// list), and watches from there.
func (e *engine) listAPI(n *node) {
	if n.api == nil {
		return
	}
	if n.link.down() {
		// The list fails; the reflector lists again once the API server answers.
		n.unlisted = true
		return
	}
	n.unlisted = false
	pods, rv := e.server.NodePods(n.name)
	n.pending = append(n.pending, n.api.Replace(pods))
	n.apiRV = rv
}

// pumpAPI feeds n's api source every watch event its pods got since it last looked, the way the
// reflector would, and reports whether there were any. A history that has been compacted is a
// 410 Gone: the source relists, as the reflector does.
func (e *engine) pumpAPI(n *node) bool {
	// While the API server is unreachable the watch is broken; the reflector resumes it from
	// the last resource version it saw once the server answers again, or makes the list it
	// could not make.
	if e.server == nil || n.link.down() {
		return false
	}
	if n.unlisted {
		e.listAPI(n)
		return true
	}
	if e.server.ResourceVersion() == n.apiRV {
		return false
	}
	evs, next, err := e.server.PodEventsSince(n.name, n.apiRV)
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		pods, rv := e.server.NodePods(n.name)
		n.pending = append(n.pending, n.api.Replace(pods))
		n.apiRV = rv
		return true
	}
	n.apiRV = next
	for _, ev := range evs {
		switch ev.Type {
		case watch.Added:
			n.pending = append(n.pending, n.api.Add(ev.Pod))
		case watch.Modified:
			n.pending = append(n.pending, n.api.Update(ev.Pod))
		case watch.Deleted:
			n.pending = append(n.pending, n.api.Delete(ev.Pod))
		}
	}
	return len(evs) > 0
}

// onNode names n in err when the scenario has several nodes.
func (e *engine) onNode(n *node, err error) error {
	if len(e.nodes) == 1 {
		return err
	}
	return fmt.Errorf("node %s: %w", n.name, err)
}
