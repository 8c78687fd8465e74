package nodestatus

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// SimulatedLabel marks a node minikubelet simulates, with the value "true", as KWOK marks the
// nodes it manages with its kwok.x-k8s.io/node annotation. A workload that must run on a real
// node (minikubelet's own shards) keeps off simulated nodes with a node affinity on it, and
// SimulatedTaint keeps ordinary pods off them when a user wants that.
const SimulatedLabel = "minikubelet.io/simulated"

// SimulatedTaint is the taint `minikubelet run --simulated-node-taint` registers its nodes with:
// only pods that tolerate it are scheduled to them.
var SimulatedTaint = v1.Taint{Key: SimulatedLabel, Value: "true", Effect: v1.TaintEffectNoSchedule}

// DefaultMaxPods is the kubelet's default maxPods: the node's pods capacity and allocatable.
const DefaultMaxPods = 110

// readyMessage is the Ready condition's message while the kubelet is ready.
const readyMessage = "kubelet is posting ready status"

// initialNode is the node object the kubelet registers: the kubelet's initialNode plus the first
// status, with Ready as given.
func initialNode(name, ip string, port int32, m Machine, now time.Time, ready bool) *v1.Node {
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
				SimulatedLabel:            "true",
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
	setConditions(node, now, ready, msg)
	return node
}

// setConditions writes the pressure conditions and Ready with heartbeat now. A condition's
// transition time moves only when its status changes.
func setConditions(node *v1.Node, now time.Time, ready bool, readyMsg string) {
	ts := metav1.NewTime(now)
	readyStatus, readyReason := v1.ConditionTrue, "KubeletReady"
	if !ready {
		readyStatus, readyReason = v1.ConditionFalse, "KubeletNotReady"
	}
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
}
