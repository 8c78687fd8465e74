// Package podworkers drives each pod, by UID, through its lifecycle: the kubelet's pod workers
// (pkg/kubelet/pod_workers.go) as a passive core.
//
// The kubelet runs one goroutine per UID that blocks in the sync functions and in the pod cache.
// Here a worker is a record with one state field, changed only by one transition function, and
// the caller drives every worker with three calls: UpdatePod records an update (coalescing,
// termination, grace periods), Step does what is due at the clock's current time, and
// SyncKnownPods reconciles the workers with the desired pods during housekeeping. The queries
// (IsPodTerminationRequested, ShouldPodContentBeRemoved, ...) answer the rest of the kubelet.
//
// # Lifecycle
//
//	                 first update
//	      ┌──────────────┴──────────────────────────────┐ terminal phase and the cache
//	      ▼                                             │ shows nothing running
//	  ┌────────┐  kill, deletionTimestamp,              │ (kubelet restart)
//	  │  sync  │  terminal phase, runtime-only kill,    │
//	  │SyncPod │  SyncPod says terminal, orphaned       │
//	  └───┬────┘                                        │
//	      ▼                                             │
//	┌─────────────┐ SyncTerminatingPod ok ┌──────────┐◀─┘
//	│ terminating │──────────────────────▶│terminated│
//	│SyncTerminat-│                       │SyncTermi-│
//	│ ing[Runtime]│                       │natedPod  │
//	│     Pod     │                       └────┬─────┘ SyncTerminatedPod ok,
//	└──────┬──────┘                            │       or a static pod that never started
//	       │ runtime-only pod stopped,         ▼
//	       │ or killed before it     ┌──────────────────┐
//	       └────────────────────────▶│     finished     │ takes no more updates
//	         could start             └────────┬─────────┘
//	                                          ▼ SyncKnownPods: orphaned or restart requested
//	                                      forgotten (a runtime-only pod at once)
//
// An orphan that never started is forgotten from any state. Each sync function is retried, with
// back-off, until it succeeds; only success moves the worker on. Every transition is a trace
// event {Event: trace.KindState, From, To}; a worker's creation has From "" and its removal To "".
//
// # Time: busy until Done
//
// A sync function returns at once with Result.Done, the virtual instant its blocking work ends.
// The worker stays busy until then: updates arriving meanwhile replace its pending update, as they
// would while a kubelet worker blocks. Step completes the sync when the clock reaches Done, and
// NextWake reports the earliest Done.
//
// As in the kubelet, a worker first takes its pending update (startPodSync: the static pod
// exclusion and the "killed before it started" check happen here), then waits until the pod cache
// is newer than the end of its previous sync, then syncs. The wait is Cache.GetNewerThan answering
// ok=false; the caller calls Step again after each PLEG relist. So a worker cannot sync twice
// faster than one relist.
//
// # Cancellation
//
// The kubelet cancels a worker's context when a pod becomes terminating or its grace period gets
// shorter. In v1.35.0 one thing watches that context: SyncPod's wait for the pod's volumes
// (WaitForAttachAndMount), which a sync returns as Result.Wait, and which ends at once with
// context.Canceled. Nothing else does (TODO #113606): SyncPod runs the runtime on
// context.WithoutCancel and the other sync functions start from context.Background(). So a sync in
// flight ends when its work ends, a kill keeps the grace period it started with, and the newer
// update runs next, after the next relist; the cancel is only traced.
//
// # Waiting syncs
//
// A sync that blocks on a condition it polls returns Result.Wait with Done set to when it next
// looks. The worker stays busy, and at Done calls Wait, which carries the sync on: it may end
// (its own Result), or wait again.
//
// A sync that waits for a call made beside the pod workers' goroutine (`run` makes SyncPod's
// mirror pod calls to the API server on goroutines of their own, as each kubelet worker blocks in
// its own) returns Result.Wait with Blocked set: no instant ends it, so the worker stays busy
// with no wake-up until the caller's Resume says the call has returned; Wait is called at the
// next Step and carries the sync on from there. Only this worker waits: the others go on.
//
// # Determinism
//
// Step completes syncs in order of Done and then of arrival, and starts workers in the order
// their pending updates arrived. SyncKnownPods visits UIDs in sorted order. Jitter comes from the
// seeded Rand in Options.
//
// Step and NextWake cost what is due, not the number of workers: the workers keep the busy syncs
// ordered by Done and the wake-ups ordered by arrival (index.go), and a worker waiting for the
// cache asks it once per Step, since the cache only gets newer at a relist, between Steps.
package podworkers
