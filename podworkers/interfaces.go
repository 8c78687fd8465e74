package podworkers

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// Syncer is what a pod worker drives: the four sync entry points of the kubelet (its podSyncer).
// A worker calls exactly one of them per iteration and never two at once for one UID. Each returns
// at once in CPU time and reports in Result.Done when its blocking work ends.
type Syncer interface {
	// SyncPod makes the pod run as configured. Result.IsTerminal reports that the pod reached a
	// terminal phase, which moves the worker to terminating.
	SyncPod(ctx context.Context, updateType SyncPodType, pod, mirrorPod *v1.Pod, status *kubecontainer.PodStatus) (Result, error)
	// SyncTerminatingPod stops every container of the pod. gracePeriod is the worker's effective
	// grace period, or nil when an orphaned pod is replayed (the runtime then picks its default).
	// podStatusFn, if not nil, adjusts the final status (evictions).
	SyncTerminatingPod(ctx context.Context, pod *v1.Pod, status *kubecontainer.PodStatus, gracePeriod *int64, podStatusFn func(*v1.PodStatus)) (Result, error)
	// SyncTerminatingRuntimePod stops a pod that exists only in the runtime.
	SyncTerminatingRuntimePod(ctx context.Context, running *kubecontainer.Pod) (Result, error)
	// SyncTerminatedPod releases what the stopped pod still holds (volumes, cgroups) and marks its
	// status final.
	SyncTerminatedPod(ctx context.Context, pod *v1.Pod, status *kubecontainer.PodStatus) (Result, error)
}

// SyncerFuncs adapts up to four functions to a Syncer. A nil function returns a zero Result and no
// error, so a test sets only the functions it cares about.
type SyncerFuncs struct {
	SyncPodFunc                   func(ctx context.Context, updateType SyncPodType, pod, mirrorPod *v1.Pod, status *kubecontainer.PodStatus) (Result, error)
	SyncTerminatingPodFunc        func(ctx context.Context, pod *v1.Pod, status *kubecontainer.PodStatus, gracePeriod *int64, podStatusFn func(*v1.PodStatus)) (Result, error)
	SyncTerminatingRuntimePodFunc func(ctx context.Context, running *kubecontainer.Pod) (Result, error)
	SyncTerminatedPodFunc         func(ctx context.Context, pod *v1.Pod, status *kubecontainer.PodStatus) (Result, error)
}

var _ Syncer = SyncerFuncs{}

// SyncPod calls f.SyncPodFunc if it is set.
func (f SyncerFuncs) SyncPod(ctx context.Context, updateType SyncPodType, pod, mirrorPod *v1.Pod, status *kubecontainer.PodStatus) (Result, error) {
	if f.SyncPodFunc == nil {
		return Result{}, nil
	}
	return f.SyncPodFunc(ctx, updateType, pod, mirrorPod, status)
}

// SyncTerminatingPod calls f.SyncTerminatingPodFunc if it is set.
func (f SyncerFuncs) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, status *kubecontainer.PodStatus, gracePeriod *int64, podStatusFn func(*v1.PodStatus)) (Result, error) {
	if f.SyncTerminatingPodFunc == nil {
		return Result{}, nil
	}
	return f.SyncTerminatingPodFunc(ctx, pod, status, gracePeriod, podStatusFn)
}

// SyncTerminatingRuntimePod calls f.SyncTerminatingRuntimePodFunc if it is set.
func (f SyncerFuncs) SyncTerminatingRuntimePod(ctx context.Context, running *kubecontainer.Pod) (Result, error) {
	if f.SyncTerminatingRuntimePodFunc == nil {
		return Result{}, nil
	}
	return f.SyncTerminatingRuntimePodFunc(ctx, running)
}

// SyncTerminatedPod calls f.SyncTerminatedPodFunc if it is set.
func (f SyncerFuncs) SyncTerminatedPod(ctx context.Context, pod *v1.Pod, status *kubecontainer.PodStatus) (Result, error) {
	if f.SyncTerminatedPodFunc == nil {
		return Result{}, nil
	}
	return f.SyncTerminatedPodFunc(ctx, pod, status)
}

// Cache is the pod status cache the PLEG fills: the part of the kubelet's kubecontainer.Cache the
// workers read.
type Cache interface {
	// GetNewerThan returns the pod's status if the cache entry for uid, or the cache as a whole
	// (the last completed relist), is newer than minTime. ok is false when it is not yet: the
	// kubelet's call would block until the next PLEG relist. It must not block.
	GetNewerThan(uid types.UID, minTime time.Time) (status *kubecontainer.PodStatus, err error, ok bool)
}

// Queue is the kubelet's timestamped work queue, into which the workers put a UID to be synced
// again after delay.
type Queue interface {
	Enqueue(uid types.UID, delay time.Duration)
}

// Rand is the randomness the workers use for jitter. Both math/rand and math/rand/v2 *Rand satisfy
// it; pass one with a fixed seed for a reproducible run.
type Rand interface {
	Float64() float64
}
