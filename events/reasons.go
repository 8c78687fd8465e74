package events

// Container event reasons, recorded by the runtime.
const (
	// CreatedContainer is recorded when a container was created.
	CreatedContainer = "Created"
	// StartedContainer is recorded when a container started.
	StartedContainer = "Started"
	// FailedToCreateContainer is recorded when a container could not be created or configured.
	FailedToCreateContainer = "Failed"
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
)

// Sandbox event reasons, recorded by the runtime.
const (
	// FailedCreatePodSandBox is recorded when the pod's sandbox could not be created.
	FailedCreatePodSandBox = "FailedCreatePodSandBox"
)

// Pod event reasons, recorded by the pod sync functions.
const (
	// FailedToKillPod is recorded when SyncTerminatingPod's kill failed.
	FailedToKillPod = "FailedKillPod"
)
