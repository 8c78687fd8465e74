// Package syncloop is the kubelet's dispatch loop and its four pod sync functions.
//
// It mirrors the parts of the kubelet's pkg/kubelet/kubelet.go and kubelet_pods.go that sit
// between PodConfig and the pod workers: syncLoopIteration, the pod handlers (HandlePodAdditions,
// HandlePodUpdates, HandlePodRemoves, HandlePodReconcile, HandlePodSyncs), the sync functions the
// pod workers call (SyncPod, SyncTerminatingPod, SyncTerminatingRuntimePod, SyncTerminatedPod),
// housekeeping (HandlePodCleanups), the container deletor that prunes dead containers after a
// ContainerDied event, the mirror pod reconcile inside SyncPod, and the node heartbeat (node
// registration, node status and lease renewal). It is deliberately not a Kubelet-style hub: every
// other concern lives in its own package and reaches the Loop through Options.
//
// # Inputs and time
//
// The kubelet's syncLoopIteration selects over channels. Here every input is a typed value passed
// to one method, Step:
//
//	ConfigUpdate{podconfig.Update}  configCh        → HandlePodAdditions/Updates/Removes/Reconcile
//	PLEGEvent{pleg.Event}           plegCh          → HandlePodSyncs, then the container deletor
//	SyncTick{}                      syncCh (1s)     → workQueue.GetWork → HandlePodSyncs
//	HousekeepingTick{}              housekeepingCh  → HandlePodCleanups once sources are ready
//
// Advance does all work due at the clock's current instant, always in the same order, and NextWake
// says when that is next:
//
//	runtime.Advance → terminating-kill completions → PLEG relist (each event is a PLEGEvent)
//	→ deferred inputs → workers.Step → sync tick → housekeeping tick → status manager → node
//
// Go picks at random among ready channels; the fixed order above is one of the orders the kubelet
// can take, chosen so that replays are byte-identical.
//
// # Building a Loop
//
// The pod workers call the Loop's sync functions and the Loop sends updates to the pod workers;
// the status manager asks the Loop whether a pod may still run containers and the Loop writes
// statuses to it. New breaks both cycles by building these two collaborators itself, from
// Options.Workers (with the Loop as their Syncer) and Options.Status (with the Loop as its
// DeletionSafety); Workers and StatusManager return them for callers that inspect them.
//
// # Kubernetes events
//
// The runtime traces each step (pull, create, start, kill, back-off) at the virtual instant it
// happens. RuntimeEvents, given to the runtime as its Tracer, turns those trace events into the
// kubelet's Kubernetes events (Pulling, Pulled, Created, Started, Killing, BackOff, Failed), so
// each is recorded exactly once and at the right time. The Loop records only its own
// (FailedKillPod) through Options.Recorder.
//
// # Busy until
//
// A runtime call returns at once with the virtual instant its work ends (Result.Done). The sync
// functions pass it on, so the pod worker stays busy until then, like a kubelet worker blocked in
// SyncPod or in killPod. SyncTerminatingPod's last steps (checking that nothing runs any more and
// writing the final status) happen at that instant, from Advance, as they would after the
// kubelet's killPod returns.
//
// Run mode wraps the Loop in a Runner (run.go), the only place with goroutines and timers.
package syncloop
