package podsync

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Runtime is the container runtime as the sync functions call it: kuberuntime's SyncPod, KillPod
// and GetPodStatus. Each call returns at once with the instant its blocking work ends.
type Runtime interface {
	// SyncPod starts what should run, holding restarts back with the crash-loop back-off.
	SyncPod(pod *v1.Pod, status *kubecontainer.PodStatus, backOff *kubecontainer.Backoff) (kubecontainer.Result, error)
	// KillPod stops the running pod's containers and sandboxes; pod may be nil for a runtime-only
	// pod.
	KillPod(pod *v1.Pod, running *kubecontainer.Pod, gracePeriodOverride *int64) (kubecontainer.Result, error)
	// GetPodStatus reads the pod from the runtime.
	GetPodStatus(uid types.UID, name, namespace string) (*kubecontainer.PodStatus, error)
}

// StatusManager is where the sync functions write pod statuses: the kubelet's status manager.
type StatusManager interface {
	// GetPodStatus returns the status last set for the pod, if any.
	GetPodStatus(uid types.UID) (v1.PodStatus, bool)
	// GetPodPhase returns the phase of the status last set for the pod, if any, without a copy of
	// the status.
	GetPodPhase(uid types.UID) (v1.PodPhase, bool)
	// SetPodStatus records the pod's new status. It keeps a deep copy, as the kubelet's does,
	// and nothing of status itself: SyncPod builds the next status into the same lists.
	SetPodStatus(pod *v1.Pod, status v1.PodStatus)
	// TerminatePod marks the pod's status final.
	TerminatePod(pod *v1.Pod)
}

// ProbingRuntime is a runtime whose SyncPod also reads the liveness and startup results: the
// kubelet's kuberuntime manager holds those results managers. A runtime without it never kills a
// container for a failed probe.
type ProbingRuntime interface {
	SyncPodWithProbes(pod *v1.Pod, status *kubecontainer.PodStatus, backOff *kubecontainer.Backoff, probes kubecontainer.ProbeResults) (kubecontainer.Result, error)
}

// Prober is the kubelet's prober manager as the sync functions drive it.
type Prober interface {
	// AddPod makes sure the pod's probes have workers; SyncPod calls it before the runtime sync.
	AddPod(ctx context.Context, pod *v1.Pod)
	// StopLivenessAndStartup stops the main containers' liveness and startup workers before a
	// pod is killed; RemovePod stops the rest once the kill is over.
	StopLivenessAndStartup(pod *v1.Pod)
	RemovePod(pod *v1.Pod)
	// UpdateContainerStatuses sets started and ready in the container statuses of every status
	// the sync functions generate: the kubelet's UpdatePodStatus, on the status's two lists.
	UpdateContainerStatuses(pod *v1.Pod, containers, initContainers []v1.ContainerStatus)
	kubecontainer.ProbeResults
}

// MirrorClient creates and deletes mirror pods: the part of the kubelet's mirror client that
// SyncPod calls.
type MirrorClient interface {
	// CreateMirrorPod creates the mirror pod of the static pod.
	CreateMirrorPod(ctx context.Context, static *v1.Pod) error
	// DeleteMirrorPod deletes the mirror pod with the full name, with grace 0 and, when uid is not
	// nil, a UID precondition. It reports whether the API deleted it.
	DeleteMirrorPod(ctx context.Context, fullName string, uid *types.UID) (bool, error)
}

// NodeGetter reads the node object, which must exist before a mirror pod is created.
type NodeGetter interface {
	GetNode(ctx context.Context, name string) (*v1.Node, error)
}

// EventRecorder records one Kubernetes event about object. client-go's record.EventRecorder
// satisfies it.
type EventRecorder interface {
	Event(object runtime.Object, eventType, reason, message string)
}

// Options configure a Syncer.
type Options struct {
	// NodeName is this node's name. Required.
	NodeName string
	// CheckSkip, when set, makes every sync that takes the periodic skip of the status
	// (unchangedStatus) build the status all the same and hand it to the status manager, and
	// records there whether the manager found it unchanged, as the skip takes it to be. Tests
	// and replays that check the skip set it; nil skips without a check.
	CheckSkip *SkipCheck
	// HostIP is reported as every pod's hostIP. A kubelet without an API client reports none.
	HostIP string
	// Clock is the time of every decision. Required.
	Clock clock.PassiveClock
	// Tracer receives mirror pod decisions and failed kills. Required.
	Tracer trace.Tracer
	// Runtime is the container runtime. Required.
	Runtime Runtime
	// Status is the status manager. Required.
	Status StatusManager
	// CrashLoopBackOff is the kubelet's crash-loop back-off, shared by every pod (kl.backOff).
	// Required.
	CrashLoopBackOff *kubecontainer.Backoff
	// Mirror creates and deletes mirror pods. Nil is a standalone kubelet: no mirror pods.
	Mirror MirrorClient
	// Nodes reads the node before a mirror pod is created. Required with Mirror.
	Nodes NodeGetter
	// Recorder receives the FailedKillPod and DeadlineExceeded events. Nil records none.
	Recorder EventRecorder
	// Metrics receives the pod start latencies. Nil records none.
	Metrics Metrics
	// Probes is the prober manager. Nil runs no probes: every running container is started and
	// ready.
	Probes Prober
	// Objects are the ConfigMap and Secret managers, told what each pod references. Nil is
	// none.
	Objects ObjectRegistrar
	// Resizes is what in-place resize needs: the allocation manager's allocated pod, the status
	// manager's resize conditions and the PLEG's watch conditions. Nil is a kubelet that neither
	// allocates nor resizes: the pod is synced as given.
	Resizes *Resizes
	// Volumes is the volume manager SyncPod and SyncTerminatedPod wait on. Nil waits for
	// nothing.
	Volumes Volumes
}

// Volumes is the volume manager as the sync functions wait on it: SyncPod until the volumes its
// containers use are mounted, SyncTerminatedPod until none is mounted, then until none is
// possibly mounted.
type Volumes interface {
	// WaitForAttachAndMount starts SyncPod's wait; nil when no container uses a volume.
	WaitForAttachAndMount(pod *v1.Pod) VolumeWait
	// WaitForUnmount starts SyncTerminatedPod's wait until no volume of the pod is mounted.
	WaitForUnmount(pod *v1.Pod) VolumeWait
	// WaitForVolumesGone starts SyncTerminatedPod's second poll, until no volume of the pod is
	// mounted or uncertain (podVolumesExist); it has no deadline.
	WaitForVolumesGone(pod *v1.Pod) VolumeWait
}

// VolumeWait is one wait in progress, as the kubelet's poll runs it.
type VolumeWait interface {
	// Poll looks at the clock's now: done, with the wait's error, or when to look again.
	// canceled is set when the pod worker's context was cancelled.
	Poll(canceled bool) (next time.Time, done bool, err error)
}

// ObjectRegistrar is the kubelet's ConfigMap and Secret managers as the sync functions tell them
// what a pod references: SyncPod registers it, SyncTerminatedPod unregisters it.
type ObjectRegistrar interface {
	RegisterPod(pod *v1.Pod)
	UnregisterPod(pod *v1.Pod)
}

// Resizes are the collaborators of SyncPod's in-place resize handling.
type Resizes struct {
	// Allocation gives the pod with its allocated resources (UpdatePodFromAllocation).
	Allocation interface {
		UpdatePodFromAllocation(pod *v1.Pod) (*v1.Pod, bool)
	}
	// Conditions is the status manager's resize condition cache.
	Conditions ResizeConditions
	// Runtime says whether a resize is being actuated.
	Runtime interface {
		IsPodResizeInProgress(pod *v1.Pod, status *kubecontainer.PodStatus) bool
	}
	// PLEG has the pod reinspected after a resize action.
	PLEG interface {
		SetPodWatchCondition(uid types.UID, key string, condition func(*kubecontainer.PodStatus) bool)
	}
}

// ResizeConditions is the part of the status manager SyncPod uses for resizes.
type ResizeConditions interface {
	SetPodResizeInProgressCondition(uid types.UID, reason, message string, generation int64) (int64, bool)
	ClearPodResizeInProgressCondition(uid types.UID) (int64, bool)
	ClearPodResizePendingCondition(uid types.UID)
	PodResizeConditions(uid types.UID) []v1.PodCondition
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
	if o.Runtime == nil {
		missing = append(missing, "Runtime")
	}
	if o.Status == nil {
		missing = append(missing, "Status")
	}
	if o.CrashLoopBackOff == nil {
		missing = append(missing, "CrashLoopBackOff")
	}
	if r := o.Resizes; r != nil && (r.Allocation == nil || r.Conditions == nil || r.Runtime == nil || r.PLEG == nil) {
		missing = append(missing, "Resizes (each of its fields)")
	}
	if o.Mirror != nil && o.Nodes == nil {
		missing = append(missing, "Nodes (with Mirror)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	return nil
}
