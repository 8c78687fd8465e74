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

// newAdmitter wires the admit handlers to the node: the node object from the node lister (in a
// replay, the API server; the local one without either), the active pods, the device manager, the pod workers for preemption and
// the status manager for rejectPod.
func newAdmitter(opts Options, n *Sync, recorder record.EventRecorder, devices Devices) (*admission.Admitter, error) {
	aopts := admission.Options{
		Node:       nodeAnyWay(opts, n.besides.nodes),
		ActivePods: activePods{n},
		Kill: func(pod *v1.Pod, statusFn func(*v1.PodStatus)) {
			// killPodNow, which the kubelet blocks on until the pod is dead or a timeout; here
			// the kill is asked for and admission goes on (docs/fidelity.md).
			n.Workers.UpdatePod(podworkers.UpdateOptions{
				UpdateType:     podworkers.SyncPodKill,
				Pod:            pod,
				KillPodOptions: &podworkers.KillPodOptions{Evict: true, PodStatusFunc: statusFn},
			})
		},
		Status:   n.Status,
		Recorder: recorder,
	}
	if devices != nil {
		aopts.Devices = devices
	}
	a, err := admission.New(aopts)
	if err != nil {
		return nil, err
	}
	// Admission keeps counts of the active pods; the three cores whose state decides which pods
	// are active tell it of every change.
	n.Pods.OnChange(a.PodChanged)
	n.Workers.OnChange(a.PodChanged)
	n.Status.OnChange(a.PodChanged)
	n.Allocation.OnChange(a.PodChanged)
	return a, nil
}

// nodeAnyWay is getNodeAnyWay: the node object when there is one, the node the kubelet would
// register otherwise (standalone, or not registered yet).
func nodeAnyWay(opts Options, nodes *nodeReader) admission.NodeFunc {
	local := nodestatus.LocalNode(opts.NodeName, opts.NodeIP, opts.Config.Machine)
	return func(ctx context.Context) (*v1.Node, error) {
		if nodes != nil {
			if node, err := nodes.GetNode(ctx, opts.NodeName); err == nil {
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
	// terminationRequested is the pod workers' IsPodTerminationRequested.
	terminationRequested func(types.UID) bool
}

// Admit admits the allocated pod and records its allocation. A pod that has finished, or whose
// termination was requested, is let through without admission or allocation, as HandlePodAdditions
// does; for the others the decision whether a resize is pending is made here, before the pod's
// worker is told of the pod (and may start terminating it).
func (a allocatingAdmitter) Admit(ctx context.Context, pod *v1.Pod) bool {
	if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed || a.terminationRequested(pod.UID) {
		return true
	}
	allocated, _ := a.alloc.UpdatePodFromAllocation(pod)
	if !a.admitter.Admit(ctx, allocated) {
		return false
	}
	a.alloc.SetAllocatedResources(allocated)
	a.alloc.NoteAdmitted(pod)
	return true
}

// activePods is the kubelet's GetActivePods (filterOutInactivePods over the pod manager): every
// pod except those whose worker has terminated and those in a terminal phase that are not being
// terminated any more. Pods still terminating count. What it reads comes from the pod manager, the
// pod workers and the status manager, which tell the admitter of every change (newAdmitter).
type activePods struct{ n *Sync }

var _ admission.ActivePods = activePods{}

// Get returns the pod with uid if it is active, with its allocated resources (getAllocatedPods:
// the admit handlers count what was allocated, not what a pending resize asks for).
func (a activePods) Get(uid types.UID) (*v1.Pod, bool) {
	p, ok := a.n.Pods.GetPodByUID(uid)
	if !ok || !a.active(p) {
		return nil, false
	}
	p, _ = a.n.Allocation.UpdatePodFromAllocation(p)
	return p, true
}

// All yields the active pods, in no order, with their allocated resources.
func (a activePods) All() iter.Seq[*v1.Pod] {
	return func(yield func(*v1.Pod) bool) {
		for p := range a.n.Pods.AllPods() {
			if !a.active(p) {
				continue
			}
			if p, _ = a.n.Allocation.UpdatePodFromAllocation(p); !yield(p) {
				return
			}
		}
	}
}

// active is filterOutInactivePods' test for one pod: a pod whose worker has terminated is not
// active; a pod is terminal (isAdmittedPodTerminal) when the phase of the pod the kubelet was
// given (the API's, for an API pod) or the status manager's is terminal, and a terminal pod is
// active only while its termination is requested.
func (a activePods) active(p *v1.Pod) bool {
	n := a.n
	if n.Workers.IsPodKnownTerminated(p.UID) {
		return false
	}
	terminal := terminalPhase(p.Status.Phase)
	if !terminal {
		phase, ok := n.Status.GetPodPhase(p.UID)
		terminal = ok && terminalPhase(phase)
	}
	return !terminal || n.Workers.IsPodTerminationRequested(p.UID)
}

func terminalPhase(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }
