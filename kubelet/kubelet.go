package kubelet

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubelet/config"
	"github.com/minikubelet/minikubelet/kubeletserver"
	"github.com/minikubelet/minikubelet/metrics"
	"github.com/minikubelet/minikubelet/nodestatus"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/podsync"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Options configure one kubelet process.
type Options struct {
	// NodeName is the node's name, lowercase. Required.
	NodeName string
	// NodeIP is reported as the node's InternalIP and the pods' hostIP.
	NodeIP string
	// Config is the kubelet's configuration (config.FromV1beta1). Nil is config.Default().
	// Its staticPodPath and staticPodURL say whether the file and http sources run.
	Config *config.Config
	// Clock is the time of every core. Required. Run needs a clock.WithTicker.
	Clock clock.PassiveClock
	// Tracer receives every core's trace events. Required; trace.Discard drops them.
	Tracer trace.Tracer
	// Seed seeds the pod workers', the prober's and the node status' jitter.
	Seed uint64
	// World is everything the kubelet reaches outside its process.
	World World
	// Logger receives what the kubelet logs without a Kubernetes event or a trace event outside
	// Run's context: the volume manager's failed TearDowns. The zero value discards it.
	Logger klog.Logger
	// KubeletPort is the port the node advertises for its server; zero is 10250.
	KubeletPort int32
	// Latencies are a new runtime's (World.Runtime nil).
	Latencies fakeruntime.Latencies
	// RegisterWithTaints are the taints the node registers with (registerWithTaints).
	RegisterWithTaints []v1.Taint
	// OnConfig, when set, is called by Settle with every update PodConfig hands the sync loop,
	// just before the loop takes it; the function it returns, if not nil, is called once the loop
	// has. A stepping driver watches the pods with it (replay keeps their UIDs and diffs). Run's
	// updates go from PodConfig's mux to the loop's runner and do not pass here.
	OnConfig func(podconfig.Update) (after func())
	// CheckStatusSkip, when set, makes the pod sync build the status where its periodic skip
	// would not, and records there how many syncs took the skip and the first whose status the
	// status manager did not find unchanged (podsync.Options.CheckSkip). Tests set it.
	CheckStatusSkip *StatusSkipCheck
}

// StatusSkipCheck is the evidence for the pod sync's periodic skip (Options.CheckStatusSkip).
type StatusSkipCheck = podsync.SkipCheck

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

// Kubelet is one kubelet process: its pod sources, PodConfig, the sync side, the plugin pipeline,
// its metrics and its server's view. The cores are exported for the runners (Run) and for drivers
// that script and inspect them (replay); Settle and NextWake step them all in the kubelet's order.
type Kubelet struct {
	// Sync is the sync side: the sync loop and the cores it drives. Its fields are the
	// Kubelet's.
	Sync
	// PodConfig is the core of the kubelet's PodConfig: it merges the sources' updates.
	PodConfig *podconfig.Storage
	// Sources are the pod sources' cores, in the kubelet's order.
	Sources Sources
	// Plugins is the plugin pipeline; nil without World.Plugins.
	Plugins *Plugins
	// Objects are the ConfigMap and Secret managers and the environment maker.
	Objects Objects
	// Metrics is the kubelet's registry: every start of the process has its own.
	Metrics *metrics.Registry
	// Board holds the server's view of the kubelet: with RunOptions.Snapshots, Run takes a
	// snapshot for it when the server asks.
	Board *kubeletserver.Board

	opts Options
	// pending is source output not yet merged, in the order it was produced (Settle).
	pending []podconfig.Update
	// started is set once Settle has started what the kubelet's Run starts.
	started bool
	// start is the start-up's progress (startup.go).
	start startState
	// mux is PodConfig's runner while Run runs; nil when a driver steps the kubelet.
	mux *podconfig.Config
	// recorder is the process's event recorder.
	recorder record.EventRecorder
}

// New builds a kubelet process in the kubelet's order: the container manager's device manager
// (app.run's NewContainerManager), then NewMainKubelet's pod sources and PodConfig
// (makePodSourceConfig: file, http, api), the sync side, the prober, and the plugin manager with
// its handlers (initializeRuntimeDependentModules). It starts nothing: Run does, or a driver
// steps it with Settle.
func New(opts Options) (*Kubelet, error) {
	if opts.Config == nil {
		opts.Config = config.Default()
	}
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new kubelet: %w", err)
	}
	k, err := build(opts)
	if err != nil {
		return nil, fmt.Errorf("new kubelet %s: %w", opts.NodeName, err)
	}
	// createAndInitKubelet's BirthCry, once NewMainKubelet has returned.
	nodestatus.BirthCry(k.recorder, opts.NodeName)
	return k, nil
}

// build wires the process; the first constructor error stops it.
func build(opts Options) (*Kubelet, error) {
	k := &Kubelet{opts: opts, Board: kubeletserver.NewBoard(opts.NodeName)}
	var err error
	if k.Metrics, err = metrics.New(metrics.Options{NodeName: opts.NodeName}); err != nil {
		return nil, err
	}
	// One recorder traces every Kubernetes event of the process, then hands it to the world's.
	recorder, err := eventsRecorder(opts)
	if err != nil {
		return nil, err
	}
	var devices Devices
	if w := opts.World.Plugins; w != nil {
		if k.Plugins, err = buildDevices(opts, w); err != nil {
			return nil, err
		}
		devices = k.Plugins.Devices
	}
	k.recorder = recorder
	k.traceNew()
	if err := k.buildSources(recorder); err != nil {
		return nil, err
	}
	if k.Objects, err = buildObjects(opts); err != nil {
		return nil, err
	}
	k.traceSources()
	if k.Sync, err = buildSync(opts, syncDeps{recorder: recorder, metrics: k.Metrics, devices: devices, sourcesReady: k.seenAllSources,
		objects: k.Objects, runtimeAnswered: k.runtimeAnswered}); err != nil {
		return nil, err
	}
	if k.Plugins != nil {
		if err := k.Plugins.buildManager(opts); err != nil {
			return nil, err
		}
	}
	k.listAPI()
	return k, nil
}
