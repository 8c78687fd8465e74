package kubelet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/api/eventrecord"
	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/housekeeping"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/kubelet/config"
	"github.com/minikubelet/minikubelet/metrics"
	"github.com/minikubelet/minikubelet/metrics/podstartup"
	"github.com/minikubelet/minikubelet/nodestatus"
	"github.com/minikubelet/minikubelet/pleg"
	"github.com/minikubelet/minikubelet/podmanager"
	"github.com/minikubelet/minikubelet/podsync"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/prober"
	"github.com/minikubelet/minikubelet/runtimestate"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/status"
	"github.com/minikubelet/minikubelet/syncloop"
	"github.com/minikubelet/minikubelet/workqueue"
)

// Options configure one simulated kubelet.
type Options struct {
	// NodeName is the node's name, lowercase. Required.
	NodeName string
	// NodeIP is reported as the node's InternalIP and the pods' hostIP.
	NodeIP string
	// Clock is the time of every core. Required.
	Clock clock.PassiveClock
	// Tracer receives every core's trace events. Required; trace.Discard drops them.
	Tracer trace.Tracer
	// Seed seeds the pod workers' jitter.
	Seed uint64
	// Client is the API server. Nil is a standalone kubelet: no node object, no mirror pods, no
	// status writes.
	Client kubernetes.Interface
	// Recorder receives the kubelet's Kubernetes events, after the trace: every event is traced
	// (component events) whether or not there is a recorder. Nil records none.
	Recorder record.EventRecorder
	// Latencies are the fake runtime's.
	Latencies fakeruntime.Latencies
	// Runtime is an existing runtime for the new kubelet to use, as after a kubelet restart:
	// containers outlive the kubelet process. Nil creates one with Latencies, the image pull
	// settings and Recorder.
	Runtime *fakeruntime.Runtime
	// Config is the kubelet's configuration (config.FromV1beta1). Nil is config.Default().
	Config *config.Config
	// SourcesReady is PodConfig's SeenAllSources. Nil means every source is ready.
	SourcesReady func(seen sets.Set[string]) bool
	// Devices is the device manager. Nil is a node without device plugins.
	Devices Devices
	// Metrics receives every core's metrics. Nil records none.
	Metrics *metrics.Registry
	// KubeletPort is the port the node advertises for its server; zero is 10250.
	KubeletPort int32
	// ProbeScript holds the probe outcomes scripted from outside the kubelet; it outlives a
	// kubelet restart, as the containers do. Nil leaves the pods' probe annotations and the
	// default, success.
	ProbeScript *prober.Script
}

func (o Options) validate() error {
	var missing []string
	if o.NodeName == "" {
		missing = append(missing, "NodeName")
	}
	if o.Clock == nil {
		missing = append(missing, "Clock")
	}
	if o.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	if len(missing) > 0 {
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	return o.Config.Validate()
}

// crashLoopBackOff returns the crash-loop back-off's initial delay and cap: the kubelet's
// newCrashLoopBackOff.
func crashLoopBackOff(c *config.Config) (initial, maximum time.Duration) {
	initial, maximum = kubecontainer.InitialBackoff, kubecontainer.MaxContainerBackoff
	if c.FeatureGates.Enabled(config.ReduceDefaultCrashLoopBackOffDecay) {
		initial, maximum = time.Second, time.Minute
	}
	if c.FeatureGates.Enabled(config.KubeletCrashLoopBackOffMax) {
		// The configuration's value, 300s by default, wins.
		maximum = kubecontainer.MaxContainerBackoff
		if p := c.CrashLoopBackOff.MaxContainerRestartPeriod; p != 0 {
			maximum = p
		}
		initial = min(initial, maximum)
	}
	return initial, maximum
}

// imagePullSlots is how many image pulls the node runs at once (0: no limit), from a valid
// configuration's serializeImagePulls and maxParallelImagePulls.
func imagePullSlots(c *config.Config) int {
	switch {
	case c.ImagePulls.Serialize:
		return 1
	case c.ImagePulls.MaxParallel != nil:
		return int(*c.ImagePulls.MaxParallel)
	}
	return 0
}

// Node is one simulated kubelet's sync side. Loop is its entry point; the other fields are the
// cores the scenario engine scripts and inspects.
type Node struct {
	Loop    *syncloop.Loop
	Runtime *fakeruntime.Runtime
	Pods    *podmanager.Manager
	Cache   *pleg.Cache
	Workers *podworkers.Workers
	Status  *status.Manager
	// Probes is the prober manager.
	Probes *prober.Manager
	// Metrics is Options.Metrics.
	Metrics *metrics.Registry
}

// New builds a Node.
func New(opts Options) (*Node, error) {
	if opts.Config == nil {
		opts.Config = config.Default()
	}
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new kubelet: %w", err)
	}
	n, err := build(opts)
	if err != nil {
		return nil, fmt.Errorf("new kubelet %s: %w", opts.NodeName, err)
	}
	return n, nil
}

// build wires the cores in dependency order; the first constructor error stops it.
func build(opts Options) (*Node, error) {
	clk, tracer := opts.Clock, opts.Tracer
	n := &Node{Cache: pleg.NewCache(), Metrics: opts.Metrics}
	recorder, err := eventrecord.NewTracing(opts.Recorder, tracer)
	if err != nil {
		return nil, err
	}
	cfg := opts.Config
	slots := imagePullSlots(cfg)
	// The kubelet's podStartupLatencyTracker: the pod config, the image manager and the status
	// manager report to it, and it feeds the pod start SLI metrics.
	var startup *podstartup.Tracker
	if opts.Metrics != nil {
		if startup, err = podstartup.New(podstartup.Options{Clock: clk, Metrics: opts.Metrics, Tracer: tracer}); err != nil {
			return nil, err
		}
	}
	n.Runtime = opts.Runtime
	if n.Runtime != nil {
		// A restarted kubelet: the containers are the old process's, the instruments its own.
		var m fakeruntime.Metrics
		if opts.Metrics != nil {
			m = opts.Metrics
		}
		n.Runtime.AttachKubelet(m, pullRecorder(startup))
	}
	if n.Runtime == nil {
		ropts := fakeruntime.Options{Clock: clk, Latencies: opts.Latencies, Tracer: tracer, Recorder: recorder, MaxParallelImagePulls: slots, Pulls: pullRecorder(startup)}
		if opts.Metrics != nil {
			ropts.Metrics = opts.Metrics
		}
		if n.Runtime, err = fakeruntime.New(ropts); err != nil {
			return nil, err
		}
	}
	if n.Pods, err = podmanager.New(podmanager.Options{Tracer: tracer}); err != nil {
		return nil, err
	}
	queue, err := workqueue.New(workqueue.Options{Clock: clk})
	if err != nil {
		return nil, err
	}
	popts := pleg.Options{Runtime: n.Runtime, Cache: n.Cache, Clock: clk, Tracer: tracer}
	if opts.Metrics != nil {
		popts.Metrics = opts.Metrics
	}
	relister, err := pleg.New(popts)
	if err != nil {
		return nil, err
	}
	state, err := runtimestate.New(runtimestate.Options{Clock: clk, Tracer: tracer, Runtime: n.Runtime, PLEG: relister})
	if err != nil {
		return nil, err
	}
	// kl.backOff: the crash-loop back-off every pod shares.
	initial, maximum := crashLoopBackOff(cfg)
	crashLoop, err := kubecontainer.NewBackoff(clk, initial, maximum)
	if err != nil {
		return nil, err
	}

	sopts := status.Options{
		PodManager: n.Pods,
		// The pod workers are built after the status manager; the kubelet's podDeletionSafety
		// asks them only once they exist.
		DeletionSafety: deletionSafetyFunc(func(pod *v1.Pod) bool { return n.Workers.CouldHaveRunningContainers(pod.UID) }),
		Clock:          clk,
		Tracer:         tracer,
	}
	if startup != nil {
		sopts.Startup = startup
	}
	syncOpts := podsync.Options{NodeName: opts.NodeName, Clock: clk, Tracer: tracer, Runtime: n.Runtime, CrashLoopBackOff: crashLoop}
	var mirror *podmanager.MirrorClient
	var node *nodestatus.Status
	if opts.Client != nil {
		sopts.Client = status.ClientsetAdapter{Client: opts.Client}
		if mirror, err = podmanager.NewMirrorClient(podmanager.MirrorClientOptions{Client: opts.Client, NodeName: opts.NodeName, Tracer: tracer}); err != nil {
			return nil, err
		}
		nodes := nodestatus.ClientsetClient{Client: opts.Client}
		syncOpts.Mirror, syncOpts.Nodes, syncOpts.HostIP = mirror, nodes, opts.NodeIP
		nopts := nodestatus.Options{NodeName: opts.NodeName, NodeIP: opts.NodeIP, KubeletPort: opts.KubeletPort, Machine: cfg.Machine, Clock: clk, Tracer: tracer, Client: nodes, RuntimeState: state, Recorder: recorder,
			StatusPeriod: cfg.NodeStatus.UpdateFrequency, ReportPeriod: cfg.NodeStatus.ReportFrequency,
			Rand: rand.New(rand.NewPCG(opts.Seed, opts.Seed+1))}
		if opts.Devices != nil {
			nopts.Devices = opts.Devices
		}
		if node, err = nodestatus.New(nopts); err != nil {
			return nil, err
		}
	}
	syncOpts.Recorder = recorder
	if opts.Metrics != nil {
		syncOpts.Metrics = opts.Metrics
	}
	if n.Status, err = status.New(sopts); err != nil {
		return nil, err
	}
	syncOpts.Status = n.Status
	proberOpts := prober.Options{Clock: clk, Tracer: tracer, Status: n.Status, Recorder: recorder, Script: opts.ProbeScript,
		Rand: rand.New(rand.NewPCG(opts.Seed, opts.Seed+2))}
	if opts.Metrics != nil {
		proberOpts.Metrics = opts.Metrics
	}
	if n.Probes, err = prober.New(proberOpts); err != nil {
		return nil, err
	}
	syncOpts.Probes = n.Probes
	syncer, err := podsync.New(syncOpts)
	if err != nil {
		return nil, err
	}
	wopts := podworkers.Options{
		Syncer:         syncer,
		Clock:          clk,
		Tracer:         tracer,
		Rand:           rand.New(rand.NewPCG(opts.Seed, opts.Seed)),
		Cache:          n.Cache,
		Queue:          queue,
		ResyncInterval: cfg.SyncFrequency,
	}
	if opts.Metrics != nil {
		wopts.Metrics = opts.Metrics
	}
	if n.Workers, err = podworkers.New(wopts); err != nil {
		return nil, err
	}
	hopts := housekeeping.Options{
		Tracer: tracer, Pods: n.Pods, Workers: n.Workers, Runtime: n.Runtime, Status: n.Status, CrashLoopBackOff: crashLoop,
		Prober: n.Probes,
	}
	if mirror != nil {
		hopts.Mirror = mirror
	}
	if opts.Metrics != nil {
		hopts.Metrics = opts.Metrics
	}
	cleaner, err := housekeeping.New(hopts)
	if err != nil {
		return nil, err
	}
	// The kubelet registers the active-deadline handler as a sync loop handler (and as a pod sync
	// handler, which GeneratePodStatus is).
	deadline, err := status.NewActiveDeadline(clk, n.Status)
	if err != nil {
		return nil, err
	}
	lopts := syncloop.Options{
		SyncLoopHandlers: []syncloop.PodSyncLoopHandler{deadline},
		Clock:            clk,
		Tracer:           tracer,
		Pods:             n.Pods,
		Workers:          n.Workers,
		WorkQueue:        queue,
		PLEG:             relister,
		Cache:            n.Cache,
		Runtime:          n.Runtime,
		RuntimeState:     state,
		Kills:            syncer,
		Housekeeping:     cleaner,
		Status:           n.Status,
		SourcesReady:     opts.SourcesReady,
		Prober:           n.Probes,
	}
	if node != nil {
		lopts.Node = &registeringNode{Status: node, pods: n.Pods, syncer: syncer}
	}
	if lopts.Admit, err = newAdmitter(opts, n, recorder); err != nil {
		return nil, err
	}
	if startup != nil {
		lopts.Startup = startup
	}
	if n.Loop, err = syncloop.New(lopts); err != nil {
		return nil, err
	}
	return n, nil
}

// deletionSafetyFunc adapts a function to status.DeletionSafety.
type deletionSafetyFunc func(pod *v1.Pod) bool

// PodCouldHaveRunningContainers calls f.
func (f deletionSafetyFunc) PodCouldHaveRunningContainers(pod *v1.Pod) bool { return f(pod) }

// The wiring relies on these implementations; a signature that drifts fails here, not as a
// collaborator the loop silently stops waking.
var (
	_ syncloop.Timed             = (*fakeruntime.Runtime)(nil)
	_ syncloop.ContainerRemover  = (*fakeruntime.Runtime)(nil)
	_ podsync.Runtime            = (*fakeruntime.Runtime)(nil)
	_ housekeeping.Runtime       = (*fakeruntime.Runtime)(nil)
	_ runtimestate.Runtime       = (*fakeruntime.Runtime)(nil)
	_ pleg.Lister                = (*fakeruntime.Runtime)(nil)
	_ podworkers.Syncer          = (*podsync.Syncer)(nil)
	_ syncloop.Timed             = (*podsync.Syncer)(nil)
	_ syncloop.RuntimeState      = (*runtimestate.State)(nil)
	_ nodestatus.RuntimeState    = (*runtimestate.State)(nil)
	_ syncloop.NodeStatus        = (*nodestatus.Status)(nil)
	_ syncloop.Housekeeper       = (*housekeeping.Cleaner)(nil)
	_ syncloop.Workers           = (*podworkers.Workers)(nil)
	_ housekeeping.Workers       = (*podworkers.Workers)(nil)
	_ syncloop.StatusManager     = (*status.Manager)(nil)
	_ podsync.StatusManager      = (*status.Manager)(nil)
	_ housekeeping.StatusManager = (*status.Manager)(nil)
	_ syncloop.PodManager        = (*podmanager.Manager)(nil)
	_ housekeeping.PodManager    = (*podmanager.Manager)(nil)
	_ podsync.MirrorClient       = (*podmanager.MirrorClient)(nil)
	_ podsync.NodeGetter         = nodestatus.ClientsetClient{}
	_ pleg.Metrics               = (*metrics.Registry)(nil)
	_ podworkers.Metrics         = (*metrics.Registry)(nil)
	_ podsync.Metrics            = (*metrics.Registry)(nil)
	_ housekeeping.Metrics       = (*metrics.Registry)(nil)
	_ fakeruntime.Metrics        = (*metrics.Registry)(nil)
	_ podsync.ProbingRuntime     = (*fakeruntime.Runtime)(nil)
	_ podsync.Prober             = (*prober.Manager)(nil)
	_ syncloop.Prober            = (*prober.Manager)(nil)
	_ syncloop.ProbeStatusSetter = (*status.Manager)(nil)
	_ housekeeping.Prober        = (*prober.Manager)(nil)
	_ prober.StatusProvider      = (*status.Manager)(nil)
	_ podstartup.Metrics         = (*metrics.Registry)(nil)
	_ prober.Metrics             = (*metrics.Registry)(nil)
	_ fakeruntime.PullRecorder   = (*podstartup.Tracker)(nil)
	_ status.StartupTracker      = (*podstartup.Tracker)(nil)
	_ syncloop.WatchObserver     = (*podstartup.Tracker)(nil)
)

// registeringNode is the node status with the kubelet's fastStaticPodsRegistration: once the node
// object exists, the mirror pods of the static pods known then are reconciled at once.
type registeringNode struct {
	*nodestatus.Status
	pods   *podmanager.Manager
	syncer *podsync.Syncer
	done   bool
}

// Register registers the node and, the first time it is registered, reconciles the mirror pods.
func (r *registeringNode) Register(ctx context.Context) error {
	err := r.Status.Register(ctx)
	if !r.done && r.Registered() {
		r.done = true
		r.syncer.FastStaticPodsRegistration(ctx, r.pods.GetStaticPodToMirrorPodMap())
	}
	return err
}

// pullRecorder is the tracker as the runtime's image manager sees it, nil without one.
func pullRecorder(t *podstartup.Tracker) fakeruntime.PullRecorder {
	if t == nil {
		return nil
	}
	return t
}
