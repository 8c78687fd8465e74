package replay

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/sim/world"
)

// manifestURL is the static pod URL of a replay. The .invalid domain can never resolve, so no
// request can leave the process even if the transport were bypassed.
const manifestURL = "http://static-pods.invalid/manifests"

// DevicePluginsPath is the device plugin directory of every replay, the kubelet's default. It is
// virtual, as the registry is.
const DevicePluginsPath = "/var/lib/kubelet/device-plugins"

// node is one simulated node: its kubelet process (package kubelet's assembly) and the world
// around it, which outlives the process: the static pod directory and the manifest URL it reads,
// its connection to the API server, the plugins behind its registry. The engine passes it to
// whatever works on one node; nothing holds a "current" node.
type node struct {
	// tracer is the trace as this node's components write to it: the recorder, which with
	// several nodes first stamps each event with the node's name.
	tracer trace.Tracer
	name   string
	index  int    // position in the scenario's nodes
	ip     string // the node's InternalIP

	files     *world.StaticPods // nil without the file source
	manifests *world.Manifests  // nil without the http source
	// link and kubeletClient are the kubelet's own connection to the API server, which an
	// apiServerDown step can cut; nil without the api source.
	link          *world.Link
	kubeletClient kubernetes.Interface
	// writes are the kubelet's hottest requests, in process over link.
	writes    *world.NodeWrites
	apiEvents record.EventRecorder // nil without the api source
	plugins   *world.Plugins       // nil unless a step needs the plugin pipeline (first node only)
	// allocations is the allocation manager's checkpoint in the node's root directory, which
	// outlives a restart.
	allocations world.Checkpoint
	// podDirs are the volumes mounted in the pods' directories of the node's root directory,
	// which a restarted kubelet reconstructs.
	podDirs kubelet.PodDirs
	// volumeFaults are the failures failVolumeOperation scripts for the node's volume plugins;
	// like the directories, they outlive a restart.
	volumeFaults kubelet.VolumeFaults

	kubelet  *kubelet.Kubelet
	restarts int // kubelet restarts so far
	// stopped is true between a stopNode and a startNode: nothing of the kubelet runs.
	stopped bool

	uids map[string]types.UID // the last non-mirror UID seen for each namespace/name
	inv  *invariants

	// wakeAt and loopAt are the kubelet's wake and its sync loop's (Kubelet.NextWakes), read
	// right after its last Settle during the engine's settle number wakeGen. Until that settle
	// returns nothing but the node's own Settle changes them: the other nodes and the control
	// plane reach a kubelet only through its API watch (Kubelet.DueAt still asks it), and the
	// steps, which change a node's world from outside, run between two settles. Read once while
	// the node's state is in the processor's caches, they spare the engine two more walks of
	// every component of the node (the sync loop's check at the end of a pass, the schedule's at
	// the end of the instant), made after the other nodes' settles evicted it: in a fleet of a
	// thousand nodes those misses cost more, a node, than in a fleet of a hundred.
	wakeAt, loopAt time.Time
	wakeGen        uint64
	// nextAt is nextWake's answer from wakeAt and the link as they were read: the link changes
	// only at a step, and whether it is down only with the clock, neither of which moves during
	// a settle, so the schedule's look at the end of the instant need not read the link again.
	nextAt time.Time
	// wakeCache is RunOptions.WakeCache: whether the wakes read are used, and checked.
	wakeCache WakeCacheMode
}

// The world's simulations are the seams package kubelet declares.
var (
	_ kubelet.APIWatch = (*world.APIWatch)(nil)
)

// newNode builds the node at index i of the scenario's nodes and starts its kubelet.
func (e *engine) newNode(i int, name string) (*node, error) {
	ip, err := world.NodeIP(i)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", name, err)
	}
	n := &node{name: name, index: i, ip: ip, uids: map[string]types.UID{}, inv: newInvariants(), tracer: e.rec,
		wakeCache: e.wakeCache}
	if len(e.s.nodeNames()) > 1 {
		rec := e.rec
		n.tracer = trace.Func(func(ev trace.Event) {
			ev.Node = name
			rec.Emit(ev)
		})
	}
	s := e.s
	if s.hasSource(podconfig.FileSource) {
		n.files = world.NewStaticPods(StaticPodPath)
	}
	if s.hasSource(podconfig.HTTPSource) {
		n.manifests = world.NewManifests()
	}
	if e.cluster != nil {
		if n.link, n.kubeletClient, err = e.cluster.NodeLink(); err != nil {
			return nil, err
		}
		// The kubelet's hottest requests skip client-go and HTTP while the link is up.
		n.writes = e.cluster.NodeWrites(n.link, n.kubeletClient)
		// The kubelet's Kubernetes events go to the API server synchronously, on the virtual
		// clock.
		if n.apiEvents, err = e.cluster.KubeletEvents(name); err != nil {
			return nil, err
		}
	}
	if s.hasPluginSteps() && i == 0 {
		n.plugins = world.NewPlugins(PluginsRegistryPath)
	}
	if err := e.startKubelet(n, nil); err != nil {
		return nil, err
	}
	return n, nil
}

// startKubelet builds n's kubelet process with package kubelet's New over n's world. A restart
// calls it again with the runtime, whose containers outlive the process; the API server, the
// static pod directory, what the manifest URL serves, the plugins' sockets, the device
// checkpoint and the allocation checkpoint stay as they are.
func (e *engine) startKubelet(n *node, runtime *fakeruntime.Runtime) error {
	s := e.s
	// The scenario's configuration, with the sources it lists at replay's fixed places.
	cfg := *s.kubelet
	cfg.Sources.StaticPodPath, cfg.Sources.StaticPodURL, cfg.Sources.StaticPodURLHeader = "", "", nil
	w := kubelet.World{API: n.kubeletClient, Events: n.apiEvents, Runtime: runtime, ProbeScript: e.probes, Allocations: &n.allocations, PodDirs: &n.podDirs,
		VolumeFaults: &n.volumeFaults}
	if n.writes != nil {
		w.Writes = &kubelet.Writes{PodStatus: n.writes, Mirror: n.writes.Mirror(), Node: n.writes, Tokens: n.writes}
	}
	if n.files != nil {
		cfg.Sources.StaticPodPath, w.StaticPods = n.files.Dir(), n.files
	}
	if n.manifests != nil {
		cfg.Sources.StaticPodURL, w.ManifestClient = manifestURL, n.manifests.Client()
	}
	if e.cluster != nil {
		w.APIWatch = e.cluster.APIWatch(n.name, n.link)
		w.Objects = world.NewObjects(e.cluster.Server(), n.link)
	}
	if p := n.plugins; p != nil {
		w.Plugins = &kubelet.PluginWorld{Registry: p.Registry(), DevicePlugins: DevicePluginsPath, FS: p, Dialer: p, Devices: p, CSI: p, DRA: p.DRA(),
			Checkpoint: p.Checkpoint(), NewID: p.NewID}
	}
	var lat fakeruntime.Latencies
	if r := s.Runtime; r != nil {
		lat = fakeruntime.Latencies{SandboxStart: r.SandboxStart.Duration, ImagePull: r.ImagePull.Duration, ImagePullPresent: r.ImagePullPresent.Duration,
			ContainerStart: r.ContainerStart.Duration, ContainerStop: r.ContainerStop.Duration}
	}
	k, err := kubelet.New(kubelet.Options{
		NodeName: n.name,
		NodeIP:   n.ip,
		Config:   &cfg,
		Clock:    e.clk,
		Tracer:   n.tracer,
		// Node 0's seed is the scenario's, so that a single-node scenario's jitter does not
		// depend on this; the others get their own streams.
		Seed:      uint64(e.seed) + uint64(n.restarts) + uint64(n.index)<<32,
		World:     w,
		Latencies: lat,
		OnConfig:  e.onConfig(n),
		// One check for every node and restart, read at the end of the replay.
		CheckStatusSkip: e.skips,
	})
	if err != nil {
		return err
	}
	n.kubelet = k
	return nil
}

// noteSeen keeps seenBy when n's PodConfig hands its sync loop a pod named key.
func (e *engine) noteSeen(n *node, key string) {
	if _, ok := n.uids[key]; ok {
		return
	}
	if i, ok := e.seenBy[key]; !ok || n.index < i {
		e.seenBy[key] = n.index
	}
}

// onConfig watches what n's PodConfig hands its sync loop: the UID each pod name last had, and
// with RunOptions.PodDiffs what each update changed, keyed by the sync loop's config event.
func (e *engine) onConfig(n *node) func(podconfig.Update) func() {
	return func(out podconfig.Update) func() {
		if e.handedOn != nil {
			e.handedOn.add(n.name, e.clk.Since(vclock.Epoch), out.Pods)
		}
		for _, p := range out.Pods {
			if !kubecontainer.IsMirrorPod(p) {
				key := podkey.Of(p)
				if e.seenBy != nil {
					e.noteSeen(n, key)
				}
				n.uids[key] = p.UID
			}
		}
		if e.diffs == nil {
			return nil
		}
		mark := e.rec.Len()
		return func() {
			for ev := range e.rec.Since(mark) {
				if ev.Component == trace.SyncLoop && ev.Event == trace.KindConfig {
					e.diffs.record(*ev, out)
					break
				}
			}
		}
	}
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

// nextWake returns when n next wants attention; the zero time if never. gen is the engine's
// current settle: wakes read after a Settle during it are used as they are.
func (n *node) nextWake(gen uint64) time.Time {
	if n.stopped {
		// The kubelet is frozen, its containers are not: the runtime's exits go on.
		t, _ := n.kubelet.Runtime.NextWake()
		return t
	}
	if n.wakesRead(gen) {
		if n.wakeCache == WakeCacheChecked {
			if t := n.linkWake(n.wakeAt); !t.Equal(n.nextAt) {
				panic(fmt.Sprintf("node %s: wake read after its Settle %v, afresh %v", n.name, n.nextAt, t))
			}
		}
		return n.nextAt
	}
	t, _ := n.kubelet.NextWake()
	return n.linkWake(t)
}

// linkWake is t, the kubelet's wake, or the instant the API server answers again when that is
// earlier: the reflector's watch comes back then.
func (n *node) linkWake(t time.Time) time.Time {
	if n.link != nil && n.link.Down() && n.link.Until().Before(t) {
		return n.link.Until()
	}
	return t
}

// readWakes reads the kubelet's wakes right after a Settle during the engine's settle gen.
func (n *node) readWakes(gen uint64) {
	n.wakeAt, n.loopAt = n.kubelet.NextWakes()
	n.wakeGen = gen
	n.nextAt = n.linkWake(n.wakeAt)
}

// WakeCacheMode says how the engine uses the wakes a node's kubelet reported right after its
// Settle (RunOptions.WakeCache).
type WakeCacheMode int

const (
	// WakeCacheOn uses them until the engine's next settle.
	WakeCacheOn WakeCacheMode = iota
	// WakeCacheOff asks the kubelet afresh every time, as the engine did before it kept them.
	WakeCacheOff
	// WakeCacheChecked uses them, and panics when one differs from the kubelet's fresh answer.
	WakeCacheChecked
)

func (m WakeCacheMode) String() string {
	switch m {
	case WakeCacheOn:
		return "On"
	case WakeCacheOff:
		return "Off"
	case WakeCacheChecked:
		return "Checked"
	}
	return fmt.Sprintf("WakeCacheMode(%d)", int(m))
}

// wakesRead reports whether n's wakes read after its last Settle (readWakes) stand for the
// kubelet's: they were read during the engine's settle gen, and nothing but the node's own next
// Settle changes them before that settle ends.
func (n *node) wakesRead(gen uint64) bool {
	if n.wakeGen != gen || n.wakeCache == WakeCacheOff {
		return false
	}
	if n.wakeCache == WakeCacheChecked {
		if at, loop := n.kubelet.NextWakes(); !at.Equal(n.wakeAt) || !loop.Equal(n.loopAt) {
			panic(fmt.Sprintf("node %s: wakes read after its Settle %v (loop %v), afresh %v (loop %v)",
				n.name, n.wakeAt, n.loopAt, at, loop))
		}
	}
	return true
}

// due is the kubelet's Due, with the wake read after its last Settle during the engine's settle
// gen when there is one.
func (n *node) due(gen uint64) bool {
	if n.wakesRead(gen) {
		return n.kubelet.DueAt(n.wakeAt)
	}
	return n.kubelet.Due()
}

// loopDue reports whether n's sync loop runs and wants to run at or before now.
func (n *node) loopDue(now time.Time, gen uint64) bool {
	wake := n.loopAt
	if !n.wakesRead(gen) {
		wake, _ = n.kubelet.Loop.NextWake()
	}
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

// settleNode runs one pass over n's kubelet (kubelet.Settle), and reports whether anything but
// its sync loop made progress.
func (e *engine) settleNode(ctx context.Context, n *node) bool {
	settled := n.kubelet.Settle(ctx)
	if e.handedOn != nil {
		e.handedOn.addStatuses(n.name, e.clk.Since(vclock.Epoch), n.kubelet.Status.EachCachedStatus)
	}
	return settled
}

// onNode names n in err when the scenario has several nodes.
func (e *engine) onNode(n *node, err error) error {
	if len(e.nodes) == 1 {
		return err
	}
	return fmt.Errorf("node %s: %w", n.name, err)
}
