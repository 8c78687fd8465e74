// Package status computes a pod's API status from the runtime's view and writes it to the API
// server: the kubelet's pod status pipeline.
//
// It mirrors two parts of the kubelet:
//
//   - getPhase, generateAPIPodStatus and convertToAPIContainerStatuses in
//     pkg/kubelet/kubelet_pods.go, plus the condition generators of pkg/kubelet/status/generate.go.
//     Here they are the pure functions GetPhase and GeneratePodStatus.
//   - The status manager of pkg/kubelet/status/status_manager.go: a versioned cache of the status
//     of every pod (keyed by the static pod's UID for static pods), written to the API by a sync
//     thread. Here it is the Manager core.
//
// The kubelet's status manager runs a goroutine that wakes on a channel after every SetPodStatus
// and on a 10s ticker. The Manager has no goroutine: SetPodStatus marks a write as pending,
// NextWake reports "now" while one is pending (otherwise the next full batch), and Step does what
// the goroutine would have done at that instant:
//
//	SetPodStatus / TerminatePod ──▶ versioned cache (version n) ──▶ pending
//	                                                                  │
//	Step at the same instant: syncBatch(all=false) ◀──────────────────┘
//	Step every SyncPeriod:    syncBatch(all=true), which also reconciles and retries
//
//	syncPod: GET pod ─▶ recreated? drop ─▶ merge ─▶ PATCH status (if changed) ─▶ canBeDeleted? DELETE
//
// A static pod's status is written to its mirror pod, and is skipped while there is no mirror. A
// pod with a deletionTimestamp whose termination finished (TerminatePod, which follows
// SyncTerminatedPod) and whose API phase is terminal is deleted with grace period 0 and a UID
// precondition: the last step of every graceful deletion of an API pod. With no API client
// (standalone) the cache is kept and nothing is written.
//
// A full batch that picks nothing, every 10s of a node whose statuses are all written, neither
// copies nor sorts them, and when the cached statuses, the versions written and the pod manager
// (VersionedPods) have not changed since such a batch, it does not look at them again
// (quiet.go): the kubelet's syncBatch looks at every status, but finds what it found last time.
package status
