// Package nodestatus keeps the node object alive: registration, the node status heartbeat and the
// node lease.
//
// It mirrors the kubelet's kubelet_node_status.go (registerWithAPIServer, initialNode,
// updateNodeStatus, fastStatusUpdateOnce, setNodeReadyCondition), component-helpers' lease
// controller (with pkg/kubelet/util's setNodeOwnerFunc) and the CSI volume plugin's
// initializeCSINode:
//
//	Register   sleep 100ms (doubling to 7s after each failure), then create the node or adopt an
//	           existing one; the status is written at once after
//	Heartbeat  every 10s plus up to 4%, from the end of the last: read the node (the node lister
//	           first, the API server on a retry) and patch its conditions with a fresh heartbeat
//	           time when they changed or the report period passed; at most 5 tries
//	fast poll  every 100ms from the start until the node is Ready: ask the runtime, and patch the
//	           status as soon as it would turn Ready
//	Lease      from the start, every 10s plus up to 4%: update kube-node-lease/<node> (40s
//	           duration) from the lease last written; read it back only when there is none or the
//	           update failed; create it only once its owner, the node, exists
//	CSINode    from the start: create the node's empty CSINode (migrated-plugins annotation) once
//	           the node can be read; until then the storage error keeps the node NotReady
//
// Ready follows the runtime state (package runtimestate) and the storage error: False with their
// errors as message while the runtime is down, the PLEG is unhealthy or the CSINode is not
// initialized. Capacity and allocatable come from
// the configured machine (Machine: its size, maxPods, kubeReserved, systemReserved and the hard
// eviction thresholds, as cm/node_container_manager's GetNodeAllocatableReservation and the
// MachineInfo setter compute them); the pressure conditions are fixed. Every node carries the
// label minikubelet.io/simulated=true, and registers with the taints it is given.
//
// The node's own Kubernetes events are recorded about NodeRef, as the kubelet records them: the
// condition setters' (NodeHasSufficientMemory, NodeHasNoDiskPressure, NodeHasSufficientPID on a
// new condition, NodeReady and NodeNotReady on a change of Ready), recordNodeSchedulableEvent's
// (NodeSchedulable, NodeNotSchedulable), and, when the loops start, the container manager's
// NodeAllocatableEnforced. BirthCry records the process's Starting event.
//
// Status and Lease are cores: no goroutine; the one atomic is the CSINode's storage error. A
// stepping driver (a replay) drives both from the sync loop's goroutine: the loop calls Register
// first and Heartbeat, which renews the lease, steps the CSINode's initialization and polls, last
// in each Advance. In `run` they run beside the sync loop as the kubelet's node status loop, lease
// controller and initializeCSINode goroutine do: Runner owns the Status, LeaseRunner the Lease
// and CSINodeRunner the CSINode it detached (DetachLease, DetachCSINode), whose storage error the
// Status reads. A standalone kubelet (no API client) has none of them.
package nodestatus
