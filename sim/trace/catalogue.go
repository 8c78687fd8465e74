package trace

import (
	"fmt"
	"slices"
)

// Entry is one row of the catalogue: an event the code can emit, with the reasons and the
// functions it can carry, how loud it is and how a narration tells it. Funcs are the names
// components put in Event.Func (Where qualifies them); "" among Reasons or Funcs means the field
// may be empty, "*" among Reasons that any reason may appear (an API error's reason, a Kubernetes
// event's reason, a scenario step's action, or one of the reasons a table of docs/trace.md lists).
// The rows of one (component, kind) share its Level and Noise.
type Entry struct {
	Component Component
	Kind      Kind
	Reasons   []string
	Funcs     []string
	// Level is the least --trace-level that shows the event (docs/trace.md's level column).
	Level Level
	// Noise says whether and when --trace-quiet hides it.
	Noise Noise
	// Say narrates it for `minikubelet explain`; nil leaves it out of a narration. A scenario
	// step's Say is the first sentence of the step's paragraph.
	Say Say
}

// Noise says when --trace-quiet hides an event: what repeats without news.
type Noise int

// The kinds of noise.
const (
	// NotNoise is always shown.
	NotNoise Noise = iota
	// NoiseAlways is never news: the pod workers' requeues, the API server's status events.
	NoiseAlways
	// NoiseRepeat is a SET that carries the same pods as its source's last one: the file
	// source's periodic relist, the API source's echo of every write.
	NoiseRepeat
	// NoiseEcho is an update with op RECONCILE: the echo of the kubelet's own status write.
	NoiseEcho
	// NoiseEchoStart is NoiseEcho, where the pod manager's next update of the pods it carries
	// is the echo too; an update with another op ends the echo.
	NoiseEchoStart
	// NoiseEchoed is the pod manager's update of a pod in an echo (NoiseEchoStart).
	NoiseEchoed
)

// Short names of the levels, to keep the rows of the catalogue on one line.
const (
	problems  = LevelProblems
	lifecycle = LevelLifecycle
	pipeline  = LevelPipeline
)

var Catalogue = []Entry{
	{Kubelet, KindNew, []string{""}, []string{"NewMainKubelet"}, lifecycle, NotNoise, sayNew},
	{Kubelet, KindSources, []string{""}, []string{"makePodSourceConfig"}, pipeline, NoiseAlways, saySources},
	{Kubelet, KindRun, []string{""}, []string{"Run"}, pipeline, NoiseAlways, says("startKubelet runs Kubelet.Run")},
	{Kubelet, KindModules, []string{""}, []string{"initializeModules"}, pipeline, NoiseAlways, says("initializeModules makes the kubelet's directories and starts the image manager, the OOM watcher and the resource analyzer")},
	{Kubelet, KindRuntimeUp, []string{""}, []string{"updateRuntimeUp"}, lifecycle, NotNoise, says("updateRuntimeUp asks the runtime for its status: it is ready, and the sync loop's runtime check will pass; it asks again every {delay}")},
	{Kubelet, KindFastStatus, []string{""}, []string{"fastStatusUpdateOnce"}, pipeline, NoiseAlways, says("fastStatusUpdateOnce starts: every {delay}, from now on, it checks whether the new node would be Ready (asking the runtime first), to report it at once")},
	{Kubelet, KindStatusManager, []string{""}, []string{"statusManager.Start"}, pipeline, NoiseAlways, says("the status manager starts: it writes a pod's status to the API server as soon as it changes, and every pod's every {delay}")},
	{Kubelet, KindPLEG, []string{""}, []string{"GenericPLEG.Start"}, pipeline, NoiseAlways, says("the Pod Lifecycle Event Generator (PLEG) starts: it relists the runtime's pods every {delay}, the first time at once")},
	{Kubelet, KindSyncLoopStart, []string{""}, []string{"syncLoop"}, pipeline, NoiseAlways, says("syncLoop is entered: the sync loop dispatches config updates, PLEG events and its ticks, once the runtime state has no errors")},
	{Kubelet, KindRuntimeModules, []string{""}, []string{"initializeRuntimeDependentModules"}, lifecycle, NotNoise, sayRuntimeModules},
	{Kubelet, KindNodeStatus, []string{""}, []string{"syncNodeStatus"}, pipeline, NoiseAlways, says("the node status loop starts: its first syncNodeStatus sleeps 100ms, registers the node (registerWithAPIServer) and writes its status, then it reports the node's status every {delay} plus up to 4%, counted from the end of the last report")},
	{Sources, KindSet, []string{""}, []string{"listConfig", "consumeWatchEvent", "doWatch", "extractFromURL", "NewSourceApiserver"}, pipeline, NoiseRepeat, saySourceSet},
	{Sources, KindError, []string{"*"}, []string{"listConfig", "extractFromDir", "consumeWatchEvent", "doWatch", "extractFromURL"}, problems, NotNoise, nil},
	{PodConfig, KindUpdate, []string{""}, []string{"podStorage.merge", "podStorage.sync"}, lifecycle, NoiseEcho, unlessReconcile(says("PodConfig merges it into {an op} of {pods} from {source}{(func)}"))},
	{PodConfig, KindError, []string{"FailedValidation"}, []string{"filterInvalidPods"}, problems, NotNoise, nil},
	{PodConfig, KindError, []string{"InvalidOp"}, []string{"podStorage.merge"}, problems, NotNoise, nil},
	{SyncLoop, KindConfig, []string{""}, []string{"HandlePodAdditions", "HandlePodUpdates", "HandlePodRemoves", "HandlePodReconcile"}, pipeline, NoiseEchoStart, unlessReconcile(says("the sync loop hands the {op} to its handler{(func)}"))},
	{SyncLoop, KindError, []string{"InvalidOperation"}, []string{"syncLoopIteration"}, problems, NotNoise, nil},
	{SyncLoop, KindPLEG, []string{""}, []string{"HandlePodSyncs"}, pipeline, NotNoise, nil},
	{SyncLoop, KindSync, []string{""}, []string{"HandlePodSyncs"}, pipeline, NotNoise, says("the sync loop's tick finds {pods} due and wakes its worker{(func)}")},
	{SyncLoop, KindSkip, []string{"RuntimeErrors"}, []string{"syncLoop"}, problems, NotNoise, says("the sync loop skips pod synchronization while the runtime state has errors: {message}")},
	{SyncLoop, KindResume, []string{""}, []string{"syncLoop"}, problems, NotNoise, says("the runtime state has no errors any more: the sync loop dispatches what it held back")},
	{SyncLoop, KindError, []string{"RuntimeStatus"}, []string{"updateRuntimeUp"}, problems, NotNoise, nil},
	{SyncLoop, KindSkip, []string{"MirrorPodWithoutStaticPod"}, []string{"HandlePodAdditions", "HandlePodUpdates", "HandlePodRemoves", "HandlePodReconcile", "HandlePodSyncs"}, problems, NotNoise, says("the sync loop leaves {pod} alone: {reason}{(func)}")},
	{SyncLoop, KindError, []string{"FailedToDeletePod"}, []string{"deletePod"}, problems, NotNoise, nil},
	{SyncLoop, KindError, []string{"FailedToRemoveContainer"}, []string{"deleteContainersInPod"}, problems, NotNoise, nil},
	{SyncLoop, KindError, []string{"KillPodIncomplete"}, []string{"SyncTerminatingPod"}, problems, NotNoise, nil},
	{SyncLoop, KindProbe, []string{""}, []string{"handleProbeSync"}, lifecycle, NotNoise, nil},
	{Housekeeping, KindSkip, []string{"SourcesNotReady"}, []string{"syncLoopIteration"}, problems, NotNoise, nil},
	{Housekeeping, KindError, []string{"FailedToListPods"}, []string{"HandlePodCleanups"}, problems, NotNoise, sayFails},
	{Housekeeping, KindDeleteMirror, []string{"OrphanedMirrorPod"}, []string{"HandlePodCleanups"}, lifecycle, NotNoise, nil},
	{Housekeeping, KindError, []string{"FailedToDeleteMirrorPod"}, []string{"HandlePodCleanups"}, problems, NotNoise, sayFails},
	{Housekeeping, KindRestart, []string{""}, []string{"HandlePodCleanups"}, lifecycle, NotNoise, nil},
	{Housekeeping, KindKill, []string{"TerminalPodDeleted"}, []string{"HandlePodCleanups"}, lifecycle, NotNoise, nil},
	{Housekeeping, KindKill, []string{"OrphanedRuntimePod"}, []string{"HandlePodCleanups"}, lifecycle, NotNoise, nil},
	{PodManager, KindAdd, []string{"*"}, []string{"AddPod"}, lifecycle, NotNoise, says("the pod manager adds {pod}{(func)}")},
	{PodManager, KindUpdate, []string{"*"}, []string{"UpdatePod"}, pipeline, NoiseEchoed, nil},
	{PodManager, KindRemove, []string{"*"}, []string{"RemovePod"}, lifecycle, NotNoise, says("the pod manager removes {pod}{(func)}")},
	{Mirror, KindCreate, []string{"*"}, []string{"CreateMirrorPod"}, lifecycle, NotNoise, says("the kubelet creates the mirror pod of {pod}{(func)}")},
	{Mirror, KindDelete, []string{"*"}, []string{"DeleteMirrorPod"}, lifecycle, NotNoise, says("the kubelet deletes the mirror pod of {pod}{(func)}")},
	{Mirror, KindReconcile, []string{"MirrorPodOutdated", "MirrorPodDeleting"}, []string{"tryReconcileMirrorPods"}, lifecycle, NotNoise, nil},
	{Mirror, KindReconcile, []string{"MirrorPodMissing"}, []string{"tryReconcileMirrorPods"}, lifecycle, NotNoise, nil},
	{Mirror, KindSkip, []string{"NodeUnavailable", "NodeDeleted"}, []string{"tryReconcileMirrorPods"}, problems, NotNoise, nil},
	{Mirror, KindError, []string{"FailedToDeleteMirrorPod"}, []string{"tryReconcileMirrorPods"}, problems, NotNoise, nil},
	{PodWorkers, KindState, []string{""}, []string{"UpdatePod", "completeSync", "completeTerminating", "completeTerminatingRuntimePod", "completeTerminated", "cleanupUnstartedPod", "removeTerminatedWorker"}, lifecycle, NotNoise, sayWorkerState},
	{PodWorkers, KindSync, []string{""}, []string{"SyncPod", "SyncTerminatingPod", "SyncTerminatingRuntimePod", "SyncTerminatedPod"}, pipeline, NotNoise, says("the worker runs {func} for {pod} ({op})")},
	{PodWorkers, KindCancel, []string{""}, []string{"UpdatePod"}, pipeline, NotNoise, sayWorkerNote},
	{PodWorkers, KindError, []string{"*"}, []string{"SyncPod", "SyncTerminatingPod", "SyncTerminatingRuntimePod", "SyncTerminatedPod"}, problems, NotNoise, saySyncError},
	{PodWorkers, KindRequeue, []string{""}, []string{"completeWork"}, pipeline, NoiseAlways, sayRequeue},
	{PodWorkers, KindBlocked, []string{"StaticPodExclusion"}, []string{"allowPodStart"}, problems, NotNoise, sayWorkerNote},
	{PodWorkers, KindRestartRequested, []string{""}, []string{"UpdatePod"}, lifecycle, NotNoise, sayWorkerNote},
	{PodWorkers, KindError, []string{"IllegalTransition"}, []string{"UpdatePod", "completeSync", "completeTerminating", "completeTerminatingRuntimePod", "completeTerminated", "cleanupUnstartedPod", "removeTerminatedWorker"}, problems, NotNoise, saySyncError},
	{Runtime, KindSync, []string{""}, []string{"SyncPod"}, pipeline, NotNoise, saySyncPodActions},
	{Runtime, KindSandbox, []string{""}, []string{"createPodSandbox"}, lifecycle, NotNoise, saySandbox},
	{Runtime, KindSandbox, []string{""}, []string{"StopPodSandbox"}, lifecycle, NotNoise, saySandbox},
	{Runtime, KindSandbox, []string{"SandboxDied"}, []string{""}, lifecycle, NotNoise, saySandbox},
	{Runtime, KindPull, []string{""}, []string{"EnsureImageExists"}, lifecycle, NotNoise, says("the runtime pulls {message} for {container}")},
	{Runtime, KindPulled, []string{"", "AlreadyPresent"}, []string{"EnsureImageExists"}, lifecycle, NotNoise, sayPulled},
	{Runtime, KindFailed, []string{"ErrImagePull", "ErrImageNeverPull"}, []string{"EnsureImageExists"}, problems, NotNoise, sayRuntimeFails},
	{Runtime, KindFailed, []string{"InvalidImageName"}, []string{"EnsureImageExists"}, problems, NotNoise, sayRuntimeFails},
	{Runtime, KindFailed, []string{"CreateContainerConfigError"}, []string{"startContainer"}, problems, NotNoise, sayRuntimeFails},
	{Runtime, KindFailed, []string{"RunContainerError"}, []string{"startContainer"}, problems, NotNoise, sayRuntimeFails},
	{Runtime, KindFailed, []string{"CreateContainerError"}, []string{"startContainer"}, problems, NotNoise, sayRuntimeFails},
	{Runtime, KindFailed, []string{"FailedCreatePodSandBox"}, []string{"createPodSandbox"}, problems, NotNoise, sayRuntimeFails},
	{Runtime, KindBackOff, []string{"ImagePullBackOff"}, []string{"EnsureImageExists"}, problems, NotNoise, says("the pull of {message} for {container} is held back by the image pull back-off, now {delay}{(func)}")},
	{Runtime, KindBackOff, []string{"CrashLoopBackOff"}, []string{"doBackOff"}, problems, NotNoise, sayCrashLoopBackOff},
	{Runtime, KindCreated, []string{""}, []string{"startContainer"}, lifecycle, NotNoise, nil},
	{Runtime, KindStarted, []string{""}, []string{"startContainer"}, lifecycle, NotNoise, sayStarted},
	{Runtime, KindKilling, []string{""}, []string{"killContainer"}, lifecycle, NotNoise, says("the runtime stops container {container} with a grace period of {delay}{(func)}")},
	{Runtime, KindHook, []string{"postStart", "preStop"}, []string{"startContainer", "executePreStopHook"}, lifecycle, NotNoise, nil},
	{Runtime, KindHook, []string{"*"}, []string{"startContainer", "executePreStopHook"}, lifecycle, NotNoise, nil},
	{Runtime, KindExited, []string{"Completed", "Error", "OOMKilled"}, []string{"killContainer", ""}, lifecycle, NotNoise, sayExited},
	{Runtime, KindRemoved, []string{""}, []string{"RemoveContainer", "GarbageCollect", "purgeInitContainers"}, lifecycle, NotNoise, sayRemoved},
	{Runtime, KindError, []string{""}, []string{"SyncPod", "KillPod"}, problems, NotNoise, nil},
	{Runtime, KindDown, []string{""}, []string{""}, problems, NotNoise, nil},
	{Runtime, KindResize, []string{"cpu", "memory"}, []string{"updateContainerResources"}, lifecycle, NotNoise, says("the runtime updates the {reason} of {container} in place: {message}")},
	{Runtime, KindFailed, []string{"ResizePodInPlaceError"}, []string{"updateContainerResources"}, problems, NotNoise, sayRuntimeFails},
	{PLEG, KindContainerStarted, []string{""}, []string{"relist"}, lifecycle, NotNoise, sayRelist},
	{PLEG, KindContainerDied, []string{""}, []string{"relist"}, lifecycle, NotNoise, sayRelist},
	{PLEG, KindContainerRemoved, []string{""}, []string{"relist"}, lifecycle, NotNoise, sayRelist},
	{PLEG, KindPodSync, []string{""}, []string{"relist"}, pipeline, NotNoise, sayRelist},
	{PLEG, KindConditionMet, []string{""}, []string{"relist"}, lifecycle, NotNoise, says("the PLEG's relist finds the watch condition on {pod} met (a resize was actuated)")},
	{PLEG, KindError, []string{""}, []string{"relist"}, problems, NotNoise, sayRelist},
	{PLEG, KindError, []string{""}, []string{"updateCache"}, problems, NotNoise, sayRelist},
	{PLEG, KindHealth, []string{""}, []string{"Healthy"}, problems, NotNoise, sayPLEGHealth},
	{Status, KindSet, []string{""}, []string{"SetPodStatus", "TerminatePod", "SetContainerReadiness", "SetContainerStartup"}, lifecycle, NotNoise, sayStatusSet},
	{Status, KindReject, []string{"IllegalTransition"}, []string{"SetPodStatus", "TerminatePod"}, problems, NotNoise, nil},
	{Status, KindPatch, []string{""}, []string{"syncPod"}, lifecycle, NotNoise, nil},
	{Status, KindDelete, []string{""}, []string{"syncPod"}, lifecycle, NotNoise, says("the status manager deletes the finished pod {pod} from the API server")},
	{Status, KindDrop, []string{"Recreated"}, []string{"syncPod"}, lifecycle, NotNoise, nil},
	{Status, KindError, []string{""}, []string{"syncPod"}, problems, NotNoise, nil},
	{Prober, KindWorker, []string{""}, []string{"AddPod"}, lifecycle, NotNoise, sayPlain},
	{Prober, KindWorker, []string{""}, []string{"StopLivenessAndStartup", "RemovePod", "CleanupPods", "run"}, lifecycle, NotNoise, sayPlain},
	{Prober, KindResult, []string{""}, []string{"Set"}, lifecycle, NotNoise, sayPlain},
	{Prober, KindProbe, []string{""}, []string{"probe"}, lifecycle, NotNoise, sayPlain},
	{Prober, KindError, []string{"BadProbeAnnotation"}, []string{"AddPod"}, problems, NotNoise, sayFails},
	{PodStartup, KindMeasured, []string{""}, []string{"ObservedPodOnWatch"}, lifecycle, NotNoise, sayMeasured},
	{Node, KindRegister, []string{""}, []string{"registerWithAPIServer"}, problems, NotNoise, says("registerWithAPIServer registers the node {pod}: the Node object exists")},
	{Node, KindError, []string{"FailedToRegisterNode"}, []string{"registerWithAPIServer"}, problems, NotNoise, sayFails},
	{Node, KindReady, []string{""}, []string{"setNodeReadyCondition"}, problems, NotNoise, says("the node's status says {pod} is Ready={to}{(message)}")},
	{Node, KindError, []string{"FailedToRenewLease", "FailedToUpdateNodeStatus"}, []string{"renewLease", "updateNodeStatus", "fastNodeStatusUpdate"}, problems, NotNoise, sayFails},
	{Node, KindError, []string{"FailedToInitializeCSINode"}, []string{"initializeCSINode"}, problems, NotNoise, sayFails},
	{APIServer, KindCreate, []string{""}, []string{"POST pods", "PATCH pods"}, pipeline, NotNoise, says("the API server stores the new pod {pod}")},
	{APIServer, KindUpdate, []string{""}, []string{"PUT pods", "PATCH pods", "PUT pods/resize", "PATCH pods/resize"}, pipeline, NotNoise, nil},
	{APIServer, KindStatus, []string{""}, []string{"PUT pods/status", "PATCH pods/status"}, pipeline, NoiseAlways, nil},
	{APIServer, KindDeleting, []string{""}, []string{"DELETE pods"}, pipeline, NotNoise, sayDeleting},
	{APIServer, KindDelete, []string{""}, []string{"DELETE pods"}, pipeline, NotNoise, says("the API server deletes {pod} with grace period 0: the object is gone")},
	{APIServer, KindBind, []string{""}, []string{"POST pods/binding"}, lifecycle, NotNoise, nil},
	{PluginWatcher, KindAdd, []string{""}, []string{"handlePluginRegistration"}, pipeline, NotNoise, sayPlain},
	{PluginWatcher, KindRemove, []string{""}, []string{"handleDeleteEvent"}, pipeline, NotNoise, sayPlain},
	{PluginWatcher, KindError, []string{"Traverse", "Watch", "Create"}, []string{"traversePluginDir", "handleCreateEvent"}, problems, NotNoise, sayFails},
	{PluginManager, KindUpdated, []string{""}, []string{"reconcile"}, pipeline, NotNoise, sayPlain},
	{PluginManager, KindUnregister, []string{""}, []string{"UnregisterPlugin"}, pipeline, NotNoise, sayPlain},
	{PluginManager, KindRegister, []string{""}, []string{"RegisterPlugin"}, pipeline, NotNoise, sayPlain},
	{PluginManager, KindInfo, []string{""}, []string{"GetInfo"}, pipeline, NotNoise, sayPlain},
	{PluginManager, KindRegistered, []string{""}, []string{"RegisterPlugin"}, lifecycle, NotNoise, sayPlain},
	{PluginManager, KindUnregistered, []string{""}, []string{"UnregisterPlugin"}, lifecycle, NotNoise, sayPlain},
	{PluginManager, KindError, []string{"Dial", "GetInfo", "NoHandler", "ValidatePlugin", "RegisterPlugin", "NotifyRegistrationStatus", "AddPlugin"}, []string{"RegisterPlugin", "UnregisterPlugin"}, problems, NotNoise, sayFails},
	{PluginManager, KindError, []string{"Operation"}, []string{"reconcile"}, problems, NotNoise, sayFails},
	{PluginManager, KindBackOff, []string{""}, []string{"operationComplete"}, problems, NotNoise, sayPlain},
	{DeviceManager, KindRegistered, []string{""}, []string{"PluginConnected"}, lifecycle, NotNoise, sayPlain},
	{DeviceManager, KindDevices, []string{""}, []string{"genericDeviceUpdateCallback"}, pipeline, NotNoise, sayPlain},
	{DeviceManager, KindStopped, []string{""}, []string{"PluginDisconnected"}, problems, NotNoise, sayPlain},
	{DeviceManager, KindExpired, []string{""}, []string{"GetCapacity"}, problems, NotNoise, sayPlain},
	{DeviceManager, KindAllocate, []string{""}, []string{"Allocate"}, lifecycle, NotNoise, sayPlain},
	{DeviceManager, KindReject, []string{"UnexpectedAdmissionError"}, []string{"Allocate"}, problems, NotNoise, sayPlain},
	{DeviceManager, KindRestored, []string{""}, []string{"readCheckpoint"}, lifecycle, NotNoise, sayPlain},
	{DeviceManager, KindError, []string{"Register", "ListAndWatch", "Checkpoint"}, []string{"Register", "ListAndWatch", "writeCheckpoint", "readCheckpoint"}, problems, NotNoise, sayFails},
	{CSI, KindRegistered, []string{""}, []string{"RegisterPlugin"}, lifecycle, NotNoise, sayPlain},
	{CSI, KindUnregistered, []string{""}, []string{"DeRegisterPlugin"}, lifecycle, NotNoise, sayPlain},
	{CSI, KindError, []string{"ValidatePlugin", "NodeGetInfo", "InstallCSIDriver", "UninstallCSIDriver"}, []string{"ValidatePlugin", "RegisterPlugin", "DeRegisterPlugin"}, problems, NotNoise, sayFails},
	{DRA, KindRegistered, []string{""}, []string{"RegisterPlugin"}, lifecycle, NotNoise, sayPlain},
	{DRA, KindUnregistered, []string{""}, []string{"DeRegisterPlugin"}, lifecycle, NotNoise, sayPlain},
	{DRA, KindConnected, []string{""}, []string{"HandleConn"}, pipeline, NotNoise, sayPlain},
	{DRA, KindDisconnected, []string{""}, []string{"HandleConn"}, problems, NotNoise, sayPlain},
	{DRA, KindWipeAt, []string{""}, []string{"sync"}, pipeline, NotNoise, says("the DRA handler will delete the node's ResourceSlices of a driver ({message}) in {delay}, unless one of its plugins connects by then")},
	{DRA, KindWipeCancel, []string{""}, []string{"sync"}, pipeline, NotNoise, says("a plugin of the driver ({message}) is connected: its ResourceSlices stay")},
	{DRA, KindWiped, []string{""}, []string{"wipeResourceSlices"}, lifecycle, NotNoise, says("the DRA handler deletes the node's ResourceSlices of the driver ({message})")},
	{DRA, KindError, []string{"ValidatePlugin"}, []string{"ValidatePlugin"}, problems, NotNoise, sayFails},
	{DRA, KindError, []string{"RegisterPlugin"}, []string{"RegisterPlugin"}, problems, NotNoise, sayFails},
	{DRA, KindError, []string{"WipeResourceSlices"}, []string{"wipeResourceSlices"}, problems, NotNoise, sayFails},
	{VolumeManager, KindMount, []string{""}, []string{"GenerateMountVolumeFunc"}, lifecycle, NotNoise, sayPlain},
	{VolumeManager, KindUnmount, []string{""}, []string{"GenerateUnmountVolumeFunc"}, lifecycle, NotNoise, sayPlain},
	{VolumeManager, KindToken, []string{"", "Refresh"}, []string{"GetServiceAccountToken"}, pipeline, NotNoise, sayPlain},
	{VolumeManager, KindError, []string{"FailedTokenRequest"}, []string{"GetServiceAccountToken"}, problems, NotNoise, sayFails},
	{NodeLifecycle, KindNode, []string{"RegisteredNode", "RemovingNode", "NodeNotReady"}, []string{""}, lifecycle, NotNoise, sayPlain},
	{NodeLifecycle, KindReady, []string{"NodeStatusUnknown", "NodeStatusNeverUpdated"}, []string{"tryUpdateNodeHealth"}, problems, NotNoise, sayPlain},
	{NodeLifecycle, KindNotReady, []string{""}, []string{"MarkPodsNotReady"}, lifecycle, NotNoise, sayPlain},
	{NodeLifecycle, KindTaint, []string{"*"}, []string{"SwapNodeControllerTaint"}, lifecycle, NotNoise, sayPlain},
	{NodeLifecycle, KindUntaint, []string{"*"}, []string{"SwapNodeControllerTaint"}, lifecycle, NotNoise, sayPlain},
	{TaintEviction, KindEvictAt, []string{""}, []string{"processPodOnNode"}, lifecycle, NotNoise, sayPlain},
	{TaintEviction, KindEvictCancel, []string{""}, []string{"cancelWorkWithEvent"}, lifecycle, NotNoise, sayPlain},
	{TaintEviction, KindEvict, []string{"DeletionByTaintManager"}, []string{"addConditionAndDeletePod"}, lifecycle, NotNoise, sayPlain},
	{PodGC, KindDelete, []string{"orphaned", "terminated", "out-of-service", "unscheduled"}, []string{"markFailedAndDeletePodWithCondition"}, lifecycle, NotNoise, sayPlain},
	{Scheduler, KindBind, []string{""}, []string{"bind"}, lifecycle, NotNoise, sayPlain},
	{Scheduler, KindUnschedulable, []string{"Unschedulable", "SchedulerError"}, []string{"handleSchedulingFailure"}, lifecycle, NotNoise, sayPlain},
	{Events, KindNormal, []string{"Starting"}, []string{""}, lifecycle, NotNoise, says("createAndInitKubelet's BirthCry records the Normal event Starting, \"{message}\", on the node")},
	{Events, KindNormal, []string{"*"}, []string{""}, lifecycle, NotNoise, nil},
	{Events, KindWarning, []string{"*"}, []string{""}, problems, NotNoise, says("the kubelet records a Warning event {reason}")},
	{Scenario, KindWriteManifest, []string{""}, []string{""}, problems, NotNoise, says("The manifest {message} is written into the static pod directory.")},
	{Scenario, KindRemoveManifest, []string{""}, []string{""}, problems, NotNoise, says("The manifest {message} is removed from the static pod directory.")},
	{Scenario, KindRenameManifest, []string{""}, []string{""}, problems, NotNoise, says("A manifest is renamed: {message}.")},
	{Scenario, KindServeHTTP, []string{""}, []string{""}, problems, NotNoise, says("The manifest URL now answers {message}.")},
	{Scenario, KindAPICreatePod, []string{""}, []string{""}, problems, NotNoise, says("The pod {pod} is created in the API server.")},
	{Scenario, KindAPIUpdatePod, []string{""}, []string{""}, problems, NotNoise, says("The pod {pod} is updated in the API server.")},
	{Scenario, KindAPIUpdatePod, []string{"Rejected"}, []string{""}, problems, NotNoise, says("The pod {pod} is updated in the API server.")},
	{Scenario, KindAPIUpdatePodStatus, []string{""}, []string{""}, problems, NotNoise, says("The status of {pod} is changed in the API server.")},
	{Scenario, KindAPIDeletePod, []string{""}, []string{""}, problems, NotNoise, says("The pod {pod} is deleted through the API{(message)}.")},
	{Scenario, KindAPIDeleteMirrorPod, []string{""}, []string{""}, problems, NotNoise, says("The mirror pod {pod} is deleted through the API, {message}.")},
	{Scenario, KindAPICreateNamespace, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindAPIDeleteNamespace, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindContainerExit, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindCrashLoop, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindFailImagePull, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindRuntimeDown, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindAPIServerDown, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindCreatePluginSocket, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindRemovePluginSocket, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindDeviceHealth, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindPluginFails, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindOOMKill, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindKillSandbox, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindFailRuntimeCall, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindFailVolumeOperation, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindRestartKubelet, []string{""}, []string{""}, problems, NotNoise, says("The kubelet process restarts; the runtime's containers live on.")},
	{Scenario, KindStopNode, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindStartNode, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindAPIDeleteNode, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindAPICreateObject, []string{""}, []string{""}, problems, NotNoise, says("The {message} is created through the API.")},
	{Scenario, KindAPIPatchNode, []string{""}, []string{""}, problems, NotNoise, says("The node is patched through the API: {message}.")},
	{Scenario, KindAPIPatchPod, []string{""}, []string{""}, problems, NotNoise, says("The pod {pod} is patched through the API: {message}.")},
	{Scenario, KindAPIResizePod, []string{""}, []string{""}, problems, NotNoise, says("The pod {pod} is resized through the API (pods/resize): {message}.")},
	{Scenario, KindAPIResizePod, []string{"Rejected"}, []string{""}, problems, NotNoise, says("The API server refuses to resize {pod}: {message}.")},
	{Scenario, KindProbe, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindContainerStop, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindHook, []string{""}, []string{""}, problems, NotNoise, sayInjects},
	{Scenario, KindError, []string{"*"}, []string{""}, problems, NotNoise, sayStepFailed},
}

// rows indexes the Catalogue by (component, kind).
var rows = func() map[rowKey][]int {
	m := map[rowKey][]int{}
	for i, en := range Catalogue {
		k := rowKey{en.Component, en.Kind}
		m[k] = append(m[k], i)
	}
	return m
}()

type rowKey struct {
	c Component
	k Kind
}

// allows reports whether the row allows e's reason and function.
func (en *Entry) allows(e Event) bool {
	return (slices.Contains(en.Reasons, "*") || slices.Contains(en.Reasons, e.Reason)) && slices.Contains(en.Funcs, e.Func)
}

// Lookup returns the Catalogue row of an event: the first that allows its component, kind,
// reason and function, else the first of its component and kind with its function, else the
// first of its component and kind. It is false when the catalogue has no row of the pair.
func Lookup(e Event) (Entry, bool) {
	idx := rows[rowKey{e.Component, e.Event}]
	if len(idx) == 0 {
		return Entry{}, false
	}
	for _, i := range idx {
		if Catalogue[i].allows(e) {
			return Catalogue[i], true
		}
	}
	for _, i := range idx {
		if slices.Contains(Catalogue[i].Funcs, e.Func) {
			return Catalogue[i], true
		}
	}
	return Catalogue[idx[0]], true
}

// Registered returns an error unless some Entry of the Catalogue allows e: its component and
// kind, its reason and its function.
func Registered(e Event) error {
	idx := rows[rowKey{e.Component, e.Event}]
	if len(idx) == 0 {
		return fmt.Errorf("trace event (%s, %s) is not in the catalogue", e.Component, e.Event)
	}
	for _, i := range idx {
		if Catalogue[i].allows(e) {
			return nil
		}
	}
	return fmt.Errorf("trace event (%s, %s) with reason %q and func %q is not in the catalogue", e.Component, e.Event, e.Reason, e.Func)
}
