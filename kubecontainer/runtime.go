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
	// ErrPostStartHook is returned when a container's postStart hook failed and the container was
	// killed (the kubelet's kuberuntime.ErrPostStartHook); the API shows PostStartHookError.
	ErrPostStartHook = errors.New("PostStartHookError")
)

// PostStartHookError is the error of a start whose postStart hook failed. Message is the
// handler's message, which the kubelet shows as the Waiting message.
type PostStartHookError struct {
	Container string
	Message   string
}

func (e *PostStartHookError) Error() string {
	return "container " + e.Container + " failed its postStart hook: " + e.Message
}

// Is makes errors.Is(err, ErrPostStartHook) hold.
func (e *PostStartHookError) Is(target error) bool { return target == ErrPostStartHook }

// Result is what a runtime call that blocks in the kubelet reports besides its error.
type Result struct {
	// Done is the instant the kubelet's blocking call would have returned: after the sequential
	// sandbox, pull, create and start steps of a SyncPod, or when the last container of a KillPod
	// stopped.
	Done time.Time
	// Resized is set when a SyncPod ran the pod's resize action (doPodResizeAction): the kubelet
	// then has the PLEG reinspect the pod at its next relist (a watch condition), whatever the
	// outcome, so that the resize's end is seen.
	Resized bool
}

// IsRestartableInitContainer reports whether c is a sidecar: an init container whose own restart
// policy is Always.
func IsRestartableInitContainer(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// ShouldContainerBeRestarted is the kubelet's rule for a container that is not running: start it
// when it never ran or its state is unknown or created, and otherwise ask ContainerShouldRestart
// with the exit code of its newest instance (so a sidecar restarts whatever the pod's policy). A
// pod being deleted restarts nothing. It is the one place the sync side decides a restart: the
// runtime's computePodActions and the status's waiting reasons both call it.
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
	}
	return ContainerShouldRestart(container, &pod.Spec, int32(cs.ExitCode))
}

// ContainerShouldRestart is the v1.35 rule (podutil.ContainerShouldRestart, with the
// ContainerRestartRules gate on, its v1.35 default) for whether a container that exited with
// exitCode runs again: the first of its restartPolicyRules that matches the exit code, else its
// own restartPolicy (Always for a sidecar), else the pod's restartPolicy. getPhase asks the same
// question of the API statuses, so the two cannot disagree.
func ContainerShouldRestart(c *v1.Container, spec *v1.PodSpec, exitCode int32) bool {
	if c.RestartPolicy != nil {
		if rule, ok := matchingRestartRule(c, exitCode); ok && rule.Action == v1.ContainerRestartRuleActionRestart {
			return true
		}
		switch *c.RestartPolicy {
		case v1.ContainerRestartPolicyAlways:
			return true
		case v1.ContainerRestartPolicyOnFailure:
			return exitCode != 0
		case v1.ContainerRestartPolicyNever:
			return false
		}
	}
	switch spec.RestartPolicy {
	case v1.RestartPolicyOnFailure:
		return exitCode != 0
	case v1.RestartPolicyNever:
		return false
	}
	return true
}

// matchingRestartRule returns the first of c's restart rules whose exit-code condition holds.
func matchingRestartRule(c *v1.Container, exitCode int32) (v1.ContainerRestartRule, bool) {
	for _, rule := range c.RestartPolicyRules {
		if rule.ExitCodes == nil {
			continue
		}
		in := false
		for _, v := range rule.ExitCodes.Values {
			if v == exitCode {
				in = true
			}
		}
		switch rule.ExitCodes.Operator {
		case v1.ContainerRestartRuleOnExitCodesOpIn:
			if in {
				return rule, true
			}
		case v1.ContainerRestartRuleOnExitCodesOpNotIn:
			if !in {
				return rule, true
			}
		}
	}
	return v1.ContainerRestartRule{}, false
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

// HasAnyActiveRegularContainerStarted reports whether a regular container (not an init
// container) was created in the pod's newest sandbox: the kubelet's function of that name, which
// looks at the containers of the active sandbox. The runtime's records carry no sandbox ID, so a
// container counts as the newest sandbox's when it was created at or after that sandbox.
func HasAnyActiveRegularContainerStarted(spec *v1.PodSpec, status *PodStatus) bool {
	if status == nil || len(status.Sandboxes) == 0 {
		return false
	}
	newest := status.Sandboxes[0].CreatedAt
	for _, sb := range status.Sandboxes[1:] {
		if sb.CreatedAt.After(newest) {
			newest = sb.CreatedAt
		}
	}
	for _, cs := range status.ContainerStatuses {
		if cs.CreatedAt.Before(newest) {
			continue
		}
		for i := range spec.Containers {
			if spec.Containers[i].Name == cs.Name {
				return true
			}
		}
	}
	return false
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
