package kubelet

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
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

// ActiveCount counts the active pods other than the one given: the predicate handler's other
// pods. It allocates nothing, as it runs for every new pod.
type ActiveCount func(except types.UID) int

// PodStatusSetter is the status manager's SetPodStatus, which rejectPod calls.
type PodStatusSetter interface {
	SetPodStatus(pod *v1.Pod, status v1.PodStatus)
}

// admitter is canAdmitPod with two of the kubelet's admit handlers, in the kubelet's order: the
// device manager's resource allocation, then the predicate handler's pod count (maxPods). And
// rejectPod: a refused pod gets a Warning event and a Failed status, and no pod worker.
type admitter struct {
	devices  Devices // nil: a node without device plugins
	maxPods  int
	count    ActiveCount
	active   ActivePods
	status   PodStatusSetter
	recorder record.EventRecorder // nil records no events
}

var _ syncloop.Admitter = admitter{}

func (a admitter) Admit(ctx context.Context, pod *v1.Pod) bool {
	ok, reason, message := true, "", ""
	if a.devices != nil {
		// The device manager's UpdateAllocatedDevices: devices of pods that are no longer
		// active are free again before the new pod's allocation.
		a.devices.RemovePods(a.active())
		ok, reason, message = a.devices.Admit(ctx, pod)
	}
	if ok {
		ok, reason, message = a.fitsPodCount(pod)
	}
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

// fitsPodCount is the pods part of the predicate admit handler's resource fit: the other active
// pods and this one must not exceed the node's allocatable pods.
func (a admitter) fitsPodCount(pod *v1.Pod) (bool, string, string) {
	used := a.count(pod.UID)
	if used+1 <= a.maxPods {
		return true, "", ""
	}
	return false, "OutOf" + string(v1.ResourcePods), fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
		v1.ResourcePods, 1, used, a.maxPods)
}

// activeCount counts what activePods would list, without building it.
func activeCount(n *Node) ActiveCount {
	return func(except types.UID) int {
		return n.Pods.CountPods(func(p *v1.Pod) bool {
			if p.UID == except {
				return false
			}
			phase, ok := n.Status.GetPodPhase(p.UID)
			return !ok || (phase != v1.PodSucceeded && phase != v1.PodFailed)
		})
	}
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
