// Package podsync holds the four pod sync functions the pod workers call: SyncPod,
// SyncTerminatingPod, SyncTerminatingRuntimePod and SyncTerminatedPod.
//
// It mirrors those functions of the kubelet's kubelet.go, with what they carry along: the mirror
// pod reconcile inside SyncPod (tryReconcileMirrorPods), the reason cache that remembers why the
// last runtime sync could not start a container (reason_cache.go), the status they write through
// generateAPIPodStatus (with the prober's started and ready), and the FailedKillPod event. A Syncer satisfies podworkers.Syncer.
//
//	SyncPod                    status → terminal? stop : objects RegisterPod → mirror reconcile →
//	                           wait for the volumes → probes AddPod → runtime SyncPod (with the
//	                           liveness and startup results) → reasons
//	SyncTerminatingPod         status → probes StopLivenessAndStartup → runtime KillPod →
//	                           (when the kill ends) probes RemovePod → check → final status
//	SyncTerminatingRuntimePod  runtime KillPod with grace 1, no status
//	SyncTerminatedPod          final status → wait for the unmount → objects UnregisterPod →
//	                           status manager TerminatePod → forget reasons
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
// # Waiting for volumes
//
// The volume waits are polls (the kubelet's wait.PollUntilContextTimeout): a sync function looks
// once, and while the volumes are not (un)mounted it returns a podworkers.Result whose Wait looks
// again at the instant the poll's next tick could see a change; the pod worker stays busy
// meanwhile and calls Wait then. A wait cut short by the worker's context, or timed out, fails the
// sync with no event; any other failure also records FailedMount, as v1.35 does.
//
// # Mirror pod calls beside the workers
//
// In the kubelet each pod worker is a goroutine, so a static pod's mirror pod calls to the API
// server block its worker only. Driven on a virtual clock, the Syncer makes them inline at no
// virtual time. Given a Beside (SetBeside, as `run` does), SyncPod hands the calls to it when
// there are any to make and returns a blocked wait (podworkers.Result.Blocked): the worker stays
// busy until the calls have returned, the others go on, and the sync carries on with the volumes
// and the runtime as it would have inline.
//
// A Syncer is a core: no goroutine, no lock; the pod workers call it from the sync loop's one
// goroutine. Only the mirror pod step (a Beside's calls, FastStaticPodsRegistration) runs
// elsewhere, and it reads nothing but the options, the read-only pods and the clients.
package podsync
