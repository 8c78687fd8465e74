// Package scheduler is a small kube-scheduler (pkg/scheduler, "default-scheduler"): it binds each
// pod that names no node (and asks for the default scheduler, has no scheduling gates and is not
// being deleted) to a node that fits, through the pods/binding subresource, which makes the API
// server set spec.nodeName and the PodScheduled condition, and records the Normal event Scheduled
// "Successfully assigned <namespace>/<name> to <node>".
//
// A node fits when it passes the default profile's filters that matter without volumes or pod
// affinity, in their order, the first failure deciding the node's reason: NodeUnschedulable
// ("node(s) were unschedulable"), NodeName ("node(s) didn't match the requested node name"),
// TaintToleration ("node(s) had untolerated taint(s)"), NodeAffinity (nodeSelector and required
// node affinity, "node(s) didn't match Pod's node affinity/selector") and NodeResourcesFit ("Too
// many pods", "Insufficient cpu", "Insufficient memory", ...). Among the nodes that fit it takes
// the least allocated, by name on a tie.
//
// When none fits, the pod's PodScheduled condition becomes False with reason Unschedulable and
// the Warning event FailedScheduling carries kube-scheduler's message: "0/N nodes are available:
// <count> <reason>, .... preemption: 0/N nodes are available: <count> Preemption is not helpful
// for scheduling." (or "No preemption victims found for incoming pod." for nodes that failed on
// resources only). An unschedulable pod is tried again when the nodes or the pods bound to them
// change, and at least every five minutes (podMaxInUnschedulablePodsDuration).
//
// Scheduler is a core: one goroutine drives it.
package scheduler
