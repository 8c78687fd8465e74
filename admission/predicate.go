package admission

import (
	"fmt"
	"iter"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// Reasons the predicate handler gives, as pkg/kubelet/lifecycle names them.
const (
	ReasonInvalidNodeInfo                    = "InvalidNodeInfo"
	ReasonPodOSSelectorNodeLabelDoesNotMatch = "PodOSSelectorNodeLabelDoesNotMatch"
	ReasonPodOSNotSupported                  = "PodOSNotSupported"
	ReasonUnexpectedAdmissionError           = "UnexpectedAdmissionError"
	ReasonUnknownReason                      = "UnknownReason"
	// ReasonOutOfPrefix precedes the resource name of an insufficient resource: OutOfcpu,
	// OutOfmemory, OutOfpods, OutOfexample.com/gpu...
	ReasonOutOfPrefix = "OutOf"
)

// The scheduler plugins whose filters the kubelet runs, with the reasons they fail with.
const (
	PredicateNodeAffinity    = "NodeAffinity"
	PredicateNodeName        = "NodeName"
	PredicateNodePorts       = "NodePorts"
	PredicateTaintToleration = "TaintToleration"

	descNodeAffinity    = "node(s) didn't match Pod's node affinity/selector"
	descNodeName        = "node(s) didn't match the requested node name"
	descNodePorts       = "node(s) didn't have free ports for the requested pod ports"
	descTaintToleration = "node(s) had taints that the pod didn't tolerate"
)

// nodeOS is the operating system the node runs: the simulated node reports linux, and the
// kubelet compares pods with its own runtime.GOOS.
const nodeOS = "linux"

// Failure is one reason the predicate handler found: an insufficient resource (the kubelet's
// InsufficientResourceError, Resource set) or a failed predicate (PredicateFailureError).
type Failure struct {
	Resource                        v1.ResourceName
	Requested, Used, Capacity       int64
	Predicate, PredicateDescription string
}

// Insufficient reports whether the failure is an insufficient resource.
func (f Failure) Insufficient() bool { return f.Resource != "" }

// Reason is the reason rejectPod writes: OutOf<resource> or the predicate's name.
func (f Failure) Reason() string {
	if f.Insufficient() {
		return ReasonOutOfPrefix + string(f.Resource)
	}
	return f.Predicate
}

// Message is the message rejectPod writes (the event's; the status adds "Pod was rejected: ").
func (f Failure) Message() string {
	if f.Insufficient() {
		return fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
			f.Resource, f.Requested, f.Used, f.Capacity)
	}
	return fmt.Sprintf("Predicate %s failed: %s", f.Predicate, f.PredicateDescription)
}

// shortfall is how much of the resource is missing: InsufficientResourceError's
// GetInsufficientAmount.
func (f Failure) shortfall() int64 { return f.Requested - (f.Capacity - f.Used) }

// preCheck runs the predicate handler's checks that preemption cannot help, in its order: the
// kubernetes.io/os label and spec.os against the node's OS. It returns the reason and message of
// the first that fails.
func preCheck(pod *v1.Pod, node *v1.Node) (reason, message string, ok bool) {
	if want, set := pod.Labels[v1.LabelOSStable]; set {
		// The kubelet compares with its own OS when the node's label is missing or wrong.
		if want != nodeOS {
			return ReasonPodOSSelectorNodeLabelDoesNotMatch, "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label", false
		}
	}
	if pod.Spec.OS != nil && string(pod.Spec.OS.Name) != nodeOS {
		return ReasonPodOSNotSupported, "Failed to admit pod as the OS field doesn't match node OS", false
	}
	return "", "", true
}

// GeneralFilter is the predicate handler's generalFilter: every failure of the resource fit, node
// affinity (nodeSelector and required node affinity), node name and host ports, in that order,
// then, for a pod that is not static, an untolerated NoExecute taint. otherPods are the active pods
// other than pod (one per UID, as the pod manager keeps them), counted here from scratch as the
// kubelet does; the Admitter keeps their counts instead. Requests for extended resources the node does not advertise are dropped first.
func GeneralFilter(logger klog.Logger, pod *v1.Pod, node *v1.Node, otherPods iter.Seq[*v1.Pod]) []Failure {
	return generalFilter(logger, pod, node, others{u: usageOf(otherPods)})
}

// generalFilter is GeneralFilter against the other pods' usage.
func generalFilter(logger klog.Logger, pod *v1.Pod, node *v1.Node, others others) []Failure {
	allocatable := amountsOf(node.Status.Allocatable)
	admitted := pod
	pod, dropped := dropMissingExtendedResources(pod, allocatable)
	failures := fitsRequest(fitRequests(admitted, pod, dropped, others), allocatable, others)
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !ok {
		failures = append(failures, Failure{Predicate: PredicateNodeAffinity, PredicateDescription: descNodeAffinity})
	}
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != node.Name {
		failures = append(failures, Failure{Predicate: PredicateNodeName, PredicateDescription: descNodeName})
	}
	if !fitsPorts(pod, others) {
		failures = append(failures, Failure{Predicate: PredicateNodePorts, PredicateDescription: descNodePorts})
	}
	if !kubecontainer.IsStaticPod(pod) {
		_, untolerated := corev1.FindMatchingUntoleratedTaint(logger, node.Spec.Taints, pod.Spec.Tolerations,
			func(t *v1.Taint) bool { return t.Effect == v1.TaintEffectNoExecute }, false)
		if untolerated {
			failures = append(failures, Failure{Predicate: PredicateTaintToleration, PredicateDescription: descTaintToleration})
		}
	}
	return failures
}

// fitRequests is PodRequests of the pod the fit measures (pod, the admitted pod with the extended
// requests the node lacks dropped). The admitted pod is usually active already, the pod manager
// holding it, and so counted among the others with activeRequests, which measures the same when
// no container status reports resources: the share counted for that very object (a pod is
// read-only once handed on, docs/design/008-shared-pods.md) is taken then instead of measuring
// the pod again.
func fitRequests(admitted, pod *v1.Pod, dropped bool, others others) amounts {
	if own := others.own; own != nil && own.pod == admitted && !dropped &&
		!statusReportsResources(admitted.Status.ContainerStatuses) && !statusReportsResources(admitted.Status.InitContainerStatuses) {
		return own.requests
	}
	return amountsOf(PodRequests(pod))
}

func amountsOf(rl v1.ResourceList) amounts {
	var a amounts
	a.add(rl)
	return a
}

// fitsRequest is noderesources' fitsRequest over node.status.allocatable and the requests of the
// other pods: the pod count first, then, if the pod requests anything, cpu, memory,
// ephemeral-storage and each scalar resource. The kubelet walks the scalar resources in map
// order; here they go by name, so that the first failure reported is the same on every run.
func fitsRequest(req amounts, allocatable amounts, others others) []Failure {
	var out []Failure
	count := others.count()
	if count+1 > allocatable.pods {
		out = append(out, Failure{Resource: v1.ResourcePods, Requested: 1, Used: count, Capacity: allocatable.pods})
	}
	if req.milliCPU == 0 && req.memory == 0 && req.ephemeralStorage == 0 && len(req.scalar) == 0 {
		return out
	}
	used := others.requests()
	check := func(name v1.ResourceName, want, inUse, capacity int64) {
		if want > 0 && want > capacity-inUse {
			out = append(out, Failure{Resource: name, Requested: want, Used: inUse, Capacity: capacity})
		}
	}
	check(v1.ResourceCPU, req.milliCPU, used.milliCPU, allocatable.milliCPU)
	check(v1.ResourceMemory, req.memory, used.memory, allocatable.memory)
	check(v1.ResourceEphemeralStorage, req.ephemeralStorage, used.ephemeralStorage, allocatable.ephemeralStorage)
	names := make([]v1.ResourceName, 0, len(req.scalar))
	for name := range req.scalar {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		check(name, req.scalar[name], used.scalar[name], allocatable.scalar[name])
	}
	return out
}

// dropMissingExtendedResources is removeMissingExtendedResources: container requests for extended
// resources the node has no allocatable entry for are dropped, so such a pod is admitted (they may
// be cluster-level resources). Limits are left alone: the fit does not read them. dropped says
// whether any request was dropped.
//
// The kubelet always measures a copy; the copy differs from pod only when a request is dropped
// (each container's requests are otherwise the same amounts in a list of their own), and the fit
// reads it and throws it away. So pod itself is returned, uncopied, when nothing is to be dropped:
// nearly every pod, whose copy and new requests lists were 7 allocations (the copy's 5, a single
// container's new requests list's 2) and about 2 KB of garbage at each admission.
func dropMissingExtendedResources(pod *v1.Pod, allocatable amounts) (_ *v1.Pod, dropped bool) {
	if !requestsMissingExtended(pod.Spec.Containers, allocatable) && !requestsMissingExtended(pod.Spec.InitContainers, allocatable) {
		return pod, false
	}
	pod = pod.DeepCopy()
	filter := func(containers []v1.Container) {
		for i := range containers {
			kept := v1.ResourceList{}
			for name, q := range containers[i].Resources.Requests {
				if dropsRequest(name, allocatable) {
					dropped = true
					continue
				}
				kept[name] = q
			}
			containers[i].Resources.Requests = kept
		}
	}
	filter(pod.Spec.Containers)
	filter(pod.Spec.InitContainers)
	return pod, dropped
}

// requestsMissingExtended reports whether a container requests an extended resource the node
// does not advertise: one that dropMissingExtendedResources drops.
func requestsMissingExtended(containers []v1.Container, allocatable amounts) bool {
	for i := range containers {
		for name := range containers[i].Resources.Requests {
			if dropsRequest(name, allocatable) {
				return true
			}
		}
	}
	return false
}

// dropsRequest is the drop rule of dropMissingExtendedResources: a request for name is dropped
// when name is an extended resource and the node has no allocatable entry for it. Both the
// check that decides whether the pod is copied and the filter of the copy ask it, so that the
// pod is copied exactly when the filter would drop something.
func dropsRequest(name v1.ResourceName, allocatable amounts) bool {
	if !isExtended(name) {
		return false
	}
	_, ok := allocatable.scalar[name]
	return !ok
}

// anyAddress is the host IP of a port bound on every address, the scheduler's default.
const anyAddress = "0.0.0.0"

// hostPort is one (ip, protocol, port) a pod binds on the node, with the scheduler's defaults:
// 0.0.0.0 and TCP.
type hostPort struct {
	ip, protocol string
	port         int32
}

// hostPorts is the scheduler's GetHostPorts: the host ports of the sidecars (init containers that
// run for the pod's whole life) and of the main containers.
func hostPorts(pod *v1.Pod) []hostPort {
	var out []hostPort
	add := func(c *v1.Container) {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			hp := hostPort{ip: p.HostIP, protocol: string(p.Protocol), port: p.HostPort}
			if hp.ip == "" {
				hp.ip = anyAddress
			}
			if hp.protocol == "" {
				hp.protocol = string(v1.ProtocolTCP)
			}
			out = append(out, hp)
		}
	}
	for i := range pod.Spec.InitContainers {
		if kubecontainer.IsRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			add(&pod.Spec.InitContainers[i])
		}
	}
	for i := range pod.Spec.Containers {
		add(&pod.Spec.Containers[i])
	}
	return out
}

// fitsPorts is the nodeports filter: a wanted port conflicts with one in use on the same protocol
// and port when either address is 0.0.0.0 or both are the same.
func fitsPorts(pod *v1.Pod, others others) bool {
	for _, w := range hostPorts(pod) {
		if others.portTaken(w) {
			return false
		}
	}
	return true
}
