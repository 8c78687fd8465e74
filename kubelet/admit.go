package kubelet

import (
	"context"
	"iter"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/minikubelet/minikubelet/admission"
	"github.com/minikubelet/minikubelet/kubelet/allocation"
	"github.com/minikubelet/minikubelet/nodestatus"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/syncloop"
)

// Devices is the device manager as the sync side sees it: the node's extended resources and the
// resource allocation admit handler.
type Devices interface {
	nodestatus.DeviceCapacity
	admission.Devices
}

var _ syncloop.Admitter = (*admission.Admitter)(nil)

// newAdmitter wires the admit handlers to the node: the node object from the API server (the
// local one without it), the active pods, the device manager, the pod workers for preemption and
// the status manager for rejectPod.
func newAdmitter(opts Options, n *Sync, recorder record.EventRecorder, devices Devices) (*admission.Admitter, error) {
	aopts := admission.Options{
		Node: nodeAnyWay(opts),
		// The admit handlers see the other pods with their allocated resources
		// (getAllocatedPods).
		ActivePods: n.Allocation.AllocatedPods(),
		Kill: func(pod *v1.Pod, statusFn func(*v1.PodStatus)) {
			// killPodNow, which the kubelet blocks on until the pod is dead or a timeout; here
			// the kill is asked for and admission goes on (docs/fidelity.md).
			n.Workers.UpdatePod(podworkers.UpdateOptions{
				UpdateType:     podworkers.SyncPodKill,
				Pod:            pod,
				KillPodOptions: &podworkers.KillPodOptions{Evict: true, PodStatusFunc: statusFn},
			})
		},
		Status:               n.Status,
		Recorder:             recorder,
		TerminationRequested: func(uid types.UID) bool { return n.Workers.IsPodTerminationRequested(uid) },
	}
	if devices != nil {
		aopts.Devices = devices
	}
	return admission.New(aopts)
}

// nodeAnyWay is getNodeAnyWay: the node object when there is one, the node the kubelet would
// register otherwise (standalone, or not registered yet).
func nodeAnyWay(opts Options) admission.NodeFunc {
	local := nodestatus.LocalNode(opts.NodeName, opts.NodeIP, opts.Config.Machine)
	return func(ctx context.Context) (*v1.Node, error) {
		if client := opts.World.API; client != nil {
			if node, err := (nodestatus.ClientsetClient{Client: client}).GetNode(ctx, opts.NodeName); err == nil {
				return node, nil
			}
		}
		return local, nil
	}
}

// allocatingAdmitter is the allocation manager's AddPod around the admit handlers: a pod is
// admitted with the resources allocated to it before (a pod the kubelet knew), and once
// admitted its resources are allocated.
type allocatingAdmitter struct {
	admitter *admission.Admitter
	alloc    *allocation.Manager
}

// Admit admits the allocated pod and records its allocation.
func (a allocatingAdmitter) Admit(ctx context.Context, pod *v1.Pod) bool {
	allocated, _ := a.alloc.UpdatePodFromAllocation(pod)
	if !a.admitter.Admit(ctx, allocated) {
		return false
	}
	a.alloc.SetAllocatedResources(allocated)
	return true
}

// activePods is the kubelet's GetActivePods (filterOutInactivePods over the pod manager), in no
// order: every pod except those whose worker has terminated and those in a terminal phase that
// are not being terminated any more. Pods still terminating count.
func activePods(n *Sync) iter.Seq[*v1.Pod] {
	return func(yield func(*v1.Pod) bool) {
		for p := range n.Pods.AllPods() {
			if n.Workers.IsPodKnownTerminated(p.UID) {
				continue
			}
			phase, ok := n.Status.GetPodPhase(p.UID)
			if !ok {
				phase = p.Status.Phase
			}
			if (phase == v1.PodSucceeded || phase == v1.PodFailed) && !n.Workers.IsPodTerminationRequested(p.UID) {
				continue
			}
			if !yield(p) {
				return
			}
		}
	}
}
