package trace

import (
	"fmt"
	"slices"
)

// Entry is one row of the catalogue: an event the code can emit, with the reasons and the
// functions it can carry. Funcs are the names components put in Event.Func (Where qualifies
// them); "" among Reasons or Funcs means the field may be empty, "*" among Reasons that any
// reason may appear (an API error's reason, a Kubernetes event's reason, a scenario step's
// action, or one of the reasons a table of docs/trace.md lists).
type Entry struct {
	Component Component
	Kind      Kind
	Reasons   []string
	Funcs     []string
}

// Catalogue is the registry of every event the trace can carry, in the order of docs/trace.md's
// catalogue, one Entry per row. A test checks that the two say the same, and the replay of
// every scenario that each event it emits is registered here.
var Catalogue = []Entry{
	{Sources, KindSet, []string{""}, []string{"listConfig", "consumeWatchEvent", "doWatch", "extractFromURL", "NewSourceApiserver"}},
	{Sources, KindError, []string{"*"}, []string{"listConfig", "extractFromDir", "consumeWatchEvent", "doWatch", "extractFromURL"}},
	{PodConfig, KindUpdate, []string{""}, []string{"podStorage.merge", "podStorage.sync"}},
	{PodConfig, KindError, []string{"FailedValidation"}, []string{"filterInvalidPods"}},
	{PodConfig, KindError, []string{"InvalidOp"}, []string{"podStorage.merge"}},
	{SyncLoop, KindConfig, []string{""}, []string{"HandlePodAdditions", "HandlePodUpdates", "HandlePodRemoves", "HandlePodReconcile"}},
	{SyncLoop, KindError, []string{"InvalidOperation"}, []string{"syncLoopIteration"}},
	{SyncLoop, KindPLEG, []string{""}, []string{"HandlePodSyncs"}},
	{SyncLoop, KindSync, []string{""}, []string{"HandlePodSyncs"}},
	{SyncLoop, KindSkip, []string{"RuntimeErrors"}, []string{"syncLoop"}},
	{SyncLoop, KindResume, []string{""}, []string{"syncLoop"}},
	{SyncLoop, KindError, []string{"RuntimeStatus"}, []string{"updateRuntimeUp"}},
	{SyncLoop, KindSkip, []string{"MirrorPodWithoutStaticPod"}, []string{"HandlePodAdditions", "HandlePodUpdates", "HandlePodRemoves", "HandlePodReconcile", "HandlePodSyncs"}},
	{SyncLoop, KindError, []string{"FailedToDeletePod"}, []string{"deletePod"}},
	{SyncLoop, KindError, []string{"FailedToRemoveContainer"}, []string{"deleteContainersInPod"}},
	{SyncLoop, KindError, []string{"KillPodIncomplete"}, []string{"SyncTerminatingPod"}},
	{SyncLoop, KindProbe, []string{""}, []string{"handleProbeSync"}},
	{Housekeeping, KindSkip, []string{"SourcesNotReady"}, []string{"syncLoopIteration"}},
	{Housekeeping, KindError, []string{"FailedToListPods"}, []string{"HandlePodCleanups"}},
	{Housekeeping, KindDeleteMirror, []string{"OrphanedMirrorPod"}, []string{"HandlePodCleanups"}},
	{Housekeeping, KindError, []string{"FailedToDeleteMirrorPod"}, []string{"HandlePodCleanups"}},
	{Housekeeping, KindRestart, []string{""}, []string{"HandlePodCleanups"}},
	{Housekeeping, KindKill, []string{"TerminalPodDeleted"}, []string{"HandlePodCleanups"}},
	{Housekeeping, KindKill, []string{"OrphanedRuntimePod"}, []string{"HandlePodCleanups"}},
	{PodManager, KindAdd, []string{"*"}, []string{"AddPod"}},
	{PodManager, KindUpdate, []string{"*"}, []string{"UpdatePod"}},
	{PodManager, KindRemove, []string{"*"}, []string{"RemovePod"}},
	{Mirror, KindCreate, []string{"*"}, []string{"CreateMirrorPod"}},
	{Mirror, KindDelete, []string{"*"}, []string{"DeleteMirrorPod"}},
	{Mirror, KindReconcile, []string{"MirrorPodOutdated", "MirrorPodDeleting"}, []string{"tryReconcileMirrorPods"}},
	{Mirror, KindReconcile, []string{"MirrorPodMissing"}, []string{"tryReconcileMirrorPods"}},
	{Mirror, KindSkip, []string{"NodeUnavailable", "NodeDeleted"}, []string{"tryReconcileMirrorPods"}},
	{Mirror, KindError, []string{"FailedToDeleteMirrorPod"}, []string{"tryReconcileMirrorPods"}},
	{PodWorkers, KindState, []string{""}, []string{"UpdatePod", "completeSync", "completeTerminating", "completeTerminatingRuntimePod", "completeTerminated", "cleanupUnstartedPod", "removeTerminatedWorker"}},
	{PodWorkers, KindSync, []string{""}, []string{"SyncPod", "SyncTerminatingPod", "SyncTerminatingRuntimePod", "SyncTerminatedPod"}},
	{PodWorkers, KindCancel, []string{""}, []string{"UpdatePod"}},
	{PodWorkers, KindError, []string{"*"}, []string{"SyncPod", "SyncTerminatingPod", "SyncTerminatingRuntimePod", "SyncTerminatedPod"}},
	{PodWorkers, KindRequeue, []string{""}, []string{"completeWork"}},
	{PodWorkers, KindBlocked, []string{"StaticPodExclusion"}, []string{"allowPodStart"}},
	{PodWorkers, KindRestartRequested, []string{""}, []string{"UpdatePod"}},
	{PodWorkers, KindError, []string{"IllegalTransition"}, []string{"UpdatePod", "completeSync", "completeTerminating", "completeTerminatingRuntimePod", "completeTerminated", "cleanupUnstartedPod", "removeTerminatedWorker"}},
	{Runtime, KindSync, []string{""}, []string{"SyncPod"}},
	{Runtime, KindSandbox, []string{""}, []string{"createPodSandbox"}},
	{Runtime, KindSandbox, []string{""}, []string{"StopPodSandbox"}},
	{Runtime, KindSandbox, []string{"SandboxDied"}, []string{""}},
	{Runtime, KindPull, []string{""}, []string{"EnsureImageExists"}},
	{Runtime, KindPulled, []string{"", "AlreadyPresent"}, []string{"EnsureImageExists"}},
	{Runtime, KindFailed, []string{"ErrImagePull", "ErrImageNeverPull"}, []string{"EnsureImageExists"}},
	{Runtime, KindFailed, []string{"InvalidImageName"}, []string{"EnsureImageExists"}},
	{Runtime, KindFailed, []string{"CreateContainerConfigError"}, []string{"startContainer"}},
	{Runtime, KindFailed, []string{"RunContainerError"}, []string{"startContainer"}},
	{Runtime, KindFailed, []string{"CreateContainerError"}, []string{"startContainer"}},
	{Runtime, KindFailed, []string{"FailedCreatePodSandBox"}, []string{"createPodSandbox"}},
	{Runtime, KindBackOff, []string{"ImagePullBackOff"}, []string{"EnsureImageExists"}},
	{Runtime, KindBackOff, []string{"CrashLoopBackOff"}, []string{"doBackOff"}},
	{Runtime, KindCreated, []string{""}, []string{"startContainer"}},
	{Runtime, KindStarted, []string{""}, []string{"startContainer"}},
	{Runtime, KindKilling, []string{""}, []string{"killContainer"}},
	{Runtime, KindHook, []string{"postStart", "preStop"}, []string{"startContainer", "executePreStopHook"}},
	{Runtime, KindHook, []string{"*"}, []string{"startContainer", "executePreStopHook"}},
	{Runtime, KindExited, []string{"Completed", "Error", "OOMKilled"}, []string{"killContainer", ""}},
	{Runtime, KindRemoved, []string{""}, []string{"RemoveContainer", "GarbageCollect", "purgeInitContainers"}},
	{Runtime, KindError, []string{""}, []string{"SyncPod", "KillPod"}},
	{Runtime, KindDown, []string{""}, []string{""}},
	{PLEG, KindContainerStarted, []string{""}, []string{"relist"}},
	{PLEG, KindContainerDied, []string{""}, []string{"relist"}},
	{PLEG, KindContainerRemoved, []string{""}, []string{"relist"}},
	{PLEG, KindPodSync, []string{""}, []string{"relist"}},
	{PLEG, KindError, []string{""}, []string{"relist"}},
	{PLEG, KindError, []string{""}, []string{"updateCache"}},
	{PLEG, KindHealth, []string{""}, []string{"Healthy"}},
	{Status, KindSet, []string{""}, []string{"SetPodStatus", "TerminatePod", "SetContainerReadiness", "SetContainerStartup"}},
	{Status, KindReject, []string{"IllegalTransition"}, []string{"SetPodStatus", "TerminatePod"}},
	{Status, KindPatch, []string{""}, []string{"syncPod"}},
	{Status, KindDelete, []string{""}, []string{"syncPod"}},
	{Status, KindDrop, []string{"Recreated"}, []string{"syncPod"}},
	{Status, KindError, []string{""}, []string{"syncPod"}},
	{Prober, KindWorker, []string{""}, []string{"AddPod"}},
	{Prober, KindWorker, []string{""}, []string{"StopLivenessAndStartup", "RemovePod", "CleanupPods", "run"}},
	{Prober, KindResult, []string{""}, []string{"Set"}},
	{Prober, KindProbe, []string{""}, []string{"probe"}},
	{Prober, KindError, []string{"BadProbeAnnotation"}, []string{"AddPod"}},
	{PodStartup, KindMeasured, []string{""}, []string{"ObservedPodOnWatch"}},
	{Node, KindRegister, []string{""}, []string{"registerWithAPIServer"}},
	{Node, KindError, []string{"FailedToRegisterNode"}, []string{"registerWithAPIServer"}},
	{Node, KindReady, []string{""}, []string{"setNodeReadyCondition"}},
	{Node, KindError, []string{"FailedToRenewLease", "FailedToUpdateNodeStatus"}, []string{"renewLease", "updateNodeStatus", "fastNodeStatusUpdate"}},
	{APIServer, KindCreate, []string{""}, []string{"POST pods", "PATCH pods"}},
	{APIServer, KindUpdate, []string{""}, []string{"PUT pods", "PATCH pods"}},
	{APIServer, KindStatus, []string{""}, []string{"PUT pods/status", "PATCH pods/status"}},
	{APIServer, KindDeleting, []string{""}, []string{"DELETE pods"}},
	{APIServer, KindDelete, []string{""}, []string{"DELETE pods"}},
	{APIServer, KindBind, []string{""}, []string{"POST pods/binding"}},
	{PluginWatcher, KindAdd, []string{""}, []string{"handlePluginRegistration"}},
	{PluginWatcher, KindRemove, []string{""}, []string{"handleDeleteEvent"}},
	{PluginWatcher, KindError, []string{"Traverse", "Watch", "Create"}, []string{"traversePluginDir", "handleCreateEvent"}},
	{PluginManager, KindUpdated, []string{""}, []string{"reconcile"}},
	{PluginManager, KindUnregister, []string{""}, []string{"UnregisterPlugin"}},
	{PluginManager, KindRegister, []string{""}, []string{"RegisterPlugin"}},
	{PluginManager, KindInfo, []string{""}, []string{"GetInfo"}},
	{PluginManager, KindRegistered, []string{""}, []string{"RegisterPlugin"}},
	{PluginManager, KindUnregistered, []string{""}, []string{"UnregisterPlugin"}},
	{PluginManager, KindError, []string{"Dial", "GetInfo", "NoHandler", "ValidatePlugin", "RegisterPlugin", "NotifyRegistrationStatus", "AddPlugin"}, []string{"RegisterPlugin", "UnregisterPlugin"}},
	{PluginManager, KindError, []string{"Operation"}, []string{"reconcile"}},
	{PluginManager, KindBackOff, []string{""}, []string{"operationComplete"}},
	{DeviceManager, KindRegistered, []string{""}, []string{"PluginConnected"}},
	{DeviceManager, KindDevices, []string{""}, []string{"genericDeviceUpdateCallback"}},
	{DeviceManager, KindStopped, []string{""}, []string{"PluginDisconnected"}},
	{DeviceManager, KindExpired, []string{""}, []string{"GetCapacity"}},
	{DeviceManager, KindAllocate, []string{""}, []string{"Allocate"}},
	{DeviceManager, KindReject, []string{"UnexpectedAdmissionError"}, []string{"Allocate"}},
	{DeviceManager, KindError, []string{"Register", "ListAndWatch", "Checkpoint"}, []string{"Register", "ListAndWatch", "writeCheckpoint"}},
	{CSI, KindRegistered, []string{""}, []string{"RegisterPlugin"}},
	{CSI, KindUnregistered, []string{""}, []string{"DeRegisterPlugin"}},
	{CSI, KindError, []string{"ValidatePlugin", "NodeGetInfo", "InstallCSIDriver", "UninstallCSIDriver"}, []string{"ValidatePlugin", "RegisterPlugin", "DeRegisterPlugin"}},
	{NodeLifecycle, KindNode, []string{"RegisteredNode", "RemovingNode", "NodeNotReady"}, []string{""}},
	{NodeLifecycle, KindReady, []string{"NodeStatusUnknown", "NodeStatusNeverUpdated"}, []string{"tryUpdateNodeHealth"}},
	{NodeLifecycle, KindNotReady, []string{""}, []string{"MarkPodsNotReady"}},
	{NodeLifecycle, KindTaint, []string{"*"}, []string{"SwapNodeControllerTaint"}},
	{NodeLifecycle, KindUntaint, []string{"*"}, []string{"SwapNodeControllerTaint"}},
	{TaintEviction, KindEvictAt, []string{""}, []string{"processPodOnNode"}},
	{TaintEviction, KindEvictCancel, []string{""}, []string{"cancelWorkWithEvent"}},
	{TaintEviction, KindEvict, []string{"DeletionByTaintManager"}, []string{"addConditionAndDeletePod"}},
	{PodGC, KindDelete, []string{"orphaned", "terminated", "out-of-service", "unscheduled"}, []string{"markFailedAndDeletePodWithCondition"}},
	{Scheduler, KindBind, []string{""}, []string{"bind"}},
	{Scheduler, KindUnschedulable, []string{"Unschedulable", "SchedulerError"}, []string{"handleSchedulingFailure"}},
	{Events, KindNormal, []string{"*"}, []string{""}},
	{Events, KindWarning, []string{"*"}, []string{""}},
	{Scenario, KindWriteManifest, []string{""}, []string{""}},
	{Scenario, KindRemoveManifest, []string{""}, []string{""}},
	{Scenario, KindRenameManifest, []string{""}, []string{""}},
	{Scenario, KindServeHTTP, []string{""}, []string{""}},
	{Scenario, KindAPICreatePod, []string{""}, []string{""}},
	{Scenario, KindAPIUpdatePod, []string{""}, []string{""}},
	{Scenario, KindAPIUpdatePod, []string{"Rejected"}, []string{""}},
	{Scenario, KindAPIUpdatePodStatus, []string{""}, []string{""}},
	{Scenario, KindAPIDeletePod, []string{""}, []string{""}},
	{Scenario, KindAPIDeleteMirrorPod, []string{""}, []string{""}},
	{Scenario, KindAPICreateNamespace, []string{""}, []string{""}},
	{Scenario, KindAPIDeleteNamespace, []string{""}, []string{""}},
	{Scenario, KindContainerExit, []string{""}, []string{""}},
	{Scenario, KindCrashLoop, []string{""}, []string{""}},
	{Scenario, KindFailImagePull, []string{""}, []string{""}},
	{Scenario, KindRuntimeDown, []string{""}, []string{""}},
	{Scenario, KindAPIServerDown, []string{""}, []string{""}},
	{Scenario, KindCreatePluginSocket, []string{""}, []string{""}},
	{Scenario, KindRemovePluginSocket, []string{""}, []string{""}},
	{Scenario, KindDeviceHealth, []string{""}, []string{""}},
	{Scenario, KindPluginFails, []string{""}, []string{""}},
	{Scenario, KindOOMKill, []string{""}, []string{""}},
	{Scenario, KindKillSandbox, []string{""}, []string{""}},
	{Scenario, KindFailRuntimeCall, []string{""}, []string{""}},
	{Scenario, KindRestartKubelet, []string{""}, []string{""}},
	{Scenario, KindStopNode, []string{""}, []string{""}},
	{Scenario, KindStartNode, []string{""}, []string{""}},
	{Scenario, KindAPIDeleteNode, []string{""}, []string{""}},
	{Scenario, KindProbe, []string{""}, []string{""}},
	{Scenario, KindContainerStop, []string{""}, []string{""}},
	{Scenario, KindHook, []string{""}, []string{""}},
	{Scenario, KindError, []string{"*"}, []string{""}},
}

// Registered returns an error unless some Entry of the Catalogue allows e: its component and
// kind, its reason and its function.
func Registered(e Event) error {
	kindKnown := false
	for _, en := range Catalogue {
		if en.Component != e.Component || en.Kind != e.Event {
			continue
		}
		kindKnown = true
		if (slices.Contains(en.Reasons, "*") || slices.Contains(en.Reasons, e.Reason)) && slices.Contains(en.Funcs, e.Func) {
			return nil
		}
	}
	if !kindKnown {
		return fmt.Errorf("trace event (%s, %s) is not in the catalogue", e.Component, e.Event)
	}
	return fmt.Errorf("trace event (%s, %s) with reason %q and func %q is not in the catalogue", e.Component, e.Event, e.Reason, e.Func)
}
