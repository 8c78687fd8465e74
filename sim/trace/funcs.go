package trace

// Components is every component, in the catalogue's order.
var Components = []Component{
	Kubelet, Sources, PodConfig, SyncLoop, Housekeeping, PodManager, Mirror, PodWorkers, WorkQueue, Runtime, PLEG,
	Status, Prober, PodStartup, Node, APIServer, PluginWatcher, PluginManager, DeviceManager, CSI, DRA, Events, Scenario,
	NodeLifecycle, TaintEviction, PodGC, Scheduler, VolumeManager,
}

// Location is where a step lives in the kubelet's source: the function qualified by its
// receiver's type (or its package, for a function without one) and the file, relative to the
// root of the kubernetes repository at v1.35.
type Location struct {
	Func string
	File string
}

// Kubelet source files the locations name.
const (
	fileConfigFile        = "pkg/kubelet/config/file.go"
	fileConfigFileLin     = "pkg/kubelet/config/file_linux.go"
	fileConfigHTTP        = "pkg/kubelet/config/http.go"
	fileConfigAPI         = "pkg/kubelet/config/apiserver.go"
	fileConfig            = "pkg/kubelet/config/config.go"
	fileKubelet           = "pkg/kubelet/kubelet.go"
	fileKubeletPods       = "pkg/kubelet/kubelet_pods.go"
	fileNodeStatus        = "pkg/kubelet/kubelet_node_status.go"
	fileNodeSetters       = "pkg/kubelet/nodestatus/setters.go"
	fileLease             = "staging/src/k8s.io/component-helpers/apimachinery/lease/controller.go"
	fileDeletor           = "pkg/kubelet/pod_container_deletor.go"
	filePodManager        = "pkg/kubelet/pod/pod_manager.go"
	fileMirrorClient      = "pkg/kubelet/pod/mirror_client.go"
	filePodWorkers        = "pkg/kubelet/pod_workers.go"
	fileRuntimeManager    = "pkg/kubelet/kuberuntime/kuberuntime_manager.go"
	fileRuntimeSandbox    = "pkg/kubelet/kuberuntime/kuberuntime_sandbox.go"
	fileRuntimeCont       = "pkg/kubelet/kuberuntime/kuberuntime_container.go"
	fileRuntimeGC         = "pkg/kubelet/kuberuntime/kuberuntime_gc.go"
	fileRuntimeInstr      = "pkg/kubelet/kuberuntime/instrumented_services.go"
	fileImageManager      = "pkg/kubelet/images/image_manager.go"
	filePLEG              = "pkg/kubelet/pleg/generic.go"
	fileStatusManager     = "pkg/kubelet/status/status_manager.go"
	fileStartupTracker    = "pkg/kubelet/util/pod_startup_latency_tracker.go"
	filePluginWatcher     = "pkg/kubelet/pluginmanager/pluginwatcher/plugin_watcher.go"
	fileReconciler        = "pkg/kubelet/pluginmanager/reconciler/reconciler.go"
	fileOpExecutor        = "pkg/kubelet/pluginmanager/operationexecutor/operation_executor.go"
	fileOpGenerator       = "pkg/kubelet/pluginmanager/operationexecutor/operation_generator.go"
	fileGoroutineMap      = "pkg/util/goroutinemap/goroutinemap.go"
	fileDeviceManager     = "pkg/kubelet/cm/devicemanager/manager.go"
	fileDPServer          = "pkg/kubelet/cm/devicemanager/plugin/v1beta1/server.go"
	fileDPClient          = "pkg/kubelet/cm/devicemanager/plugin/v1beta1/client.go"
	fileCSIPlugin         = "pkg/volume/csi/csi_plugin.go"
	fileOpGeneratorVolume = "pkg/volume/util/operationexecutor/operation_generator.go"
	fileDRAPluginMgr      = "pkg/kubelet/cm/dra/plugin/dra_plugin_manager.go"
	fileTokenManager      = "pkg/kubelet/token/token_manager.go"
	fileProberManager     = "pkg/kubelet/prober/prober_manager.go"
	fileProber            = "pkg/kubelet/prober/prober.go"
	fileProbeWorker       = "pkg/kubelet/prober/worker.go"
	fileProbeResults      = "pkg/kubelet/prober/results/results_manager.go"
	fileNodeLifecycle     = "pkg/controller/nodelifecycle/node_lifecycle_controller.go"
	fileNodeUtil          = "pkg/controller/util/node/controller_utils.go"
	fileTaintEviction     = "pkg/controller/tainteviction/taint_eviction.go"
	filePodGC             = "pkg/controller/podgc/gc_controller.go"
	fileDefaultBinder     = "pkg/scheduler/framework/plugins/defaultbinder/default_binder.go"
	fileScheduleOne       = "pkg/scheduler/schedule_one.go"
)

// locations maps, per component, the function name a component puts in Event.Func to where it
// lives in the kubelet. The same name means different functions in different components
// (UpdatePod of the pod manager and of the pod workers, SyncPod of the kubelet and of the
// runtime manager), so the key is the pair. It is the registry of every function the trace can
// name: a test checks it against docs/trace.md's catalogue, and the scenarios' events against
// it. The API server's "functions" are HTTP requests and are not in it.
var locations = map[Component]map[string]Location{
	Kubelet: {
		"NewMainKubelet":                    {"kubelet.NewMainKubelet", fileKubelet},
		"makePodSourceConfig":               {"kubelet.makePodSourceConfig", fileKubelet},
		"Run":                               {"Kubelet.Run", fileKubelet},
		"initializeModules":                 {"Kubelet.initializeModules", fileKubelet},
		"updateRuntimeUp":                   {"Kubelet.updateRuntimeUp", fileKubelet},
		"syncNodeStatus":                    {"Kubelet.syncNodeStatus", fileNodeStatus},
		"fastStatusUpdateOnce":              {"Kubelet.fastStatusUpdateOnce", fileKubelet},
		"initializeRuntimeDependentModules": {"Kubelet.initializeRuntimeDependentModules", fileKubelet},
		"statusManager.Start":               {"statusManager.Start", fileStatusManager},
		"GenericPLEG.Start":                 {"GenericPLEG.Start", filePLEG},
		"syncLoop":                          {"Kubelet.syncLoop", fileKubelet},
	},
	Sources: {
		"listConfig":         {"sourceFile.listConfig", fileConfigFile},
		"extractFromDir":     {"sourceFile.extractFromDir", fileConfigFile},
		"consumeWatchEvent":  {"sourceFile.consumeWatchEvent", fileConfigFileLin},
		"doWatch":            {"sourceFile.doWatch", fileConfigFileLin},
		"extractFromURL":     {"sourceURL.extractFromURL", fileConfigHTTP},
		"NewSourceApiserver": {"config.NewSourceApiserver", fileConfigAPI},
	},
	PodConfig: {
		"podStorage.merge":  {"podStorage.merge", fileConfig},
		"podStorage.sync":   {"podStorage.sync", fileConfig},
		"filterInvalidPods": {"config.filterInvalidPods", fileConfig},
	},
	SyncLoop: {
		"HandlePodAdditions":    {"Kubelet.HandlePodAdditions", fileKubelet},
		"HandlePodUpdates":      {"Kubelet.HandlePodUpdates", fileKubelet},
		"HandlePodRemoves":      {"Kubelet.HandlePodRemoves", fileKubelet},
		"HandlePodReconcile":    {"Kubelet.HandlePodReconcile", fileKubelet},
		"HandlePodSyncs":        {"Kubelet.HandlePodSyncs", fileKubelet},
		"syncLoop":              {"Kubelet.syncLoop", fileKubelet},
		"syncLoopIteration":     {"Kubelet.syncLoopIteration", fileKubelet},
		"deletePod":             {"Kubelet.deletePod", fileKubeletPods},
		"deleteContainersInPod": {"podContainerDeletor.deleteContainersInPod", fileDeletor},
		"SyncTerminatingPod":    {"Kubelet.SyncTerminatingPod", fileKubelet},
		"updateRuntimeUp":       {"Kubelet.updateRuntimeUp", fileKubelet},
		"handleProbeSync":       {"kubelet.handleProbeSync", fileKubelet},
	},
	Housekeeping: {
		"HandlePodCleanups": {"Kubelet.HandlePodCleanups", fileKubeletPods},
		"syncLoopIteration": {"Kubelet.syncLoopIteration", fileKubelet},
	},
	PodManager: {
		"AddPod":    {"basicManager.AddPod", filePodManager},
		"UpdatePod": {"basicManager.UpdatePod", filePodManager},
		"RemovePod": {"basicManager.RemovePod", filePodManager},
	},
	Mirror: {
		"CreateMirrorPod":        {"basicMirrorClient.CreateMirrorPod", fileMirrorClient},
		"DeleteMirrorPod":        {"basicMirrorClient.DeleteMirrorPod", fileMirrorClient},
		"tryReconcileMirrorPods": {"Kubelet.tryReconcileMirrorPods", fileKubelet},
	},
	PodWorkers: {
		"UpdatePod":                     {"podWorkers.UpdatePod", filePodWorkers},
		"completeSync":                  {"podWorkers.completeSync", filePodWorkers},
		"completeTerminating":           {"podWorkers.completeTerminating", filePodWorkers},
		"completeTerminatingRuntimePod": {"podWorkers.completeTerminatingRuntimePod", filePodWorkers},
		"completeTerminated":            {"podWorkers.completeTerminated", filePodWorkers},
		"cleanupUnstartedPod":           {"podWorkers.cleanupUnstartedPod", filePodWorkers},
		"removeTerminatedWorker":        {"podWorkers.removeTerminatedWorker", filePodWorkers},
		"completeWork":                  {"podWorkers.completeWork", filePodWorkers},
		"allowPodStart":                 {"podWorkers.allowPodStart", filePodWorkers},
		// The sync functions a worker calls are the kubelet's (its podSyncer).
		"SyncPod":                   {"Kubelet.SyncPod", fileKubelet},
		"SyncTerminatingPod":        {"Kubelet.SyncTerminatingPod", fileKubelet},
		"SyncTerminatingRuntimePod": {"Kubelet.SyncTerminatingRuntimePod", fileKubelet},
		"SyncTerminatedPod":         {"Kubelet.SyncTerminatedPod", fileKubelet},
	},
	Runtime: {
		"SyncPod":                  {"kubeGenericRuntimeManager.SyncPod", fileRuntimeManager},
		"KillPod":                  {"kubeGenericRuntimeManager.KillPod", fileRuntimeManager},
		"doBackOff":                {"kubeGenericRuntimeManager.doBackOff", fileRuntimeManager},
		"GarbageCollect":           {"containerGC.GarbageCollect", fileRuntimeGC},
		"createPodSandbox":         {"kubeGenericRuntimeManager.createPodSandbox", fileRuntimeSandbox},
		"startContainer":           {"kubeGenericRuntimeManager.startContainer", fileRuntimeCont},
		"killContainer":            {"kubeGenericRuntimeManager.killContainer", fileRuntimeCont},
		"purgeInitContainers":      {"kubeGenericRuntimeManager.purgeInitContainers", fileRuntimeCont},
		"RemoveContainer":          {"kubeGenericRuntimeManager.removeContainer", fileRuntimeCont},
		"StopPodSandbox":           {"instrumentedRuntimeService.StopPodSandbox", fileRuntimeInstr},
		"EnsureImageExists":        {"imageManager.EnsureImageExists", fileImageManager},
		"executePreStopHook":       {"kubeGenericRuntimeManager.executePreStopHook", fileRuntimeCont},
		"updateContainerResources": {"kubeGenericRuntimeManager.updateContainerResources", fileRuntimeCont},
	},
	PLEG: {
		"relist":      {"GenericPLEG.Relist", filePLEG},
		"updateCache": {"GenericPLEG.updateCache", filePLEG},
		"Healthy":     {"GenericPLEG.Healthy", filePLEG},
	},
	Status: {
		"SetPodStatus": {"statusManager.SetPodStatus", fileStatusManager},
		"TerminatePod": {"statusManager.TerminatePod", fileStatusManager},
		"syncPod":      {"statusManager.syncPod", fileStatusManager},
		// The prober's results reach the status manager through these.
		"SetContainerReadiness": {"statusManager.SetContainerReadiness", fileStatusManager},
		"SetContainerStartup":   {"statusManager.SetContainerStartup", fileStatusManager},
	},
	Prober: {
		"AddPod":                 {"manager.AddPod", fileProberManager},
		"RemovePod":              {"manager.RemovePod", fileProberManager},
		"CleanupPods":            {"manager.CleanupPods", fileProberManager},
		"StopLivenessAndStartup": {"manager.StopLivenessAndStartup", fileProberManager},
		"run":                    {"worker.run", fileProbeWorker},
		"probe":                  {"prober.probe", fileProber},
		"Set":                    {"resultsManager.Set", fileProbeResults},
	},
	NodeLifecycle: {
		"tryUpdateNodeHealth":     {"Controller.tryUpdateNodeHealth", fileNodeLifecycle},
		"MarkPodsNotReady":        {"controllerutil.MarkPodsNotReady", fileNodeUtil},
		"SwapNodeControllerTaint": {"controllerutil.SwapNodeControllerTaint", fileNodeUtil},
	},
	TaintEviction: {
		"processPodOnNode":         {"Controller.processPodOnNode", fileTaintEviction},
		"cancelWorkWithEvent":      {"Controller.cancelWorkWithEvent", fileTaintEviction},
		"addConditionAndDeletePod": {"tainteviction.addConditionAndDeletePod", fileTaintEviction},
	},
	PodGC: {
		"markFailedAndDeletePodWithCondition": {"PodGCController.markFailedAndDeletePodWithCondition", filePodGC},
	},
	Scheduler: {
		"bind":                    {"DefaultBinder.Bind", fileDefaultBinder},
		"handleSchedulingFailure": {"Scheduler.handleSchedulingFailure", fileScheduleOne},
	},
	PodStartup: {
		"ObservedPodOnWatch": {"basicPodStartupLatencyTracker.ObservedPodOnWatch", fileStartupTracker},
	},
	Node: {
		"registerWithAPIServer": {"Kubelet.registerWithAPIServer", fileNodeStatus},
		"updateNodeStatus":      {"Kubelet.updateNodeStatus", fileNodeStatus},
		"fastNodeStatusUpdate":  {"Kubelet.fastNodeStatusUpdate", fileKubelet},
		"setNodeReadyCondition": {"nodestatus.ReadyCondition", fileNodeSetters},
		"renewLease":            {"controller.retryUpdateLease", fileLease},
		"initializeCSINode":     {"csi.initializeCSINode", fileCSIPlugin},
	},
	PluginWatcher: {
		"traversePluginDir":        {"Watcher.traversePluginDir", filePluginWatcher},
		"handleCreateEvent":        {"Watcher.handleCreateEvent", filePluginWatcher},
		"handleDeleteEvent":        {"Watcher.handleDeleteEvent", filePluginWatcher},
		"handlePluginRegistration": {"Watcher.handlePluginRegistration", filePluginWatcher},
	},
	PluginManager: {
		"reconcile":         {"reconciler.reconcile", fileReconciler},
		"RegisterPlugin":    {"operationExecutor.RegisterPlugin", fileOpExecutor},
		"UnregisterPlugin":  {"operationExecutor.UnregisterPlugin", fileOpExecutor},
		"GetInfo":           {"operationGenerator.GenerateRegisterPluginFunc", fileOpGenerator},
		"operationComplete": {"goRoutineMap.operationComplete", fileGoroutineMap},
	},
	DeviceManager: {
		"Allocate":                    {"ManagerImpl.Allocate", fileDeviceManager},
		"GetCapacity":                 {"ManagerImpl.GetCapacity", fileDeviceManager},
		"PluginConnected":             {"ManagerImpl.PluginConnected", fileDeviceManager},
		"PluginDisconnected":          {"ManagerImpl.PluginDisconnected", fileDeviceManager},
		"genericDeviceUpdateCallback": {"ManagerImpl.genericDeviceUpdateCallback", fileDeviceManager},
		"writeCheckpoint":             {"ManagerImpl.writeCheckpoint", fileDeviceManager},
		"readCheckpoint":              {"ManagerImpl.readCheckpoint", fileDeviceManager},
		"Register":                    {"server.Register", fileDPServer},
		"ListAndWatch":                {"client.Run", fileDPClient},
	},
	VolumeManager: {
		"GenerateMountVolumeFunc":   {"operationGenerator.GenerateMountVolumeFunc", fileOpGeneratorVolume},
		"GenerateUnmountVolumeFunc": {"operationGenerator.GenerateUnmountVolumeFunc", fileOpGeneratorVolume},
		"GetServiceAccountToken":    {"Manager.GetServiceAccountToken", fileTokenManager},
	},
	CSI: {
		"ValidatePlugin":   {"RegistrationHandler.ValidatePlugin", fileCSIPlugin},
		"RegisterPlugin":   {"RegistrationHandler.RegisterPlugin", fileCSIPlugin},
		"DeRegisterPlugin": {"RegistrationHandler.DeRegisterPlugin", fileCSIPlugin},
	},
	DRA: {
		"ValidatePlugin":     {"DRAPluginManager.ValidatePlugin", fileDRAPluginMgr},
		"RegisterPlugin":     {"DRAPluginManager.RegisterPlugin", fileDRAPluginMgr},
		"DeRegisterPlugin":   {"DRAPluginManager.DeRegisterPlugin", fileDRAPluginMgr},
		"HandleConn":         {"monitoredPlugin.HandleConn", fileDRAPluginMgr},
		"sync":               {"DRAPluginManager.sync", fileDRAPluginMgr},
		"wipeResourceSlices": {"DRAPluginManager.wipeResourceSlices", fileDRAPluginMgr},
	},
}

// Where returns where the event's step lives in the kubelet: its function qualified by the
// receiver's type, and the source file. A function the registry does not know (the API server's
// HTTP requests) is returned as it is, with no file.
func (e Event) Where() Location {
	if l, ok := locations[e.Component][e.Func]; ok {
		return l
	}
	return Location{Func: e.Func}
}

// Located reports whether the registry knows the event's function. Events with no function
// and the API server's requests need no entry.
func (e Event) Located() bool {
	if e.Func == "" || e.Component == APIServer {
		return true
	}
	_, ok := locations[e.Component][e.Func]
	return ok
}
