// Package runtimestate is the kubelet's runtime state: whether the container runtime answers and
// whether the PLEG is healthy, the facts that make the sync loop skip its iterations and the node
// report NotReady.
//
// It mirrors pkg/kubelet/runtime.go (runtimeState) and kubelet.go's updateRuntimeUp. Every
// UpPeriod (5s) Advance asks the runtime for its status and records when it last answered; Errors
// joins "the runtime is down" (no answer for MaxWaitForContainerRuntime, 30s, or no check yet) with
// the PLEG's health check:
//
//	t=0     first check; until it succeeds, "container runtime status check may not have completed yet"
//	t=5s    next check, and every 5s after
//	answer  last answer + 30s ≤ now → "container runtime is down"
//	PLEG    relist older than 3m → "PLEG is not healthy: …"
//
// The sync loop (package syncloop) skips dispatch while Errors is not nil and the node status
// (package nodestatus) turns Ready false with Errors as its message.
//
// State is a core: no goroutine, no lock; the sync loop drives it from its one goroutine.
package runtimestate
