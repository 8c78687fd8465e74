package nodestatus

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/events"
	"github.com/minikubelet/minikubelet/kubecontainer"
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
	// Ready: a kubelet without an API client initializes no CSINode, so has no storage error.
	node, _ := initialNodeEvents(name, ip, 0, m, time.Time{}, true, readyMessage)
	return node
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

// initialNodeEvents is the node object the kubelet registers (its initialNode plus the first
// status, with Ready as given) and the events its condition setters record: a new node has
// no condition yet, so each pressure condition goes from absent (Unknown) to False and records
// NodeHasSufficientMemory, NodeHasNoDiskPressure and NodeHasSufficientPID; Ready is added
// without an event.
func initialNodeEvents(name, ip string, port int32, m Machine, now time.Time, ready bool, readyMsg string) (*v1.Node, []string) {
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
				ContainerRuntimeVersion: kubecontainer.RuntimeScheme + KubeletVersion,
			},
			DaemonEndpoints: v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: port}},
		},
	}
	node.Status.Addresses = []v1.NodeAddress{{Type: v1.NodeHostName, Address: name}}
	if ip != "" {
		node.Status.Addresses = append([]v1.NodeAddress{{Type: v1.NodeInternalIP, Address: ip}}, node.Status.Addresses...)
	}
	return node, setConditions(node, now, ready, readyMsg)
}

// pressureConditions are the kubelet's pressure condition setters (MemoryPressureCondition,
// DiskPressureCondition, PIDPressureCondition), in their order, with what each writes when its
// condition turns False and the event it records then. There is no eviction manager, so none
// ever turns True.
var pressureConditions = []struct {
	t               v1.NodeConditionType
	reason, message string
	event           string
}{
	{v1.NodeMemoryPressure, "KubeletHasSufficientMemory", "kubelet has sufficient memory available", events.NodeHasSufficientMemory},
	{v1.NodeDiskPressure, "KubeletHasNoDiskPressure", "kubelet has no disk pressure", events.NodeHasNoDiskPressure},
	{v1.NodePIDPressure, "KubeletHasSufficientPID", "kubelet has sufficient PID available", events.NodeHasSufficientPID},
}

// setConditions runs the kubelet's condition setters on node with heartbeat now, and returns the
// reasons of the events they record, in their order. As the kubelet's, each setter updates its
// condition where it sits in the list and appends it when it is missing; conditions other writers
// own (NetworkUnavailable, a node-problem-detector's) are left as they are. A pressure condition
// gets the heartbeat, and its reason, message and transition time only when its status turns
// False (from absent, Unknown or True), which records NodeHasSufficientMemory... Ready is
// replaced whole (the first one, if there are several), its transition time kept while its
// status is; a change of status records NodeReady or NodeNotReady, an absent Ready none.
func setConditions(node *v1.Node, now time.Time, ready bool, readyMsg string) []string {
	var recorded []string
	ts := metav1.NewTime(now)
	for _, p := range pressureConditions {
		// The setters pick up the last condition of their type.
		var c *v1.NodeCondition
		for i := range node.Status.Conditions {
			if node.Status.Conditions[i].Type == p.t {
				c = &node.Status.Conditions[i]
			}
		}
		added := c == nil
		if added {
			c = &v1.NodeCondition{Type: p.t, Status: v1.ConditionUnknown}
		}
		c.LastHeartbeatTime = ts
		if c.Status != v1.ConditionFalse {
			c.Status, c.Reason, c.Message, c.LastTransitionTime = v1.ConditionFalse, p.reason, p.message, ts
			recorded = append(recorded, p.event)
		}
		if added {
			node.Status.Conditions = append(node.Status.Conditions, *c)
		}
	}
	r := v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady", Message: readyMsg, LastHeartbeatTime: ts, LastTransitionTime: ts}
	event := events.NodeReady
	if !ready {
		r.Status, r.Reason, event = v1.ConditionFalse, "KubeletNotReady", events.NodeNotReady
	}
	for i := range node.Status.Conditions {
		if old := &node.Status.Conditions[i]; old.Type == v1.NodeReady {
			if old.Status == r.Status {
				r.LastTransitionTime = old.LastTransitionTime
			} else {
				recorded = append(recorded, event)
			}
			*old = r
			return recorded
		}
	}
	node.Status.Conditions = append(node.Status.Conditions, r)
	return recorded
}
