package events

// Container event reasons, recorded by the runtime.
const (
	// CreatedContainer is recorded when a container was created.
	CreatedContainer = "Created"
	// StartedContainer is recorded when a container started.
	StartedContainer = "Started"
	// FailedToCreateContainer is recorded when a container could not be created or configured.
	FailedToCreateContainer = "Failed"
	// FailedToStartContainer is recorded when the runtime could not start a created container.
	FailedToStartContainer = "Failed"
	// KillingContainer is recorded when a container is asked to stop.
	KillingContainer = "Killing"
	// BackOffStartContainer is recorded when a container's restart is held back.
	BackOffStartContainer = "BackOff"
	// FailedPostStartHook is recorded when a container's postStart hook failed; the container
	// is then killed.
	FailedPostStartHook = "FailedPostStartHook"
	// FailedPreStopHook is recorded when a container's preStop hook failed; the stop goes on.
	FailedPreStopHook = "FailedPreStopHook"
)

// Probe event reasons, recorded by the prober.
const (
	// ContainerUnhealthy is recorded at every failed or errored probe attempt.
	ContainerUnhealthy = "Unhealthy"
	// ContainerProbeWarning is recorded when a probe succeeds with a warning (not modelled: the
	// scripted probes never warn).
	ContainerProbeWarning = "ProbeWarning"
)

// Image event reasons, recorded by the runtime's image puller.
const (
	// PullingImage is recorded when an image pull starts.
	PullingImage = "Pulling"
	// PulledImage is recorded when an image pull succeeded.
	PulledImage = "Pulled"
	// FailedToPullImage is recorded when an image pull failed.
	FailedToPullImage = "Failed"
	// BackOffPullImage is recorded when an image pull is held back.
	BackOffPullImage = "BackOff"
	// ErrImageNeverPullPolicy is recorded when a missing image may not be pulled.
	ErrImageNeverPullPolicy = "ErrImageNeverPull"
	// FailedToInspectImage is recorded when an image reference does not parse or cannot be
	// inspected.
	FailedToInspectImage = "InspectFailed"
)

// Sandbox event reasons, recorded by the runtime.
const (
	// FailedCreatePodSandBox is recorded when the pod's sandbox could not be created.
	FailedCreatePodSandBox = "FailedCreatePodSandBox"
	// SandboxChanged is recorded by SyncPod when a pod that had a sandbox needs a new one (its
	// sandbox died, or several are ready), before the pod is killed and the sandbox re-created.
	SandboxChanged = "SandboxChanged"
)

// Pod event reasons, recorded by the pod sync functions.
const (
	// FailedToKillPod is recorded when SyncTerminatingPod's kill failed.
	FailedToKillPod = "FailedKillPod"
)

// Admission event reasons, recorded by the admit handlers (package admission). A rejected pod's
// event reason is the handler's (OutOfcpu, NodeAffinity...).
const (
	// PreemptContainer is recorded on a pod killed to make room for a critical pod.
	PreemptContainer = "Preempting"
)

// Node event reasons, recorded about the Node (NodeRef): the kubelet's own events, with the
// message "Node <name> status is now: <reason>" for the condition and schedulable ones.
const (
	// StartingKubelet is recorded once when the kubelet process starts, before it runs (the
	// kubelet's BirthCry), with the message MessageStartingKubelet.
	StartingKubelet = "Starting"
	// NodeHasSufficientMemory, NodeHasNoDiskPressure and NodeHasSufficientPID are recorded by the
	// condition setters when a pressure condition becomes False: on the node the kubelet
	// registers (whose conditions are new), and on a node whose condition was True or Unknown.
	NodeHasSufficientMemory = "NodeHasSufficientMemory"
	NodeHasNoDiskPressure   = "NodeHasNoDiskPressure"
	NodeHasSufficientPID    = "NodeHasSufficientPID"
	// NodeReady and NodeNotReady are recorded when the Ready condition the kubelet computes
	// differs from the node's (never when the node had none).
	NodeReady    = "NodeReady"
	NodeNotReady = "NodeNotReady"
	// NodeSchedulable and NodeNotSchedulable are recorded when the kubelet sees
	// spec.unschedulable change (kubectl cordon and uncordon), at its next node status update.
	NodeSchedulable    = "NodeSchedulable"
	NodeNotSchedulable = "NodeNotSchedulable"
	// SuccessfulNodeAllocatableEnforcement is recorded when the container manager starts and has
	// set the pods' cgroup limits to the node's allocatable, with the message
	// MessageNodeAllocatableEnforced.
	SuccessfulNodeAllocatableEnforcement = "NodeAllocatableEnforced"
)

// Messages of the node events that are not "Node <name> status is now: <reason>".
const (
	MessageStartingKubelet         = "Starting kubelet."
	MessageNodeAllocatableEnforced = "Updated Node Allocatable limit across pods"
)
