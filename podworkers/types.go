package podworkers

import (
	"context"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// SyncPodType is why a pod is being synced: the kubelet's kubetypes.SyncPodType. The zero value is
// SyncPodSync, so an update whose type was never set reads as a plain sync, as in the kubelet.
type SyncPodType int

// The update types, with the kubelet's values.
const (
	SyncPodSync SyncPodType = iota
	SyncPodUpdate
	SyncPodCreate
	SyncPodKill
)

// String returns the kubelet's name for t, or "SyncPodType(n)" for a value outside the enum.
func (t SyncPodType) String() string {
	switch t {
	case SyncPodSync:
		return "sync"
	case SyncPodUpdate:
		return "update"
	case SyncPodCreate:
		return "create"
	case SyncPodKill:
		return "kill"
	}
	return "SyncPodType(" + strconv.Itoa(int(t)) + ")"
}

// State is where a pod worker is in its lifecycle. The first three values are the kubelet's
// PodWorkerState; Finished makes the kubelet's podSyncStatus.finished flag a state of its own.
type State int

// The states, in the only order a worker can go through them.
const (
	// Sync: SyncPod runs on every update until the pod is asked to stop or turns terminal.
	Sync State = iota
	// Terminating: SyncTerminatingPod (or SyncTerminatingRuntimePod) runs until it succeeds.
	Terminating
	// Terminated: no container runs; SyncTerminatedPod runs until it succeeds.
	Terminated
	// Finished: the worker is done and takes no more updates until SyncKnownPods forgets it.
	Finished
)

// stateNone is the pseudo-state before a worker exists and after it is forgotten. It never appears
// in a State returned to callers; in the trace it renders as "".
const stateNone State = -1

// String returns the state's lowercase name, or "State(n)" for a value outside the enum.
func (s State) String() string {
	switch s {
	case Sync:
		return "sync"
	case Terminating:
		return "terminating"
	case Terminated:
		return "terminated"
	case Finished:
		return "finished"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// traceName is how the trace writes s: the pseudo-state stateNone is the empty string.
func (s State) traceName() string {
	if s == stateNone {
		return ""
	}
	return s.String()
}

// UpdateOptions is one update for a pod worker: the kubelet's UpdatePodOptions. Exactly one of Pod
// and RunningPod identifies the pod; RunningPod alone is only accepted with SyncPodKill, for a pod
// that exists in the runtime but not in config.
type UpdateOptions struct {
	// UpdateType is why the pod is being updated. SyncPod sees the type of the last update that
	// was pending when the worker started.
	UpdateType SyncPodType
	// Pod is the desired pod. The workers keep the pointer and never change the pod; nor may the
	// caller, once it has handed it over.
	Pod *v1.Pod
	// MirrorPod is the static pod's mirror pod, if any; read-only, as Pod.
	MirrorPod *v1.Pod
	// RunningPod is a pod known only to the runtime. It is ignored when Pod is set.
	RunningPod *kubecontainer.Pod
	// KillPodOptions carries the details of a kill. It is honoured only once termination has been
	// requested; on a pod that is still syncing it is dropped (and OnTerminated called), as the
	// kubelet drops it.
	KillPodOptions *KillPodOptions
}

// KillPodOptions are the details of a kill request: the kubelet's KillPodOptions.
type KillPodOptions struct {
	// Evict marks the kill as an eviction, which lets the pod's content be removed at once.
	Evict bool
	// PodTerminationGracePeriodSecondsOverride asks for a shorter grace period. Grace periods only
	// ever get shorter.
	PodTerminationGracePeriodSecondsOverride *int64
	// PodStatusFunc adjusts the status SyncTerminatingPod writes; the last one registered wins.
	PodStatusFunc func(*v1.PodStatus)
	// OnTerminated replaces the kubelet's CompletedCh. It is called once the pod reaches the
	// terminated state, at once if the pod is terminated already, and at once if the kill is
	// dropped because the pod is not terminating. As in the kubelet it is never called when the
	// worker has finished (every update is ignored then) or when a pod killed before it could
	// start finishes without a sync; a caller that waits on it needs a timeout, like the kubelet's
	// killPodNow. It runs at the end of the UpdatePod call or the Step iteration that decided it,
	// so it may call back into the Workers.
	OnTerminated func()
}

// Result is what a sync function reports besides its error.
type Result struct {
	// IsTerminal is SyncPod's verdict that the pod reached Succeeded or Failed. The other three
	// sync functions leave it false.
	IsTerminal bool
	// Blocked, with Wait (below), says the sync waits for something the clock does not bring: a
	// call made beside the caller's goroutine (in `run`, SyncPod's mirror pod calls to the API
	// server), which ends when it ends. Done is ignored: the worker stays busy, with no wake-up
	// of its own, until Resume names it, and then calls Wait at the next Step. A cancel calls Wait
	// at once, as for any wait. It sits beside IsTerminal so that a Result, which every work
	// holds, stays 40 bytes.
	Blocked bool
	// Done is the instant the sync's blocking work ends (image pulls, grace periods, volume
	// teardown). The worker stays busy until then, coalescing updates, and completes the sync at
	// Done. The zero value, or any instant not after now, means the sync ended at once.
	Done time.Time
	// Wait, when set, says the sync is not over at Done: the sync function blocks on a condition
	// it polls (the volume manager's WaitForAttachAndMount, WaitForUnmount and
	// WaitForVolumesGone), and Done is when
	// it next looks. At Done the worker calls Wait instead of completing; Wait carries the sync
	// on and returns its next Result, with a Wait of its own while it keeps waiting. canceled is
	// true when the worker's context was cancelled meanwhile (the pod became terminating, or its
	// grace period shorter): the kubelet's poll watches that context, so the wait ends at once.
	Wait func(ctx context.Context, canceled bool) (Result, error)
}

// PodWorkerSync is one worker as SyncKnownPods reports it: the kubelet's PodWorkerSync.
type PodWorkerSync struct {
	// State is the kubelet's view of the worker's state: Sync, Terminating or Terminated. A
	// finished worker reports Terminated, as the kubelet's WorkType does; use Workers.State for
	// the exact state.
	State State
	// Orphan is true when the pod was not in the desired set.
	Orphan bool
	// HasConfig is true when the worker knows a config pod (not only a runtime pod).
	HasConfig bool
	// Static is true when that config pod is a static pod.
	Static bool
}
