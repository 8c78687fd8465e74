// Package nodelifecycle is the node lifecycle controller of kube-controller-manager
// (pkg/controller/nodelifecycle, "node-lifecycle-controller"): it watches each node's heartbeat,
// the Ready condition's lastHeartbeatTime and the node's Lease in kube-node-lease, and when
// neither has moved for the grace period (node-monitor-grace-period, 50s in v1.35; 60s
// node-startup-grace-period for a node that never posted a status) it sets the node's Ready,
// MemoryPressure, DiskPressure and PIDPressure conditions to Unknown (reason NodeStatusUnknown,
// "Kubelet stopped posting node status."), records a NodeNotReady event, and marks the node's pods
// not Ready.
//
// It also keeps the node's condition taints: node.kubernetes.io/not-ready (Ready False) or
// node.kubernetes.io/unreachable (Ready Unknown) with effect NoSchedule whenever the condition
// says so, node.kubernetes.io/unschedulable:NoSchedule for a cordoned node, and the same two keys
// with effect NoExecute, which make the taint eviction controller evict pods; when the node is
// Ready again they are removed.
//
// The health check runs every node-monitor-period (5s) over every node; the NoSchedule taints
// follow a node at the first Sync after it changed, as the real controller's node update queue
// has them follow each update (Options.Changes; without it every node is looked at at every
// Sync, which decides the same). As in the real controller, zones are watched as a whole: when every node of every zone
// is not Ready (for example the only node of a one-node cluster), the controller enters "master
// disruption mode", removes the NoExecute taints and evicts nothing, assuming the control plane
// rather than the nodes is cut off; a zone over 55% unhealthy with more than 2 unhealthy nodes
// stops tainting unless it has more than 50 nodes.
//
// Controller is a core: one goroutine drives it (the controllers runner or the replay engine),
// it reads the time from its clock and does its API calls synchronously in Sync.
package nodelifecycle
