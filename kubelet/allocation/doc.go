// Package allocation is the simulated kubelet's allocation manager: the kubelet's
// pkg/kubelet/allocation (v1.35). It records the resources the kubelet allocated to each admitted
// pod, hands the pod workers the allocated pod (UpdatePodFromAllocation), and decides in-place
// resizes: a pod whose desired cpu or memory differs from its allocation is allocated the new
// values when they fit (PodResizeInProgress, ResizeStarted), or left pending with the
// PodResizePending condition, reason Infeasible (a static pod, or more than the node's
// allocatable) or Deferred (it does not fit beside the other pods now), and retried when a pod
// changes or goes and every 3 minutes. The allocations outlive the process in the checkpoint
// allocated_pods_state (pkg/kubelet/allocation/state, the kubelet's format and checksum): New
// reads it back, so a restarted kubelet admits each pod with its allocation and a resize pending
// at the restart stays pending (HandlePodAdditions queues it again), and Flush writes it. It is a
// pure core: the sync loop calls it and advances its retry timer. It writes the checkpoint itself
// when a resize arrives and when one is allocated (a resize whose allocation cannot be written
// stays queued, as in the kubelet); its owner calls Flush for the admissions in between.
package allocation
