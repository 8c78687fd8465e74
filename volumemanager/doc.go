// Package volumemanager mounts the volumes of the pods on the node and makes SyncPod wait for
// them: the kubelet's volume manager (pkg/kubelet/volumemanager: the desired state of world
// populator, the reconciler with the operation executor's exponential back-off,
// WaitForAttachAndMount, WaitForUnmount and SyncTerminatedPod's second poll) with the volume
// plugins' SetUp of the volumes a simulated node can have (pkg/volume/secret, configmap, projected, downwardapi, emptydir,
// hostpath), and the service account token manager the projected volumes ask (pkg/kubelet/token).
//
// # Loops on the virtual clock
//
// The kubelet runs the populator and the reconciler every 100ms on goroutines of their own,
// from its start: the populator first 100ms after it, the reconciler at once. Here both are one
// pass on the same 100ms grid from New's instant, the populator first, and the pass is due only
// when it has something to do:
//
//	the pod set changed (PodsChanged), a pod      → populator: add the volumes of new pods to the
//	asked to be looked at again (ReprocessPod),      desired state, drop those of pods whose runtime
//	or a pod worker changed state                    may be removed; mark the volumes of a pod
//	                                                 looked at again for remount
//	a volume to mount or remount whose back-off   → reconciler: unmount what is no longer desired,
//	has expired, a volume to unmount                 then mount (SetUp) what is desired and not
//	                                                 mounted, or needs a remount
//
// A change is seen at the first pass strictly after it: the kubelet's loops cannot see a pod in
// the instant it is added. A pass that only pod syncs asked for (ReprocessPod, after every
// SyncPod) looks at those pods alone, and the reconciler's unmount step looks at the mounted pods
// only after a pod left the desired state: the kubelet's loops look at every pod, but what they
// find of the others did not change (every other change calls PodsChanged). No volume is
// unmounted before the first pass after the sources were all seen (the reconciler's
// readyToUnmount, which waits for the populator's hasAddedPods): a pod of this process removed in
// its first moments keeps its volumes mounted until then, as a reconstructed volume does. A
// failed SetUp records the FailedMount event ("MountVolume.SetUp failed for volume \"x\" :
// secret \"y\" not found") and backs off: 500ms, doubled at each
// failure up to 2m2s, retried at the first pass after the back-off has expired
// (nestedpendingoperations' exponentialbackoff). A pod whose runtime may be removed leaves the
// desired state volume by volume: a mounted or uncertain volume at once, one that is not mounted
// only when the pod manager no longer has the pod (findAndRemoveDeletedPods), so a pod the
// populator added though it never had a SyncPod (rejected at admission before the pod workers'
// first SyncKnownPods) keeps trying and failing its mounts until it is deleted.
//
// # Reconstruction
//
// What a process mounted is kept in its Dirs, as the pod directories keep it: every volume but
// a hostPath or image one, whose SetUp makes no directory there (writesPodDir). PodDirs keeps
// them in memory (a replay's node, across restartKubelet); DiskDirs in the root directory's
// pods/<uid>/volumes/<plugin dir>/<volume name> (`run`), where a reconstructed pod is known by
// its UID alone and the trace names it as the pod manager, else the runtime's sandbox, does. A
// new Manager over the same directories (a restarted kubelet) reconstructs those volumes before its
// first pass (reconciler reconstructVolumes): each is uncertain (VolumeMountUncertain), possibly
// mounted but not mounted. The reconciler sets it up again while the desired state has it (a
// success makes it mounted, a failure leaves it uncertain), and tears it down once the desired
// state does not, but only from the first pass after the sources were all seen
// (readyToUnmount). A terminating pod a restarted kubelet finds had no SyncPod either, and its
// SetUp may keep failing, but its uncertain volume leaves the desired state once its runtime may
// be removed, and is torn down.
//
// # TearDown and the pods' directories
//
// A TearDown removes the volume's directory (Dirs.Remove). One that fails (GenerateUnmountVolumeFunc)
// leaves the volume in the actual state, uncertain (MarkVolumeMountAsUncertain), with no unmount
// traced and no event, only a log line; the reconciler retries it at the first pass after the
// operation's back-off (500ms doubled up to 2m2s) while no pod uses the volume. In memory a
// TearDown fails only when a script says so (Faults); on disk it fails as the volume's plugin
// does (DiskDirs.Remove). The
// pod's directory outlives its last volume: housekeeping removes it at its first pass after the
// pod is gone and no volume of it is possibly mounted (CleanupOrphanedPodDirs, the kubelet's
// cleanupOrphanedPodDirs).
//
// # Scripted failures
//
// Options.Faults stands for the node's mounter failing under the plugins: a SetUp it names
// fails after the plugin read its objects (and asked its token), where v1.35's wrapped emptyDir
// sets up (after making the volume's directory for a tmpfs, instead of making it for a
// disk-backed one), and only at a first mount; a TearDown fails before it removes
// anything (Faults, which a replay's failVolumeOperation step scripts per pod UID and volume),
// with "scripted SetUp failure" or "scripted TearDown failure" as the plugin's error. The
// failure takes the paths above, as any plugin error does: a SetUp's FailedMount event and
// back-off, the pod waiting in WaitForAttachAndMount; a TearDown's log line,
// back-off and uncertain volume, which keeps the pod's directory and holds up
// SyncTerminatedPod's second poll until a retry succeeds. Once the manager has forgotten a pod
// (no volume of it desired or possibly mounted) and the pod's directory holds no volume's
// directory, it drops what the pod's script never used up (Faults.ForgetPod). A directory that
// a failed SetUp left keeps the script for a restarted kubelet's TearDown of the volume it
// reconstructs from it.
//
// # Waiting
//
// WaitForAttachAndMount is SyncPod's wait: it looks at once, then every 300ms from its start,
// until every volume a container mounts is mounted, the populator reported an error for the pod,
// the worker's context is cancelled, or 2m3s have passed. A look can only change its answer
// after a reconciler pass, so the Wait it returns names the first 300ms tick at or after the
// next pass that could mount something. WaitForUnmount is SyncTerminatedPod's, until no volume
// of the pod is mounted: an uncertain one does not count (PodHasMountedVolumes counts
// VolumeMounted only), nor is it named by its error. WaitForVolumesGone is SyncTerminatedPod's
// second poll (podVolumesExist), until no volume of the pod is mounted or uncertain: it looks at
// once, then every 100ms from its first look, with no deadline, so an uncertain volume holds up
// SyncTerminatedPod there.
//
// A Manager is a core: the sync loop's goroutine steps it (Advance at NextWake, before the pod
// workers) and the sync functions call it. Package kubelet builds one per process after the pod
// workers; SyncPod waits on WaitForAttachAndMount and SyncTerminatedPod on WaitForUnmount, then
// WaitForVolumesGone, through
// the pod workers' Result.Wait, so a pod whose Secret, ConfigMap or projected volume source is
// missing stays ContainerCreating with FailedMount events until the object exists.
//
// In `run` a TokenRunner makes the token manager's requests beside the sync loop, as the
// kubelet's mount operations make them on goroutines of their own: a SetUp whose token must be
// requested queues an ask and its volume waits, and the answer, handed back on the loop's
// goroutine, is cached and carries the waiting mounts on (docs/design/007-beside-the-loop.md).
package volumemanager
