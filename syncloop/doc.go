// Package syncloop is the kubelet's dispatch loop: syncLoopIteration and the pod handlers.
//
// It mirrors the parts of the kubelet's kubelet.go that sit between PodConfig and the pod workers:
// syncLoop, syncLoopIteration, the pod handlers (HandlePodAdditions, HandlePodUpdates,
// HandlePodRemoves, HandlePodReconcile, HandlePodSyncs) and the container deletor that prunes dead
// containers after a ContainerDied event. It does not sync pods itself: the sync functions live in
// package podsync, housekeeping in package housekeeping, the node heartbeat in package nodestatus,
// and the runtime state check in package runtimestate. Package kubelet builds them all and hands
// them to the Loop as small interfaces the Loop declares.
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
//	ProbeUpdate{prober.Update}      liveness/readiness/startupManager.Updates()
//	                                                → SetContainerReadiness/Startup, HandlePodSyncs
//
// Advance does all work due at the clock's current instant, always in the same order, and NextWake
// says when that is next:
//
//	node registration → runtime → runtime state check → kill completions → volume manager
//	pass → PLEG relist (each event is a PLEGEvent) → deferred inputs → probe workers (each results change is a
//	ProbeUpdate) → pod workers → sync tick → housekeeping tick → status manager → node heartbeat
//
// Go picks at random among ready channels; the fixed order above is one of the orders the kubelet
// can take, chosen so that replays are byte-identical. Settle calls Advance until nothing more is
// due at the current instant; the Runner and the replay engine both stop at
// MaxAdvancesPerInstant.
//
// # Deferral
//
// While the runtime state has errors (the runtime has not answered for 30s, or the PLEG is
// unhealthy) the kubelet's syncLoop skips its iterations. Step then keeps config updates and PLEG
// events in arrival order, and one pending tick per ticker, and the first Advance after the runtime
// state is healthy again dispatches them.
//
// Run mode wraps the Loop in a Runner (run.go), the only place with goroutines and timers.
package syncloop
