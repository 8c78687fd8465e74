// Package podsync holds the four pod sync functions the pod workers call: SyncPod,
// SyncTerminatingPod, SyncTerminatingRuntimePod and SyncTerminatedPod.
//
// It mirrors those functions of the kubelet's kubelet.go, with what they carry along: the mirror
// pod reconcile inside SyncPod (tryReconcileMirrorPods), the reason cache that remembers why the
// last runtime sync could not start a container (reason_cache.go), the status they write through
// generateAPIPodStatus (with the prober's started and ready), and the FailedKillPod event. A Syncer satisfies podworkers.Syncer.
//
//	SyncPod                    status → terminal? stop : mirror reconcile → probes AddPod →
//	                           runtime SyncPod (with the liveness and startup results) → reasons
//	SyncTerminatingPod         status → probes StopLivenessAndStartup → runtime KillPod →
//	                           (when the kill ends) probes RemovePod → check → final status
//	SyncTerminatingRuntimePod  runtime KillPod with grace 1, no status
//	SyncTerminatedPod          final status → status manager TerminatePod → forget reasons
//
// # Busy until
//
// A runtime call returns at once with the virtual instant its work ends (kubecontainer.Result.Done).
// The sync functions pass it on, so the pod worker stays busy until then, like a kubelet worker
// blocked in SyncPod or in killPod. SyncTerminatingPod's last steps (checking that nothing runs any
// more and writing the final status) happen at that instant: the Syncer keeps the kill pending and
// its Advance, which the sync loop calls when NextWake is due, finishes it, as the kubelet's
// SyncTerminatingPod goes on after killPod returns.
//
// A Syncer is a core: no goroutine, no lock; the pod workers call it from the sync loop's one
// goroutine.
package podsync
