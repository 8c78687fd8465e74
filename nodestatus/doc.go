// Package nodestatus keeps the node object alive: registration, the node status heartbeat and the
// node lease.
//
// It mirrors the kubelet's kubelet_node_status.go (registerWithAPIServer, initialNode,
// updateNodeStatus, setNodeReadyCondition) and pkg/kubelet/nodelease (the lease controller):
//
//	Register   create the node, or adopt an existing one; on failure retry after 100ms, doubling to 7s
//	Heartbeat  every 10s: renew the lease (kube-node-lease/<node>, 40s duration)
//	           every 10s: read the node and write its conditions with a fresh heartbeat time
//
// Ready follows the runtime state (package runtimestate): False with the runtime's errors as
// message while the runtime is down or the PLEG is unhealthy. Capacity and allocatable come from
// the configured machine (Machine: its size, maxPods, kubeReserved, systemReserved and the hard
// eviction thresholds, as cm/node_container_manager's GetNodeAllocatableReservation and the
// MachineInfo setter compute them); the pressure conditions are fixed. The sync loop calls Register first and Heartbeat last in each Advance.
//
// The node's own Kubernetes events are recorded about NodeRef, as the kubelet records them: the
// condition setters' (NodeHasSufficientMemory, NodeHasNoDiskPressure, NodeHasSufficientPID on a
// new condition, NodeReady and NodeNotReady on a change of Ready), recordNodeSchedulableEvent's
// (NodeSchedulable, NodeNotSchedulable), and, at the first registration attempt, the container
// manager's NodeAllocatableEnforced. BirthCry records the process's Starting event.
//
// Status is a core: no goroutine, no lock; the sync loop drives it from its one goroutine. A
// standalone kubelet (no API client) has none.
package nodestatus
