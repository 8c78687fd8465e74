// Package housekeeping is the kubelet's periodic clean-up pass, HandlePodCleanups.
//
// It mirrors kubelet_pods.go's HandlePodCleanups, which the sync loop runs on every 2s housekeeping
// tick once every pod source has been seen. One pass, in the kubelet's order:
//
//  1. SyncKnownPods: forget finished workers of pods no longer desired, and start terminating
//     workers of pods no longer desired;
//  2. list the runtime's running pods;
//  3. stop the probe workers of pods whose worker is neither syncing nor terminating
//     (CleanupPods), then drop statuses of pods the pod manager no longer has (nor a mirror pod
//     of) and the allocations of pods it no longer has (RemoveOrphanedPods);
//  4. delete orphaned mirror pods whose static pod is not terminating (grace 0, no precondition);
//  5. restart desired, active pods the workers do not know (a static pod re-added after its old
//     worker finished);
//  6. kill terminal pods being deleted that nothing runs any more, so their API deletion finishes;
//  7. kill running pods the workers do not know (orphans) with grace 1;
//  8. garbage-collect the crash-loop back-off.
//
// Pod directories are cleaned up after step 3 (cleanupOrphanedPodDirs: the directories of pods
// that are gone, once their volumes are torn down); user namespaces and cgroups are not modelled.
//
// A pass is a function of what it reads, and the components it reads number their changes
// (Versioned; the runtime's StateVersion). A pass that finds every number where a pass that did
// nothing left them would do nothing again: it lists the runtime (whose failure it traces as
// always), cleans up the pods' directories (a volume's teardown moves none of the numbers),
// collects the crash-loop back-off and skips the rest, so that an idle node's housekeeping costs
// two reads of each number. The kubelet runs its whole pass every 2s; the
// trace and the metrics cannot tell the two apart (quiet.go).
//
// Cleaner is a core: no goroutine, no lock; the sync loop calls it from its one goroutine.
package housekeeping
