package kubecontainer

import (
	"errors"
	"time"

	v1 "k8s.io/api/core/v1"
)

// ErrNoClock is returned by a constructor of this package given no clock.
var ErrNoClock = errors.New("no clock given")

// Errors a runtime returns for a container it could not start. The sync side turns them into the
// Waiting reasons the API shows; check them with errors.Is.
var (
	// ErrImagePull is returned when an image pull failed (the kubelet's images.ErrImagePull); the
	// next pull of that image for that pod is held back with ErrImagePullBackOff.
	ErrImagePull = errors.New("ErrImagePull")
	// ErrImageNeverPull is returned when an image is missing and its pull policy is Never.
	ErrImageNeverPull = errors.New("ErrImageNeverPull")
	// ErrCreateContainerConfig is returned when a container's configuration cannot be generated;
	// the API shows it as CreateContainerConfigError.
	ErrCreateContainerConfig = errors.New("CreateContainerConfigError")
	// ErrCreateContainer is returned when the runtime's CreateContainer call failed.
	ErrCreateContainer = errors.New("CreateContainerError")
	// ErrInvalidImageName is returned when a container's image reference does not parse.
	ErrInvalidImageName = errors.New("InvalidImageName")
	// ErrRunContainer is returned when the runtime's StartContainer call failed; the container
	// exists and has exited (containerd's StartError, exit code 128).
	ErrRunContainer = errors.New("RunContainerError")
	// ErrCreatePodSandbox is returned when the runtime's RunPodSandbox call failed.
	ErrCreatePodSandbox = errors.New("CreatePodSandboxError")
)

// Result is what a runtime call that blocks in the kubelet reports besides its error.
type Result struct {
	// Done is the instant the kubelet's blocking call would have returned: after the sequential
	// sandbox, pull, create and start steps of a SyncPod, or when the last container of a KillPod
	// stopped.
	Done time.Time
}

// IsRestartableInitContainer reports whether c is a sidecar: an init container whose own restart
// policy is Always.
func IsRestartableInitContainer(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// ShouldContainerBeRestarted is the kubelet's rule for a container that is not running: start it
// when it never ran or its state is unknown, keep a sidecar running whatever the pod's policy, and
// otherwise follow the pod's restart policy. A pod being deleted restarts nothing.
func ShouldContainerBeRestarted(container *v1.Container, pod *v1.Pod, status *PodStatus) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	cs := status.FindContainerStatusByName(container.Name)
	switch {
	case cs == nil:
		return true
	case cs.State == ContainerStateRunning:
		return false
	case cs.State == ContainerStateUnknown, cs.State == ContainerStateCreated:
		return true
	case IsRestartableInitContainer(container):
		return true
	case pod.Spec.RestartPolicy == v1.RestartPolicyNever:
		return false
	case pod.Spec.RestartPolicy == v1.RestartPolicyOnFailure && cs.ExitCode == 0:
		return false
	}
	return true
}

// ConvertPodStatusToRunningPod returns the running containers and every sandbox of status, as the
// pod a kill stops. A nil status gives an empty pod.
func ConvertPodStatusToRunningPod(status *PodStatus) *Pod {
	p := &Pod{}
	if status == nil {
		return p
	}
	p.ID, p.Name, p.Namespace = status.UID, status.Name, status.Namespace
	for _, c := range status.ContainerStatuses {
		if c.State == ContainerStateRunning {
			p.Containers = append(p.Containers, c)
		}
	}
	p.Sandboxes = append(p.Sandboxes, status.Sandboxes...)
	return p
}

// StartError is a failed start of one container with the message the kubelet shows as the
// container's Waiting message; Err is the reason (ErrRunContainer, ErrInvalidImageName,
// ErrCreateContainerConfig...).
type StartError struct {
	Container string
	Message   string
	Err       error
	// Cause is the error behind the message, if any.
	Cause error
}

func (e *StartError) Error() string {
	return "container " + e.Container + ": " + e.Message + ": " + e.Err.Error()
}

// Unwrap returns the reason and the cause, so that errors.Is(err, ErrRunContainer) works.
func (e *StartError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}
