package syncloop

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/pleg"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Timed is a core the loop wakes when its work is due: the runtime's scheduled effects, the
// runtime state's status check, the pod syncer's kill completions.
type Timed interface {
	// Advance does the work due at the clock's current time.
	Advance()
	// NextWake returns when work is next due, false for none.
	NextWake() (time.Time, bool)
}

// PodManager is the desired pod set as the handlers update and read it.
type PodManager interface {
	AddPod(pod *v1.Pod)
	UpdatePod(pod *v1.Pod)
	RemovePod(pod *v1.Pod)
	GetPodByUID(uid types.UID) (*v1.Pod, bool)
	GetPodAndMirrorPod(pod *v1.Pod) (resolved, mirror *v1.Pod, wasMirror bool)
	// GetPods returns every regular and static pod, without mirror pods, in a stable order. The
	// loop only reads the slice.
	GetPods() []*v1.Pod
}

// PodSyncLoopHandler asks for a pod to be synced at a sync tick although its work queue entry is
// not due: the kubelet's lifecycle.PodSyncLoopHandler. The only one in the kubelet is the
// active-deadline handler.
type PodSyncLoopHandler interface {
	ShouldSync(pod *v1.Pod) bool
}

// PodSyncLoopFilter is a PodSyncLoopHandler that can tell from a pod object alone that it will
// never ask for it (the active-deadline handler: a pod without activeDeadlineSeconds). With a pod
// manager that numbers its changes (VersionedPods), the loop asks ShouldSync at a sync tick only
// about the pods some handler may ask for, listed again only after the pod manager changed: a
// fleet node's tick then reads none of its pods, where the kubelet's loop asks the handler about
// every pod (the same answers; only the walk is saved).
type PodSyncLoopFilter interface {
	PodSyncLoopHandler
	// MaySync reports whether ShouldSync can ever be true for this pod object.
	MaySync(pod *v1.Pod) bool
}

// VersionedPods is a PodManager that numbers its changes: two calls of Version that return the
// same number have the same pod objects between them.
type VersionedPods interface {
	Version() uint64
}

// Workers are the pod workers as the loop sends them updates and steps them.
type Workers interface {
	UpdatePod(opts podworkers.UpdateOptions)
	// Step starts and completes the syncs due now.
	Step(ctx context.Context)
	NextWake() (time.Time, bool)
	// ShouldPodContentBeRemoved tells the container deletor whether to keep the newest dead
	// instance of a container.
	ShouldPodContentBeRemoved(uid types.UID) bool
}

// WorkQueue hands out the UIDs whose resync is due.
type WorkQueue interface {
	GetWork() []types.UID
}

// PLEG is the pod lifecycle event generator the loop relists when it is due.
type PLEG interface {
	Relist() []pleg.Event
	NextWake() (time.Time, bool)
}

// PodCache is the pod status cache the container deletor reads.
type PodCache interface {
	Get(uid types.UID) (*kubecontainer.PodStatus, error)
}

// ContainerRemover removes dead containers: the container deletor's runtime call. A runtime that
// also schedules its own effects is Timed too, and the loop advances it first.
type ContainerRemover interface {
	RemoveContainer(id string) error
}

// RuntimeState is the kubelet's runtimeState: checked every few seconds, it holds dispatch back
// while it has errors.
type RuntimeState interface {
	Timed
	Errors() error
}

// Housekeeper runs HandlePodCleanups.
type Housekeeper interface {
	HandlePodCleanups(ctx context.Context) error
}

// StatusManager writes pod statuses to the API in batches.
type StatusManager interface {
	Step(ctx context.Context) error
	NextWake() (time.Time, bool)
}

// NodeStatus registers the node and sends its heartbeats.
type NodeStatus interface {
	// Register creates the node object when that is due; the loop calls it first in Advance.
	Register(ctx context.Context) error
	// Heartbeat renews the lease and writes the node status when due; the loop calls it last.
	Heartbeat(ctx context.Context) error
	NextWake() (time.Time, bool)
}

// Options holds a Loop's collaborators: the kubelet components syncLoopIteration talks to. It is
// longer than the house limit because it is that list; each field is a small interface the loop
// declares, and package kubelet fills them.
type Options struct {
	// Clock is the time of every tick. Required.
	Clock clock.PassiveClock
	// Tracer receives the loop's trace events. Required; trace.Discard drops them.
	Tracer trace.Tracer
	// Pods is the desired pod set. Required.
	Pods PodManager
	// Workers are the pod workers. Required.
	Workers Workers
	// WorkQueue is the queue the workers fill and the sync tick drains. Required.
	WorkQueue WorkQueue
	// PLEG relists the runtime; Cache is the pod cache it fills. Both required.
	PLEG  PLEG
	Cache PodCache
	// Runtime is the container runtime, advanced first in each Advance when it is Timed.
	// Required.
	Runtime ContainerRemover
	// RuntimeState holds dispatch back while the runtime or the PLEG is unhealthy. Required.
	RuntimeState RuntimeState
	// Kills finishes SyncTerminatingPod calls whose kill ended: the pod syncer. Required.
	Kills Timed
	// Volumes is the volume manager's populator and reconciler, whose passes the pod workers'
	// volume waits look at. Nil is a kubelet without one.
	Volumes Timed
	// Housekeeping runs on the housekeeping tick once every source has been seen. Required.
	Housekeeping Housekeeper
	// Status is the status manager. Required.
	Status StatusManager
	// Node registers the node and sends heartbeats. Nil is a standalone kubelet.
	Node NodeStatus
	// SourcesReady reports whether every configured source has been seen, given the sources the
	// loop has seen so far: PodConfig's SeenAllSources. Nil means always ready.
	SourcesReady func(seen sets.Set[string]) bool
	// Admit decides whether a new pod may run. Nil admits every pod.
	Admit Admitter
	// SyncLoopHandlers are asked at every sync tick about each pod whose queue entry is not due.
	SyncLoopHandlers []PodSyncLoopHandler
	// Prober runs the probe workers. Nil runs no probes. When Status is also a
	// ProbeStatusSetter, readiness and startup changes are written to it at once.
	Prober Prober
	// Startup is told of every API pod in a config update (the kubelet's pod config tells its
	// startup SLI observer). Nil tells no one.
	Startup WatchObserver
	// Resizes is the allocation manager's in-place resize handling. Nil resizes nothing.
	Resizes Resizer
	// Keys hands out the trace keys of pods another component built already (one string a
	// pod, shared). Nil builds every key.
	Keys *kubecontainer.SharedKeys
}

// Resizer is the allocation manager as the handlers drive it. Each call returns the pods whose
// resize it allocated or whose resize conditions changed, which the loop syncs (triggerPodSync).
type Resizer interface {
	// HandlePodAdditions is HandlePodAdditions' resize step, once every pod of the update was
	// added: pods are the update's. Which admitted pods have a pending resize was decided at
	// their admission (the Admitter), before their workers were told of them.
	HandlePodAdditions(ctx context.Context, pods []*v1.Pod) []*v1.Pod
	// HandlePodUpdate is HandlePodUpdates' resize step for a pod that changed from old.
	HandlePodUpdate(ctx context.Context, old, pod *v1.Pod) []*v1.Pod
	// RemovePod forgets a removed pod's allocation; RetryPendingResizes then retries the
	// pending resizes, which HandlePodRemoves does once per update.
	RemovePod(uid types.UID)
	RetryPendingResizes(ctx context.Context) []*v1.Pod
	// HasPendingResizes and RequestsShrank are HandlePodReconcile's: when a resize is pending
	// and a pod's status change shrank its requests (its status resources dropped after a
	// resize down), RetryPendingResizes runs once the update is handled.
	HasPendingResizes() bool
	RequestsShrank(old, pod *v1.Pod) bool
	// Advance retries the pending resizes when the retry timer fired; NextWake says when.
	Advance(ctx context.Context) []*v1.Pod
	NextWake() (time.Time, bool)
}

// WatchObserver is the kubelet's podStartupSLIObserver: it sees each pod the API source delivers.
type WatchObserver interface {
	ObservedPodOnWatch(pod *v1.Pod, when time.Time)
}

// Admitter is the kubelet's canAdmitPod with its admit handlers, and rejectPod for the pods they
// refuse.
type Admitter interface {
	// Admit reports whether the pod may run; for a refused pod it has recorded the rejection
	// (a Failed status and an event).
	Admit(ctx context.Context, pod *v1.Pod) bool
}

func (o *Options) validate() error {
	var missing minikubelet.Missing
	missing.Check("Clock", o.Clock == nil)
	missing.Check("Tracer", o.Tracer == nil)
	missing.Check("Pods", o.Pods == nil)
	missing.Check("Workers", o.Workers == nil)
	missing.Check("WorkQueue", o.WorkQueue == nil)
	missing.Check("PLEG", o.PLEG == nil)
	missing.Check("Cache", o.Cache == nil)
	missing.Check("Runtime", o.Runtime == nil)
	missing.Check("RuntimeState", o.RuntimeState == nil)
	missing.Check("Kills", o.Kills == nil)
	missing.Check("Housekeeping", o.Housekeeping == nil)
	missing.Check("Status", o.Status == nil)
	return missing.Err("")
}
