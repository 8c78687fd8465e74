package fakeruntime

import (
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// podActions is what one SyncPod must do: the kubelet's podActions, minus ephemeral containers,
// resizes and the kills of running containers whose spec changed.
type podActions struct {
	// killPod stops every container and the sandbox before anything else.
	killPod bool
	// createSandbox makes a new sandbox with the given attempt number.
	createSandbox bool
	attempt       int
	// nextInit is the init container to start, if initialization is not done.
	nextInit *v1.Container
	// kill lists the running containers to stop before the starts, in spec order: those whose
	// liveness or startup probe failed.
	kill []containerKill
	// start lists the regular containers to start, in spec order.
	start []*v1.Container
	// why says why the pod is killed, for the trace.
	why string
}

func (a podActions) empty() bool {
	return !a.killPod && !a.createSandbox && a.nextInit == nil && len(a.start) == 0 && len(a.kill) == 0
}

// containerKill is one entry of the kubelet's ContainersToKill.
type containerKill struct {
	id        string
	container *v1.Container
	// message is the Killing event's message; reason is the kubelet's containerKillReason.
	message string
	reason  killReason
}

// killReason is the kubelet's containerKillReason: why one container is stopped.
type killReason string

const (
	reasonLivenessProbe killReason = "LivenessProbe"
	reasonStartupProbe  killReason = "StartupProbe"
)

// String summarises the actions for the trace, for example "kill sandbox(attempt=1) init=setup".
func (a podActions) String() string {
	var parts []string
	if a.killPod {
		parts = append(parts, "kill")
	}
	if a.createSandbox {
		parts = append(parts, "sandbox(attempt="+strconv.Itoa(a.attempt)+")")
	}
	if a.nextInit != nil {
		parts = append(parts, "init="+a.nextInit.Name)
	}
	if len(a.kill) > 0 {
		names := make([]string, len(a.kill))
		for i, k := range a.kill {
			names[i] = k.container.Name
		}
		parts = append(parts, "killContainers=["+strings.Join(names, " ")+"]")
	}
	if len(a.start) > 0 {
		names := make([]string, len(a.start))
		for i, c := range a.start {
			names[i] = c.Name
		}
		parts = append(parts, "start=["+strings.Join(names, " ")+"]")
	}
	return strings.Join(parts, " ")
}

// computePodActions decides what SyncPod does, from the pod's spec and the status the caller read
// from the pod cache: the kubelet's computePodActions for pods without sidecars. probes are the
// liveness and startup results; nil has none.
func computePodActions(pod *v1.Pod, status *kubecontainer.PodStatus, probes kubecontainer.ProbeResults) podActions {
	create, attempt := sandboxChanged(status)
	acts := podActions{killPod: create, createSandbox: create, attempt: attempt}
	if create {
		acts.why = "sandbox changed"
		if pod.Spec.RestartPolicy == v1.RestartPolicyNever && attempt != 0 && len(status.ContainerStatuses) != 0 {
			// A Never pod that already ran is not run again in a new sandbox; only stop what is left.
			acts.createSandbox = false
			return acts
		}
		var start []*v1.Container
		for i := range pod.Spec.Containers {
			c := &pod.Spec.Containers[i]
			if pod.Spec.RestartPolicy == v1.RestartPolicyOnFailure && containerSucceeded(c, status) {
				continue
			}
			start = append(start, c)
		}
		if len(start) == 0 {
			if _, _, initialized := nextInitContainer(pod, status); initialized {
				acts.createSandbox = false
				return acts
			}
		}
		if len(pod.Spec.InitContainers) > 0 {
			acts.nextInit = &pod.Spec.InitContainers[0]
			return acts
		}
		acts.start = start
		return acts
	}

	last, next, done := nextInitContainer(pod, status)
	if !done {
		if next != nil {
			if last != nil && initContainerFailed(last) && pod.Spec.RestartPolicy == v1.RestartPolicyNever {
				acts.killPod = true
				acts.why = "init container " + next.Name + " failed"
			} else {
				acts.nextInit = next
			}
		}
		return acts
	}

	keep := 0
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cs := status.FindContainerStatusByName(c.Name)
		if cs == nil || cs.State != kubecontainer.ContainerStateRunning {
			if kubecontainer.ShouldContainerBeRestarted(c, pod, status) {
				acts.start = append(acts.start, c)
			}
			continue
		}
		if k, ok := probeKill(pod, c, cs, probes); ok {
			if restartOnProbeFailure(pod, c) {
				k.message += ", will be restarted"
				acts.start = append(acts.start, c)
			}
			acts.kill = append(acts.kill, k)
			continue
		}
		keep++
	}
	if keep == 0 && len(acts.start) == 0 {
		acts.killPod = true
		acts.why = "all containers dead"
		if len(acts.kill) > 0 {
			// The last running container failed its probe and will not be restarted: the whole
			// pod is stopped, with the generic Killing message and the pod's grace.
			acts.why = "no container to keep"
			acts.kill = nil
		}
	}
	return acts
}

// probeKill decides whether the running container cs must be stopped because its liveness, else
// its startup, result is Failure.
func probeKill(pod *v1.Pod, c *v1.Container, cs *kubecontainer.ContainerStatus, probes kubecontainer.ProbeResults) (containerKill, bool) {
	if probes == nil {
		return containerKill{}, false
	}
	switch {
	case probes.LivenessFailed(cs.ID):
		return containerKill{id: cs.ID, container: c, message: "Container " + c.Name + " failed liveness probe", reason: reasonLivenessProbe}, true
	case probes.StartupFailed(cs.ID):
		return containerKill{id: cs.ID, container: c, message: "Container " + c.Name + " failed startup probe", reason: reasonStartupProbe}, true
	}
	return containerKill{}, false
}

// restartOnProbeFailure is whether a container killed for a probe failure is started again in the
// same sync: unless the pod's restartPolicy is Never, or (ContainerRestartRules) the container's
// own restartPolicy says otherwise.
func restartOnProbeFailure(pod *v1.Pod, c *v1.Container) bool {
	if c.RestartPolicy != nil {
		return *c.RestartPolicy != v1.ContainerRestartPolicyNever
	}
	return pod.Spec.RestartPolicy != v1.RestartPolicyNever
}

// sandboxChanged reports whether a new sandbox is needed, and its attempt number: when there is
// none, when more than one is ready, or when the newest is not ready. The fake has no network, so
// the kubelet's namespace and IP checks never fire.
func sandboxChanged(status *kubecontainer.PodStatus) (bool, int) {
	if len(status.Sandboxes) == 0 {
		return true, 0
	}
	ready := 0
	for _, s := range status.Sandboxes {
		if s.State == kubecontainer.SandboxReady {
			ready++
		}
	}
	newest := status.Sandboxes[0]
	if ready > 1 || newest.State != kubecontainer.SandboxReady {
		return true, newest.Attempt + 1
	}
	return false, newest.Attempt
}

// containerSucceeded reports whether the newest instance of c exited 0.
func containerSucceeded(c *v1.Container, status *kubecontainer.PodStatus) bool {
	cs := status.FindContainerStatusByName(c.Name)
	if cs == nil || cs.State == kubecontainer.ContainerStateRunning {
		return false
	}
	return cs.ExitCode == 0
}

// nextInitContainer finds the init container to run next: the kubelet's
// findNextInitContainerToRun. It returns the status of the last failed init container (if any),
// the next one to start, and whether initialization is done.
func nextInitContainer(pod *v1.Pod, status *kubecontainer.PodStatus) (*kubecontainer.ContainerStatus, *v1.Container, bool) {
	inits := pod.Spec.InitContainers
	if len(inits) == 0 {
		return nil, nil, true
	}
	// A running regular container means initialization finished once, even if the init
	// containers have been removed since.
	for i := range pod.Spec.Containers {
		if cs := status.FindContainerStatusByName(pod.Spec.Containers[i].Name); cs != nil && cs.State == kubecontainer.ContainerStateRunning {
			return nil, nil, true
		}
	}
	for i := len(inits) - 1; i >= 0; i-- {
		if cs := status.FindContainerStatusByName(inits[i].Name); cs != nil && initContainerFailed(cs) {
			return cs, &inits[i], false
		}
	}
	for i := len(inits) - 1; i >= 0; i-- {
		cs := status.FindContainerStatusByName(inits[i].Name)
		if cs == nil {
			continue
		}
		if cs.State == kubecontainer.ContainerStateRunning {
			return nil, nil, false
		}
		if cs.State == kubecontainer.ContainerStateExited {
			if i == len(inits)-1 {
				return nil, nil, true
			}
			return nil, &inits[i+1], false
		}
	}
	return nil, &inits[0], false
}

// initContainerFailed reports whether an init container instance failed: exited non-zero, or in
// an unknown state.
func initContainerFailed(cs *kubecontainer.ContainerStatus) bool {
	if cs.Reason == "OOMKilled" {
		return true
	}
	if cs.State == kubecontainer.ContainerStateExited && cs.ExitCode != 0 {
		return true
	}
	return cs.State == kubecontainer.ContainerStateUnknown
}
