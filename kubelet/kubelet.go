package kubelet

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/housekeeping"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/metrics"
	"github.com/minikubelet/minikubelet/nodestatus"
	"github.com/minikubelet/minikubelet/pleg"
	"github.com/minikubelet/minikubelet/podmanager"
	"github.com/minikubelet/minikubelet/podsync"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/runtimestate"
	"github.com/minikubelet/minikubelet/status"
	"github.com/minikubelet/minikubelet/syncloop"
	"github.com/minikubelet/minikubelet/trace"
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
	// Recorder receives the kubelet's Kubernetes events. Nil records none.
	Recorder record.EventRecorder
	// Latencies are the fake runtime's.
	Latencies fakeruntime.Latencies
	// SyncFrequency is the pod workers' resync interval; zero is the kubelet's 1m.
	SyncFrequency time.Duration
	// SourcesReady is PodConfig's SeenAllSources. Nil means every source is ready.
	SourcesReady func(seen sets.Set[string]) bool
	// Metrics receives every core's metrics. Nil records none.
	Metrics *metrics.Registry
	// KubeletPort is the port the node advertises for its server; zero is 10250.
	KubeletPort int32
}

// ErrMissingOption is wrapped by New when a required option is unset.
var ErrMissingOption = errors.New("missing required option")

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
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), ErrMissingOption)
	}
	return nil
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
	// Metrics is Options.Metrics.
	Metrics *metrics.Registry
}

// New builds a Node.
func New(opts Options) (*Node, error) {
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
	var err error
	ropts := fakeruntime.Options{Clock: clk, Latencies: opts.Latencies, Tracer: tracer, Recorder: opts.Recorder}
	popts := pleg.Options{Cache: n.Cache, Clock: clk, Tracer: tracer}
	if opts.Metrics != nil {
		ropts.Metrics, popts.Metrics = opts.Metrics, opts.Metrics
	}
	if n.Runtime, err = fakeruntime.New(ropts); err != nil {
		return nil, err
	}
	if n.Pods, err = podmanager.New(podmanager.Options{Tracer: tracer}); err != nil {
		return nil, err
	}
	queue, err := workqueue.New(workqueue.Options{Clock: clk})
	if err != nil {
		return nil, err
	}
	popts.Runtime = n.Runtime
	relister, err := pleg.New(popts)
	if err != nil {
		return nil, err
	}
	state, err := runtimestate.New(runtimestate.Options{Clock: clk, Tracer: tracer, Runtime: n.Runtime, PLEG: relister})
	if err != nil {
		return nil, err
	}
	// kl.backOff: the crash-loop back-off every pod shares.
	crashLoop, err := kubecontainer.NewBackoff(clk, kubecontainer.InitialBackoff, kubecontainer.MaxContainerBackoff)
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
		if node, err = nodestatus.New(nodestatus.Options{NodeName: opts.NodeName, NodeIP: opts.NodeIP, KubeletPort: opts.KubeletPort, Clock: clk, Tracer: tracer, Client: nodes, RuntimeState: state}); err != nil {
			return nil, err
		}
	}
	if opts.Recorder != nil {
		syncOpts.Recorder = opts.Recorder
	}
	if opts.Metrics != nil {
		syncOpts.Metrics = opts.Metrics
	}
	if n.Status, err = status.New(sopts); err != nil {
		return nil, err
	}
	syncOpts.Status = n.Status
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
		ResyncInterval: opts.SyncFrequency,
	}
	if opts.Metrics != nil {
		wopts.Metrics = opts.Metrics
	}
	if n.Workers, err = podworkers.New(wopts); err != nil {
		return nil, err
	}
	hopts := housekeeping.Options{
		Tracer: tracer, Pods: n.Pods, Workers: n.Workers, Runtime: n.Runtime, Status: n.Status, CrashLoopBackOff: crashLoop,
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
	lopts := syncloop.Options{
		Clock:        clk,
		Tracer:       tracer,
		Pods:         n.Pods,
		Workers:      n.Workers,
		WorkQueue:    queue,
		PLEG:         relister,
		Cache:        n.Cache,
		Runtime:      n.Runtime,
		RuntimeState: state,
		Kills:        syncer,
		Housekeeping: cleaner,
		Status:       n.Status,
		SourcesReady: opts.SourcesReady,
	}
	if node != nil {
		lopts.Node = node
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
)
