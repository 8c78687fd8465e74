package kubecontainer

// ProbeResults are the liveness and startup results managers as the runtime's computePodActions
// reads them: a running container whose liveness or startup probe reached its failure threshold
// is killed (and restarted when its restart policy allows). IDs are runtime container IDs.
type ProbeResults interface {
	// LivenessFailed reports whether the container's liveness result is Failure.
	LivenessFailed(containerID string) bool
	// LivenessKnown reports whether the container has a liveness result at all: a running
	// sidecar with a liveness probe waits for its first one before its resize is looked at.
	LivenessKnown(containerID string) bool
	// StartupFailed reports whether the container's startup result is Failure.
	StartupFailed(containerID string) bool
	// StartupSucceeded reports whether the container's startup result is Success: a sidecar
	// with a startup probe lets the next init container start only then.
	StartupSucceeded(containerID string) bool
}
