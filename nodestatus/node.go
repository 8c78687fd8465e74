package nodestatus

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/events"
)

// Node facts the simulated kubelet reports.
const (
	// KubeletVersion is the version the node reports.
	KubeletVersion = "v1.35.0"
	// LeaseNamespace holds the node leases.
	LeaseNamespace = "kube-node-lease"
	// DefaultKubeletPort is the kubelet server's port (ports.KubeletPort).
	DefaultKubeletPort = 10250
	// leaseDurationSeconds is the kubelet's default nodeLeaseDurationSeconds.
	leaseDurationSeconds = 40
)

// LocalNode is the node as this kubelet would register it, for a kubelet that has no node object
// to read: the fallback of the kubelet's getNodeAnyWay.
func LocalNode(name, ip string, m Machine) *v1.Node {
	return initialNode(name, ip, 0, m, time.Time{}, true)
}

// DefaultMaxPods is the kubelet's default maxPods: the node's pods capacity and allocatable.
const DefaultMaxPods = 110

// readyMessage is the Ready condition's message while the kubelet is ready.
const readyMessage = "kubelet is posting ready status"

// initialNode is the node object the kubelet registers: the kubelet's initialNode plus the first
// status, with Ready as given. The condition setters record their events on it as on any node
// (initialNodeEvents).
func initialNode(name, ip string, port int32, m Machine, now time.Time, ready bool) *v1.Node {
	node, _ := initialNodeEvents(name, ip, port, m, now, ready)
	return node
}

// initialNodeEvents is initialNode with the events its condition setters record: a new node has
// no condition yet, so each pressure condition goes from absent (Unknown) to False and records
// NodeHasSufficientMemory, NodeHasNoDiskPressure and NodeHasSufficientPID; Ready is added
// without an event.
func initialNodeEvents(name, ip string, port int32, m Machine, now time.Time, ready bool) (*v1.Node, []string) {
	if port == 0 {
		port = DefaultKubeletPort
	}
	capacity, allocatable := m.Resources()
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			// The v1.35 kubelet still writes the beta OS and arch labels beside the stable ones.
			Labels: map[string]string{
				v1.LabelHostname:          name,
				v1.LabelOSStable:          "linux",
				v1.LabelArchStable:        "amd64",
				"beta.kubernetes.io/os":   "linux",
				"beta.kubernetes.io/arch": "amd64",
			},
		},
		Status: v1.NodeStatus{
			Capacity:    capacity,
			Allocatable: allocatable,
			NodeInfo: v1.NodeSystemInfo{
				KubeletVersion:          KubeletVersion,
				OperatingSystem:         "linux",
				Architecture:            "amd64",
				ContainerRuntimeVersion: "fake://" + KubeletVersion,
			},
			DaemonEndpoints: v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: port}},
		},
	}
	node.Status.Addresses = []v1.NodeAddress{{Type: v1.NodeHostName, Address: name}}
	if ip != "" {
		node.Status.Addresses = append([]v1.NodeAddress{{Type: v1.NodeInternalIP, Address: ip}}, node.Status.Addresses...)
	}
	msg := readyMessage
	if !ready {
		msg = "PLEG is not healthy"
	}
	return node, setConditions(node, now, ready, msg)
}

// setConditions writes the pressure conditions and Ready with heartbeat now. A condition's
// transition time moves only when its status changes. It returns the reasons of the events the
// kubelet's condition setters (nodestatus.MemoryPressureCondition, DiskPressureCondition,
// PIDPressureCondition, ReadyCondition) record, in their order: a pressure condition that was
// absent or not False (NodeHasSufficientMemory...), and a Ready condition whose status changed
// (NodeReady, NodeNotReady; none when Ready was absent).
func setConditions(node *v1.Node, now time.Time, ready bool, readyMsg string) []string {
	var recorded []string
	old := func(t v1.NodeConditionType) *v1.NodeCondition {
		for i := range node.Status.Conditions {
			if node.Status.Conditions[i].Type == t {
				return &node.Status.Conditions[i]
			}
		}
		return nil
	}
	for _, c := range []struct {
		t      v1.NodeConditionType
		reason string
	}{{v1.NodeMemoryPressure, events.NodeHasSufficientMemory}, {v1.NodeDiskPressure, events.NodeHasNoDiskPressure}, {v1.NodePIDPressure, events.NodeHasSufficientPID}} {
		if o := old(c.t); o == nil || o.Status != v1.ConditionFalse {
			recorded = append(recorded, c.reason)
		}
	}
	readyStatus, readyReason, readyEvent := v1.ConditionTrue, "KubeletReady", events.NodeReady
	if !ready {
		readyStatus, readyReason, readyEvent = v1.ConditionFalse, "KubeletNotReady", events.NodeNotReady
	}
	if o := old(v1.NodeReady); o != nil && o.Status != readyStatus {
		recorded = append(recorded, readyEvent)
	}
	ts := metav1.NewTime(now)
	want := []v1.NodeCondition{
		{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available"},
		{Type: v1.NodeDiskPressure, Status: v1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure"},
		{Type: v1.NodePIDPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available"},
		{Type: v1.NodeReady, Status: readyStatus, Reason: readyReason, Message: readyMsg},
	}
	for i := range want {
		want[i].LastHeartbeatTime = ts
		want[i].LastTransitionTime = ts
		for _, old := range node.Status.Conditions {
			if old.Type == want[i].Type && old.Status == want[i].Status {
				want[i].LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	node.Status.Conditions = want
	return recorded
}

// newLease is the node lease as renewed at now, owned by the node once its UID is known.
func newLease(nodeName string, nodeUID types.UID, now time.Time) *coordinationv1.Lease {
	renew := metav1.NewMicroTime(now)
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName, Namespace: LeaseNamespace},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(nodeName),
			LeaseDurationSeconds: ptr.To[int32](leaseDurationSeconds),
			RenewTime:            &renew,
		},
	}
	if nodeUID != "" {
		lease.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: nodeName, UID: nodeUID}}
	}
	return lease
}
