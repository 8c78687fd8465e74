package kubelet

import (
	"context"
	"math/rand/v2"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/record"

	"github.com/minikubelet/minikubelet/admission"
	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/housekeeping"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/kubelet/allocation"
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
	"github.com/minikubelet/minikubelet/status"
	"github.com/minikubelet/minikubelet/syncloop"
	"github.com/minikubelet/minikubelet/volumemanager"
	"github.com/minikubelet/minikubelet/workqueue"
)

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

// Sync is the kubelet's sync side: the sync loop and the cores it drives. Loop is its entry
// point; the other fields are the cores runners serve and drivers script and inspect.
type Sync struct {
	Loop    *syncloop.Loop
	Runtime *fakeruntime.Runtime
	Pods    *podmanager.Manager
	Cache   *pleg.Cache
	Workers *podworkers.Workers
	Status  *status.Manager
	// Probes is the prober manager.
	Probes *prober.Manager
	// Allocation is the allocation manager: allocated resources and in-place resizes.
	Allocation *allocation.Manager
	// besides are the seams of the cores Run runs beside the loop.
	besides besides
	// Queue is the work queue: the pod workers put a UID back in it with a delay, the sync
	// loop's tick takes the UIDs that are due.
	Queue *workqueue.Queue
	// runtimeState is updateRuntimeUp's state: the start-up makes its first check.
	runtimeState *runtimestate.State
	// Volumes is the volume manager.
	Volumes *volumemanager.Manager
}

// syncDeps are what the sync side takes from the rest of the process.
type syncDeps struct {
	recorder record.EventRecorder
	metrics  *metrics.Registry
	// devices is the device manager; nil on a node without device plugins.
	devices Devices
	// sourcesReady is PodConfig's SeenAllSources.
	sourcesReady func(seen sets.Set[string]) bool
	// objects are the ConfigMap and Secret managers and the environment maker.
	objects Objects
	// runtimeAnswered is called when the runtime first answers updateRuntimeUp's check.
	runtimeAnswered func()
}

// buildSync wires the sync side's cores in dependency order (NewMainKubelet from the pod cache
// to the admit handlers); the first constructor error stops it.
func buildSync(opts Options, d syncDeps) (Sync, error) {
	clk, tracer, reg, recorder := opts.Clock, opts.Tracer, d.metrics, d.recorder
	n := &Sync{Cache: pleg.NewCache()}
	// One trace key a pod, kept by the pod workers once they are built (below) and handed to the
	// components that trace the pod.
	keys := &kubecontainer.SharedKeys{}
	cfg := opts.Config
	slots := imagePullSlots(cfg)
	// The kubelet's podStartupLatencyTracker: the pod config, the image manager and the status
	// manager report to it, and it feeds the pod start SLI metrics.
	startup, err := podstartup.New(podstartup.Options{Clock: clk, Metrics: reg, Tracer: tracer})
	if err != nil {
		return Sync{}, err
	}
	n.Runtime = opts.World.Runtime
	if n.Runtime != nil {
		// A restarted kubelet: the containers are the old process's; the event recorder, the
		// instruments and the trace keys are its own (the old keys would keep the old pod
		// workers alive).
		n.Runtime.AttachKubelet(recorder, reg, startup, keys)
	} else {
		ropts := fakeruntime.Options{Clock: clk, Latencies: opts.Latencies, Tracer: tracer, Recorder: recorder, MaxParallelImagePulls: slots, Pulls: startup, Metrics: reg, Keys: keys}
		if n.Runtime, err = fakeruntime.New(ropts); err != nil {
			return Sync{}, err
		}
	}
	// The kuberuntime manager's runtime helper is the kubelet process: a restarted kubelet is a
	// new one.
	n.Runtime.SetRuntimeHelper(d.objects.Env)
	if n.Pods, err = podmanager.New(podmanager.Options{Tracer: tracer}); err != nil {
		return Sync{}, err
	}
	queue, err := workqueue.New(workqueue.Options{Clock: clk})
	if err != nil {
		return Sync{}, err
	}
	n.Queue = queue
	relister, err := pleg.New(pleg.Options{Runtime: n.Runtime, Cache: n.Cache, Clock: clk, Tracer: tracer, Metrics: reg, Keys: keys})
	if err != nil {
		return Sync{}, err
	}
	state, err := runtimestate.New(runtimestate.Options{Clock: clk, Tracer: tracer, Runtime: &firstAnswer{Runtime: n.Runtime, answered: d.runtimeAnswered}, PLEG: relister})
	if err != nil {
		return Sync{}, err
	}
	n.runtimeState = state
	// kl.backOff: the crash-loop back-off every pod shares.
	initial, maximum := crashLoopBackOff(cfg)
	crashLoop, err := kubecontainer.NewBackoff(clk, initial, maximum)
	if err != nil {
		return Sync{}, err
	}

	sopts := status.Options{
		PodManager: n.Pods,
		// The pod workers are built after the status manager; the kubelet's podDeletionSafety
		// asks them only once they exist.
		DeletionSafety: deletionSafetyFunc(func(uid types.UID) bool { return n.Workers.CouldHaveRunningContainers(uid) }),
		Clock:          clk,
		Tracer:         tracer,
		Startup:        startup,
		Keys:           keys,
	}
	syncOpts := podsync.Options{NodeName: opts.NodeName, Clock: clk, Tracer: tracer, Runtime: n.Runtime, CrashLoopBackOff: crashLoop, Objects: d.objects,
		CheckSkip: opts.CheckStatusSkip}
	var mirror *podmanager.MirrorClient
	var node *nodestatus.Status
	n.besides.runtime = &runtimeView{state: state}
	if client := opts.World.API; client != nil {
		var writes Writes
		if opts.World.Writes != nil {
			writes = *opts.World.Writes
		}
		sopts.Client = status.PodStatusClient(status.AnswerAdapter{Client: client})
		if writes.PodStatus != nil {
			sopts.Client = writes.PodStatus
		}
		if mirror, err = podmanager.NewMirrorClient(podmanager.MirrorClientOptions{Client: client, API: writes.Mirror, NodeName: opts.NodeName, Tracer: tracer}); err != nil {
			return Sync{}, err
		}
		n.besides.nodes = &nodeReader{api: nodestatus.ClientsetClient{Client: client}}
		if writes.Node != nil {
			n.besides.nodes.api = writes.Node
		}
		syncOpts.Mirror, syncOpts.Nodes, syncOpts.HostIP = mirror, n.besides.nodes, opts.NodeIP
		// The node status and the lease go through the heartbeat client, as the kubelet's.
		heartbeat := opts.World.HeartbeatAPI
		if heartbeat == nil {
			heartbeat = client
		}
		var nodeClient nodestatus.Client = nodestatus.ClientsetClient{Client: heartbeat}
		if writes.Heartbeat != nil {
			nodeClient = writes.Heartbeat
		} else if writes.Node != nil {
			nodeClient = writes.Node
		}
		nopts := nodestatus.Options{NodeName: opts.NodeName, NodeIP: opts.NodeIP, KubeletPort: opts.KubeletPort, Machine: cfg.Machine, Clock: clk, Tracer: tracer,
			Client: nodeClient, Lister: n.besides.nodes, RuntimeState: n.besides.runtime, Taints: opts.RegisterWithTaints,
			Recorder:     recorder,
			StatusPeriod: cfg.NodeStatus.UpdateFrequency, ReportPeriod: cfg.NodeStatus.ReportFrequency,
			Rand: rand.New(rand.NewPCG(opts.Seed, opts.Seed+1)), Jitter: rand.New(rand.NewPCG(opts.Seed, nodeJitterSeed)),
			// The CSI volume plugin initializes the CSINode through the kubelet's API client.
			CSINodes: nodestatus.ClientsetCSINodes{Client: client}}
		if d.devices != nil {
			nopts.Devices = d.devices
		}
		if node, err = nodestatus.New(nopts); err != nil {
			return Sync{}, err
		}
	}
	syncOpts.Recorder = recorder
	syncOpts.Metrics = reg
	if n.Status, err = status.New(sopts); err != nil {
		return Sync{}, err
	}
	n.besides.status = &loopStatus{Manager: n.Status}
	syncOpts.Status = n.Status
	proberOpts := prober.Options{Clock: clk, Tracer: tracer, Status: n.Status, Recorder: recorder, Script: opts.World.ProbeScript,
		Rand: rand.New(rand.NewPCG(opts.Seed, opts.Seed+2)), Metrics: reg}
	if n.Probes, err = prober.New(proberOpts); err != nil {
		return Sync{}, err
	}
	syncOpts.Probes = n.Probes
	// The allocation manager admits resizes with the admit handlers, built last (newAdmitter).
	var admitter *admission.Admitter
	aopts := allocation.Options{
		Clock:      clk,
		Conditions: n.Status,
		Admit: func(ctx context.Context, pod *v1.Pod) (bool, string, string) {
			return admitter.CanResize(ctx, pod)
		},
		Allocatable: cfg.Machine.AllocatableAbsolute(),
		PodByUID:    n.Pods.GetPodByUID,
		Recorder:    recorder,
		Checkpoint:  opts.World.Allocations,
	}
	if f, ok := opts.World.Allocations.(allocation.FileCheckpoint); ok {
		aopts.CheckpointPath = f.Path
	} else {
		aopts.CheckpointPath = allocation.CheckpointFile
	}
	if d.sourcesReady != nil {
		aopts.SourcesReady = func() bool { return n.Loop != nil && n.Loop.SourcesReady() }
	}
	if n.Allocation, err = allocation.New(aopts); err != nil {
		return Sync{}, err
	}
	syncOpts.Resizes = &podsync.Resizes{Allocation: n.Allocation, Conditions: n.Status, Runtime: n.Runtime, PLEG: relister}
	waits := &volumeWaits{}
	syncOpts.Volumes = waits
	syncer, err := podsync.New(syncOpts)
	if err != nil {
		return Sync{}, err
	}
	n.besides.syncer = syncer
	wopts := podworkers.Options{
		Syncer:         syncer,
		Clock:          clk,
		Tracer:         tracer,
		Rand:           rand.New(rand.NewPCG(opts.Seed, opts.Seed)),
		Cache:          n.Cache,
		Queue:          queue,
		ResyncInterval: cfg.SyncFrequency,
		Metrics:        reg,
	}
	if n.Workers, err = podworkers.New(wopts); err != nil {
		return Sync{}, err
	}
	keys.Keeper = n.Workers
	if n.Volumes, n.besides.tokens, err = buildVolumes(opts, volumeDeps{n: n, recorder: recorder, objects: d.objects, sourcesReady: d.sourcesReady}); err != nil {
		return Sync{}, err
	}
	waits.m = n.Volumes
	// The populator looks at the pod manager's pods at its next pass after they change, or after
	// what the pod workers answer about them changes.
	n.Pods.OnChange(func(types.UID) { n.Volumes.PodsChanged() })
	n.Workers.OnChange(func(types.UID) { n.Volumes.PodsChanged() })
	hopts := housekeeping.Options{
		Tracer: tracer, Pods: n.Pods, Workers: n.Workers, Runtime: n.Runtime, Status: n.Status, CrashLoopBackOff: crashLoop,
		Prober: n.Probes, Metrics: reg, Allocations: n.Allocation, PodDirs: n.Volumes,
	}
	if mirror != nil {
		hopts.Mirror = mirror
	}
	cleaner, err := housekeeping.New(hopts)
	if err != nil {
		return Sync{}, err
	}
	// The kubelet registers the active-deadline handler as a sync loop handler (and as a pod sync
	// handler, which GeneratePodStatus is).
	deadline, err := status.NewActiveDeadline(clk, n.Status)
	if err != nil {
		return Sync{}, err
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
		Volumes:          n.Volumes,
		Housekeeping:     cleaner,
		Status:           n.besides.status,
		SourcesReady:     d.sourcesReady,
		Prober:           n.Probes,
		Startup:          startup,
		Keys:             keys,
	}
	if node != nil {
		n.besides.node = &registeringNode{Status: node, pods: n.Pods, syncer: syncer}
		lopts.Node = n.besides.node
	}
	if admitter, err = newAdmitter(opts, n, recorder, d.devices); err != nil {
		return Sync{}, err
	}
	lopts.Admit = allocatingAdmitter{admitter: admitter, alloc: n.Allocation, terminationRequested: n.Workers.IsPodTerminationRequested}
	lopts.Resizes = n.Allocation
	if n.Loop, err = syncloop.New(lopts); err != nil {
		return Sync{}, err
	}
	return *n, nil
}

// deletionSafetyFunc adapts a function to status.DeletionSafety.
type deletionSafetyFunc func(uid types.UID) bool

// PodCouldHaveRunningContainers calls f.
func (f deletionSafetyFunc) PodCouldHaveRunningContainers(uid types.UID) bool { return f(uid) }

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
	_ nodestatus.RuntimeState    = (*runtimeView)(nil)
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
	_ podsync.Beside             = (*mirrorCalls)(nil)
	_ podsync.NodeGetter         = (*nodeReader)(nil)
	_ nodestatus.NodeLister      = (*nodeReader)(nil)
	_ nodestatus.RuntimeState    = (*runtimeView)(nil)
	_ syncloop.ProbeStatusSetter = (*loopStatus)(nil)
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

	// Housekeeping skips a pass that would do nothing only when every component it reads
	// numbers its changes.
	_ housekeeping.Versioned        = (*podmanager.Manager)(nil)
	_ housekeeping.Versioned        = (*podworkers.Workers)(nil)
	_ housekeeping.Versioned        = (*status.Manager)(nil)
	_ housekeeping.Versioned        = (*prober.Manager)(nil)
	_ housekeeping.VersionedRuntime = (*fakeruntime.Runtime)(nil)
	// So does the status manager's full batch when the pod manager does.
	_ status.VersionedPods = (*podmanager.Manager)(nil)
)
