package trace

// Kind is what happened in an event: the event word of the text form and the "event" key of the
// JSON form. A kind means something only together with the component that emits it: "sync" from
// the syncloop is a sync tick, from podworkers a call of a sync function, from the runtime the
// actions SyncPod decided. docs/trace.md's catalogue lists, per component, every kind it emits
// and the fields it sets; a test checks that the catalogue covers the golden traces and every
// constant below.
//
// There is one constant per word, not one per (component, word) pair. The word is all the trace
// carries, so two constants with one value would be the same kind under two names, and a switch
// over them would not compile. Words that several components use are declared once, in the first
// block; the other blocks follow the pipeline order of the catalogue and hold the words only that
// component uses.
//
// The trace observes; it does not drive. No component may branch on the kind of an event it
// receives from the trace: a consumer that needs to know something gets a typed value or a sink
// of its own.
type Kind string

// String returns the event word.
func (k Kind) String() string { return string(k) }

// Kinds used by more than one component.
const (
	KindError  Kind = "error"  // a failure; every component but podmanager, workqueue and apiserver
	KindSync   Kind = "sync"   // syncloop: a sync tick; podworkers: a sync call; runtime: SyncPod's actions
	KindUpdate Kind = "update" // podconfig: an update leaves PodConfig; podmanager, apiserver: a pod replaced
	KindSet    Kind = "set"    // sources: a SET sent; status: the cached status changed
	KindSkip   Kind = "skip"   // syncloop, housekeeping, mirror: something was not done, with the reason
	KindCreate Kind = "create" // mirror: a mirror pod created; apiserver: a pod created
	KindDelete Kind = "delete" // mirror: a mirror pod deleted; status: a finished pod deleted; apiserver: a pod gone
	KindHook   Kind = "hook"   // runtime: a lifecycle hook started or ended; scenario: the hook step
	KindPLEG   Kind = "pleg"   // syncloop: a PLEG event triggers a sync; kubelet: the PLEG starts relisting
)

// Kinds of the kubelet component: the steps of the process's start-up, in the order the kubelet
// takes them (docs/trace.md, "The start-up").
const (
	KindNew           Kind = "new"            // NewMainKubelet built the process
	KindSources       Kind = "sources"        // makePodSourceConfig made PodConfig and its sources
	KindRun           Kind = "run"            // startKubelet runs Kubelet.Run
	KindModules       Kind = "modules"        // initializeModules: directories, image manager, OOM watcher
	KindRuntimeUp     Kind = "runtime-up"     // updateRuntimeUp found the runtime ready for the first time
	KindFastStatus    Kind = "fast-status"    // fastStatusUpdateOnce starts polling every Delay
	KindStatusManager Kind = "status-manager" // the status manager starts its sync loop
	// The PLEG's start is KindPLEG, a word the sync loop uses too.
	KindSyncLoopStart  Kind = "sync-loop"       // syncLoop is entered
	KindRuntimeModules Kind = "runtime-modules" // initializeRuntimeDependentModules: container, device and plugin managers
	KindNodeStatus     Kind = "node-status"     // the node status loop starts: registration, then every Delay
)

// Kinds of the syncloop component.
const (
	KindConfig Kind = "config" // a config update handed to its handler
	KindResume Kind = "resume" // dispatch resumes after the runtime state's errors cleared
)

// Kinds of the housekeeping component.
const (
	KindDeleteMirror Kind = "delete-mirror" // an orphaned mirror pod is deleted
	KindRestart      Kind = "restart"       // a desired pod without a worker is started again
	KindKill         Kind = "kill"          // a pod no worker knows is killed
)

// Kinds of the podmanager component.
const (
	KindAdd    Kind = "add"    // the pod manager holds a new pod
	KindRemove Kind = "remove" // the pod manager dropped a pod
)

// Kinds of the mirror component.
const (
	KindReconcile Kind = "reconcile" // SyncPod deletes or creates a static pod's mirror pod
)

// Kinds of the podworkers component.
const (
	KindState            Kind = "state"             // a worker changed state
	KindCancel           Kind = "cancel"            // a sync in progress is cancelled
	KindRequeue          Kind = "requeue"           // the UID goes back into the work queue
	KindBlocked          Kind = "blocked"           // a static pod may not start yet
	KindRestartRequested Kind = "restart-requested" // a terminating pod was added again
)

// Kinds of the runtime component.
const (
	KindSandbox Kind = "sandbox" // a sandbox became ready or was stopped
	KindPull    Kind = "pull"    // an image pull starts
	KindPulled  Kind = "pulled"  // an image pull succeeded
	KindFailed  Kind = "failed"  // a pull failed or a container could not be created
	KindBackOff Kind = "backoff" // a pull or a restart is held back
	KindCreated Kind = "created" // a container was created
	KindStarted Kind = "started" // a container is running
	KindKilling Kind = "killing" // a running container is being stopped
	KindExited  Kind = "exited"  // a container exited
	KindRemoved Kind = "removed" // a dead container or a stopped sandbox was removed
	KindDown    Kind = "down"    // the runtime stops answering for a while
	KindResize  Kind = "resize"  // a running container's cpu or memory was updated in place
)

// Kinds of the pleg component. The first four are the kubelet's PodLifecycleEventType names, which
// the PLEG writes as they are. ContainerChanged has no constant: the PLEG computes it but never
// sends it, as in the kubelet, so it never reaches the trace.
const (
	KindContainerStarted Kind = "ContainerStarted" // a container or sandbox started
	KindContainerDied    Kind = "ContainerDied"    // a container or sandbox exited
	KindContainerRemoved Kind = "ContainerRemoved" // an exited container or sandbox is gone
	KindPodSync          Kind = "PodSync"          // a pod reinspected with no container change
	KindConditionMet     Kind = "ConditionMet"     // a pod's watch condition (a resize's end) was met
	KindHealth           Kind = "health"           // the PLEG's health changed
)

// Kinds of the prober component.
const (
	KindWorker Kind = "worker" // a probe worker started or stopped
	KindProbe  Kind = "probe"  // prober: a probe attempt did not succeed; syncloop: a probe result triggers a sync
	KindResult Kind = "result" // a results cache value changed
)

// Kinds of the status component.
const (
	KindReject Kind = "reject" // a new status was refused
	KindPatch  Kind = "patch"  // the status was written to the API server
	KindDrop   Kind = "drop"   // the status of a recreated pod was dropped
)

// Kinds of the podstartup component.
const (
	KindMeasured Kind = "measured" // a pod's start was measured for the start SLI
)

// Kinds of the node component.
const (
	KindRegister Kind = "register" // the node object was created or adopted
	KindReady    Kind = "ready"    // the node's Ready condition changed
)

// Kinds of the apiserver component.
const (
	KindStatus   Kind = "status"   // a pod's status changed
	KindDeleting Kind = "deleting" // a graceful delete set the deletionTimestamp
	KindBind     Kind = "bind"     // apiserver: pods/binding assigned a pod to a node; scheduler: a pod bound
)

// Kinds of the events component: the type of a Kubernetes event the kubelet records.
const (
	KindNormal  Kind = "Normal"  // a Normal event was recorded
	KindWarning Kind = "Warning" // a Warning event was recorded
)

// Kinds of the scenario component: the names of the scenario steps that act on the world, as
// written in scenario files. The expect and expectEvent steps only observe and emit nothing.
const (
	KindWriteManifest       Kind = "writeManifest"
	KindRemoveManifest      Kind = "removeManifest"
	KindRenameManifest      Kind = "renameManifest"
	KindServeHTTP           Kind = "serveHTTP"
	KindAPICreatePod        Kind = "apiCreatePod"
	KindAPIUpdatePod        Kind = "apiUpdatePod"
	KindAPIUpdatePodStatus  Kind = "apiUpdatePodStatus"
	KindAPIDeletePod        Kind = "apiDeletePod"
	KindAPIDeleteMirrorPod  Kind = "apiDeleteMirrorPod"
	KindAPICreateNamespace  Kind = "apiCreateNamespace"
	KindAPIDeleteNamespace  Kind = "apiDeleteNamespace"
	KindContainerExit       Kind = "containerExit"
	KindCrashLoop           Kind = "crashLoop"
	KindFailImagePull       Kind = "failImagePull"
	KindRuntimeDown         Kind = "runtimeDown"
	KindAPIServerDown       Kind = "apiServerDown"
	KindCreatePluginSocket  Kind = "createPluginSocket"
	KindRemovePluginSocket  Kind = "removePluginSocket"
	KindDeviceHealth        Kind = "deviceHealth"
	KindPluginFails         Kind = "pluginFails"
	KindContainerStop       Kind = "containerStop"
	KindOOMKill             Kind = "oomKill"
	KindKillSandbox         Kind = "killSandbox"
	KindFailRuntimeCall     Kind = "failRuntimeCall"
	KindFailVolumeOperation Kind = "failVolumeOperation"
	KindRestartKubelet      Kind = "restartKubelet"
	KindStopNode            Kind = "stopNode"
	KindStartNode           Kind = "startNode"
	KindAPIDeleteNode       Kind = "apiDeleteNode"
	KindAPIPatchNode        Kind = "apiPatchNode"
	KindAPIPatchPod         Kind = "apiPatchPod"
	KindAPICreateObject     Kind = "apiCreateObject"
	KindAPIResizePod        Kind = "apiResizePod"
)

// Kinds of the controllers: nodelifecycle, tainteviction, podgc and scheduler.
const (
	KindNode          Kind = "node"          // nodelifecycle: a node registered with or removed from the controller (reason RegisteredNode, RemovingNode, NodeNotReady)
	KindTaint         Kind = "taint"         // nodelifecycle: a taint added to a node
	KindUntaint       Kind = "untaint"       // nodelifecycle: a taint removed from a node
	KindNotReady      Kind = "not-ready"     // nodelifecycle: a pod of a node that stopped being Ready marked not Ready
	KindEvictAt       Kind = "evict-at"      // tainteviction: a pod's eviction scheduled, Delay from now
	KindEvictCancel   Kind = "evict-cancel"  // tainteviction: a scheduled eviction cancelled
	KindEvict         Kind = "evict"         // tainteviction: a pod given the DisruptionTarget condition and deleted
	KindUnschedulable Kind = "unschedulable" // scheduler: no node fits the pod
)

// Kinds of the plugin pipeline: pluginwatcher, pluginmanager, devicemanager and csi. The
// pluginwatcher uses add and remove; the pluginmanager register, backoff and error too.
const (
	KindInfo         Kind = "info"         // pluginmanager: a plugin answered GetInfo
	KindRegistered   Kind = "registered"   // pluginmanager: a register operation succeeded; csi, devicemanager: a plugin taken in
	KindUnregister   Kind = "unregister"   // pluginmanager: an unregister operation started
	KindUnregistered Kind = "unregistered" // pluginmanager: a plugin let go; csi, devicemanager: a plugin dropped
	KindUpdated      Kind = "updated"      // pluginmanager: a registered socket was recreated
	KindDevices      Kind = "devices"      // devicemanager: a ListAndWatch update
	KindStopped      Kind = "stopped"      // devicemanager: an endpoint stopped, the grace period begins
	KindExpired      Kind = "expired"      // devicemanager: a resource removed after the grace period
	KindAllocate     Kind = "allocate"     // devicemanager: devices allocated to a container
	KindRestored     Kind = "restored"     // devicemanager: the checkpoint read back at start
)

// Kinds of the DRA handler (dra), which uses registered, unregistered and error too.
const (
	KindConnected    Kind = "connected"    // dra: a plugin's connection came up
	KindDisconnected Kind = "disconnected" // dra: a plugin's connection went down
	KindWipeAt       Kind = "wipe-at"      // dra: a wipe of a driver's ResourceSlices scheduled, Delay from now
	KindWipeCancel   Kind = "wipe-cancel"  // dra: a scheduled wipe cancelled: the driver has a connected plugin again
	KindWiped        Kind = "wiped"        // dra: a driver's ResourceSlices of the node deleted
)

// Kinds of the volume manager.
const (
	KindMount   Kind = "mount"   // volumemanager: a volume set up for a pod (MountVolume.SetUp)
	KindUnmount Kind = "unmount" // volumemanager: a volume torn down (UnmountVolume.TearDown)
	KindToken   Kind = "token"   // volumemanager: a service account token requested (TokenRequest)
)
