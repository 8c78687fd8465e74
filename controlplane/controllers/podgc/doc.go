// Package podgc is the pod garbage collector of kube-controller-manager (pkg/controller/podgc,
// "pod-garbage-collector-controller"). Every 20 seconds it:
//
//   - deletes the oldest terminated pods (phase Succeeded or Failed) beyond
//     terminated-pod-gc-threshold (12500), evicted ones first;
//   - force-deletes terminating pods on a node that is not Ready and carries the
//     node.kubernetes.io/out-of-service taint;
//   - force-deletes the pods bound to a node that no longer exists, once the node has been
//     missing for the 40 second quarantine, marking them Failed with the DisruptionTarget
//     condition (reason DeletionByPodGC, "PodGC: node no longer exists");
//   - force-deletes terminating pods that were never bound to a node.
//
// A pod that is not yet in a terminal phase is marked Failed before it is deleted with grace
// period 0, since no kubelet will do it.
//
// Controller is a core: one goroutine drives it; NextWake names the next pass.
package podgc
