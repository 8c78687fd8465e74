package kubelet

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/minikubelet/minikubelet/apidefaults"
	"github.com/minikubelet/minikubelet/nodestatus"
	"github.com/minikubelet/minikubelet/syncloop"
)

// Devices is the device manager as the sync side sees it: the node's extended resources and the
// resource allocation admit handler.
type Devices interface {
	nodestatus.DeviceCapacity
	// Admit allocates the pod's devices, or says why it cannot.
	Admit(ctx context.Context, pod *v1.Pod) (ok bool, reason, message string)
	// RemovePods frees the devices of every pod whose UID is not in active.
	RemovePods(active map[string]bool)
}

// ActivePods lists the pods that may hold devices: the kubelet's GetActivePods.
type ActivePods func() map[string]bool

// PodStatusSetter is the status manager's SetPodStatus, which rejectPod calls.
type PodStatusSetter interface {
	SetPodStatus(pod *v1.Pod, status v1.PodStatus)
}

// admitter is canAdmitPod with the device manager as its one admit handler, and rejectPod: a
// refused pod gets a Warning event and a Failed status, and no pod worker.
type admitter struct {
	devices  Devices
	active   ActivePods
	status   PodStatusSetter
	recorder record.EventRecorder // nil records no events
}

var _ syncloop.Admitter = admitter{}

func (a admitter) Admit(ctx context.Context, pod *v1.Pod) bool {
	// The device manager's UpdateAllocatedDevices: devices of pods that are no longer active
	// are free again before the new pod's allocation.
	a.devices.RemovePods(a.active())
	ok, reason, message := a.devices.Admit(ctx, pod)
	if ok {
		return true
	}
	if a.recorder != nil {
		a.recorder.Eventf(pod, v1.EventTypeWarning, reason, message)
	}
	a.status.SetPodStatus(pod, v1.PodStatus{
		QOSClass: apidefaults.QOSClass(pod),
		Phase:    v1.PodFailed,
		Reason:   reason,
		Message:  "Pod was rejected: " + message,
	})
	return false
}

// activePods is the kubelet's filterOutInactivePods over the pod manager: the pods whose phase is
// not terminal.
func activePods(n *Node) ActivePods {
	return func() map[string]bool {
		out := map[string]bool{}
		for _, p := range n.Pods.GetPods() {
			if phase, ok := n.Status.GetPodPhase(p.UID); ok && (phase == v1.PodSucceeded || phase == v1.PodFailed) {
				continue
			}
			out[string(p.UID)] = true
		}
		return out
	}
}
