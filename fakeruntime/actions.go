package fakeruntime

import (
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// podActions is what one SyncPod must do: the kubelet's podActions, minus ephemeral containers.
type podActions struct {
	// killPod stops every container and the sandbox before anything else.
	killPod bool
	// createSandbox makes a new sandbox with the given attempt number. sandboxID is the newest
	// sandbox the pod has, "" for a pod that never had one: SyncPod then records SandboxChanged.
	createSandbox bool
	attempt       int
	sandboxID     string
	// initStart lists the init containers to start, in spec order: the next regular init
	// container or sidecar, and sidecars to restart.
	initStart []*v1.Container
	// start lists the regular containers to start, in spec order.
	start []*v1.Container
	// kill lists the running containers to stop before the starts, in spec order (init
	// containers first): the kubelet's ContainersToKill.
	kill []containerKill
	// why says why the pod is killed, for the trace.
	why string
	// updates are the in-place resizes of running containers (ContainersToUpdate), and
	// resizePod is set when a container is restarted to take new resources
	// (UpdatePodResources): either runs the resize action.
	updates   resizeUpdates
	resizePod bool
}

// resizes reports whether SyncPod runs the resize action (doPodResizeAction).
func (a podActions) resizes() bool { return a.resizePod || !a.updates.empty() }

// containerKill is one running container SyncPod stops: the kubelet's containerToKillInfo.
type containerKill struct {
	id        string
	container *v1.Container
	// message is the Killing event's message; reason is the kubelet's containerKillReason.
	message, reason string
}

func (a podActions) empty() bool {
	return !a.killPod && !a.createSandbox && len(a.initStart) == 0 && len(a.start) == 0 && len(a.kill) == 0 && !a.resizes()
}

// String summarises the actions for the trace, for example "kill sandbox(attempt=1) init=setup".
func (a podActions) String() string {
	// One string built in place: the sync trace of every SyncPod with something to do carries
	// it. The parts, each joined to the last by a space, as a join of them would be.
	var b strings.Builder
	b.Grow(64)
	part := func(s string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	names := func(open string, cs []*v1.Container, sep byte, close string) {
		part(open)
		for i, c := range cs {
			if i > 0 {
				b.WriteByte(sep)
			}
			b.WriteString(c.Name)
		}
		b.WriteString(close)
	}
	if a.killPod {
		part("kill")
	}
	if a.createSandbox {
		part("sandbox(attempt=")
		b.WriteString(strconv.Itoa(a.attempt))
		b.WriteByte(')')
	}
	if len(a.kill) > 0 {
		part("killContainers=[")
		for i, k := range a.kill {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(k.container.Name)
		}
		b.WriteByte(']')
	}
	if len(a.initStart) > 0 {
		names("init=", a.initStart, ',', "")
	}
	if r := a.updates.String(); r != "" {
		part(r)
	}
	if len(a.start) > 0 {
		names("start=[", a.start, ' ', "]")
	}
	return b.String()
}

// Kill reasons, the kubelet's containerKillReason values. A kill for a failed liveness or startup
// probe takes the probe's own terminationGracePeriodSeconds (containerGracePeriod).
const (
	reasonUnknown             = "Unknown"
	reasonFailedPostStartHook = "FailedPostStartHook"
	reasonStartupProbe        = "StartupProbe"
	reasonLivenessProbe       = "LivenessProbe"
)

// computePodActions decides what SyncPod does, from the pod's spec and the status the caller read
// from the pod cache: the kubelet's computePodActions with computeInitContainerActions. probes are
// the liveness and startup results managers; nil has none.
func (r *Runtime) computePodActions(pod *v1.Pod, status *kubecontainer.PodStatus, probes kubecontainer.ProbeResults) podActions {
	create, attempt, sandboxID := sandboxChanged(status)
	acts := podActions{killPod: create, createSandbox: create, attempt: attempt, sandboxID: sandboxID}
	if create {
		return sandboxActions(pod, status, acts)
	}

	initialized := r.computeInitContainerActions(pod, status, &acts, probes)
	if acts.killPod || !initialized {
		return acts
	}

	keep := 0
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cs := status.FindContainerStatusByName(c.Name)
		if cs == nil || cs.State != kubecontainer.ContainerStateRunning {
			if kubecontainer.ShouldContainerBeRestarted(c, pod, status) {
				acts.start = append(acts.start, c)
				if cs != nil && cs.State == kubecontainer.ContainerStateUnknown {
					acts.kill = append(acts.kill, containerKill{id: cs.ID, container: c, reason: reasonUnknown,
						message: fmt.Sprintf("Container is in %q state, try killing it before restart", cs.State)})
				}
			}
			continue
		}
		if cs.Hash != r.containerHash(c) {
			// A new image restarts the container whatever the restart policy: the spec asked for it.
			acts.kill = append(acts.kill, containerKill{id: cs.ID, container: c,
				message: fmt.Sprintf("Container %s definition changed, will be restarted", c.Name)})
			acts.start = append(acts.start, c)
			continue
		}
		k, failed := probeKill(c, cs, probes)
		if !failed {
			if !r.resizeAction(pod, c, cs, &acts) {
				// Restarted to take its new resources, whatever the restart policy.
				acts.start = append(acts.start, c)
				continue
			}
			keep++
			continue
		}
		if restartOnProbeFailure(pod, c) {
			k.message += ", will be restarted"
			acts.start = append(acts.start, c)
		}
		acts.kill = append(acts.kill, k)
	}
	if keep == 0 && len(acts.start) == 0 {
		acts.killPod = true
		acts.why = "all containers dead"
		if len(acts.kill) > 0 {
			// The last running container failed its probe and will not be restarted: the whole
			// pod is stopped (KillPod), with the generic Killing message and the pod's grace.
			acts.why = "no container to keep"
			acts.kill = nil
		}
		// Sidecars alone do not keep a pod alive: once the regular containers are done for good
		// they are stopped, not restarted.
		acts.initStart = nil
	}
	return acts
}

// probeKill decides whether the running main container cs must be stopped because its liveness,
// else its startup, result is Failure, with the kubelet's message and kill reason.
func probeKill(c *v1.Container, cs *kubecontainer.ContainerStatus, probes kubecontainer.ProbeResults) (containerKill, bool) {
	switch {
	case probes == nil:
	case probes.LivenessFailed(cs.ID):
		return containerKill{id: cs.ID, container: c, reason: reasonLivenessProbe,
			message: fmt.Sprintf("Container %s failed liveness probe", c.Name)}, true
	case probes.StartupFailed(cs.ID):
		return containerKill{id: cs.ID, container: c, reason: reasonStartupProbe,
			message: fmt.Sprintf("Container %s failed startup probe", c.Name)}, true
	}
	return containerKill{}, false
}

// restartOnProbeFailure is whether a main container killed for a probe failure is started again
// in the same sync: unless the pod's restartPolicy is Never, or (ContainerRestartRules) the
// container's own restartPolicy says otherwise.
func restartOnProbeFailure(pod *v1.Pod, c *v1.Container) bool {
	if c.RestartPolicy != nil {
		return *c.RestartPolicy != v1.ContainerRestartPolicyNever
	}
	return pod.Spec.RestartPolicy != v1.RestartPolicyNever
}

// sandboxActions is computePodActions for a pod whose sandbox must be (re)created: everything is
// killed and initialization runs again, unless the pod has nothing left to run.
func sandboxActions(pod *v1.Pod, status *kubecontainer.PodStatus, acts podActions) podActions {
	acts.why = "sandbox changed"
	if pod.Spec.RestartPolicy == v1.RestartPolicyNever && acts.attempt != 0 && len(status.ContainerStatuses) != 0 {
		// A Never pod that already ran is not run again in a new sandbox; only stop what is left.
		acts.createSandbox = false
		return acts
	}
	var start []*v1.Container
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		runOnce := pod.Spec.RestartPolicy == v1.RestartPolicyOnFailure
		if c.RestartPolicy != nil {
			runOnce = *c.RestartPolicy == v1.ContainerRestartPolicyOnFailure
		}
		if runOnce && containerSucceeded(c, status) {
			continue
		}
		start = append(start, c)
	}
	if len(start) == 0 && anyRegularContainerCreated(pod, status) {
		acts.createSandbox = false
		return acts
	}
	if len(pod.Spec.InitContainers) > 0 {
		acts.initStart = []*v1.Container{&pod.Spec.InitContainers[0]}
		return acts
	}
	acts.start = start
	return acts
}

// SidecarStartup is what the startup probe says of a running sidecar: whether the next init
// container may start.
type SidecarStartup int

const (
	// SidecarStarted lets the next init container start.
	SidecarStarted SidecarStartup = iota
	// SidecarStartupPending makes initialization wait: no startup result yet, or Unknown.
	SidecarStartupPending
	// SidecarStartupFailed kills the sidecar ("Init container <name> failed startup probe") and
	// starts it again.
	SidecarStartupFailed
)

// sidecarStarted says whether the running sidecar c (instance id) counts as started: the
// kubelet's startupManager lookup in computeInitContainerActions. Without a startup probe a
// running sidecar is started; with one, Options.SidecarStartup answers, and without that hook
// the probe is taken to have passed (the default of a simulator whose probes succeed). A sidecar
// with a postStart hook is only seen running by a sync after the hook returned, because the
// hook blocks the sync that started it.
func (r *Runtime) sidecarStarted(c *v1.Container, id string, probes kubecontainer.ProbeResults) SidecarStartup {
	switch {
	case c.StartupProbe == nil:
		return SidecarStarted
	case probes != nil:
		// The kubelet's startupManager: Success starts the next init container, Failure
		// restarts the sidecar, no result or Unknown waits.
		if probes.StartupFailed(id) {
			return SidecarStartupFailed
		}
		if probes.StartupSucceeded(id) {
			return SidecarStarted
		}
		return SidecarStartupPending
	case r.sidecarStartup == nil:
		return SidecarStarted
	}
	return r.sidecarStartup(id)
}

// computeInitContainerActions adds what the init containers need to acts and reports whether the
// pod is initialized: the kubelet's computeInitContainerActions. Init containers are scanned last
// to first; the newest one that ran marks every earlier one as done. Regular init containers run
// once each, in order; a sidecar starts the next init container once it is started, and is
// started again whenever it is not running, whatever the pod's restartPolicy.
func (r *Runtime) computeInitContainerActions(pod *v1.Pod, status *kubecontainer.PodStatus, acts *podActions, probes kubecontainer.ProbeResults) bool {
	inits := pod.Spec.InitContainers
	if len(inits) == 0 {
		return true
	}
	// A created or running regular container means initialization finished once, even if the
	// init containers have been removed since. An exited one does not: after a node reboot every
	// container is exited and the new sandbox must initialize again.
	initialized := false
	for i := range pod.Spec.Containers {
		if cs := status.FindContainerStatusByName(pod.Spec.Containers[i].Name); cs != nil &&
			(cs.State == kubecontainer.ContainerStateCreated || cs.State == kubecontainer.ContainerStateRunning) {
			initialized = true
			break
		}
	}
	previouslyInitialized := initialized
	var start []*v1.Container // in reverse spec order
	for i := len(inits) - 1; i >= 0; i-- {
		c := &inits[i]
		sidecar := kubecontainer.IsRestartableInitContainer(c)
		cs := status.FindContainerStatusByName(c.Name)
		if cs == nil {
			if previouslyInitialized && sidecar {
				start = append(start, c)
			}
			continue
		}
		if previouslyInitialized && !sidecar {
			continue
		}
		switch cs.State {
		case kubecontainer.ContainerStateCreated:
			start = append(start, c)
		case kubecontainer.ContainerStateRunning:
			if !sidecar {
				break
			}
			switch r.sidecarStarted(c, cs.ID, probes) {
			case SidecarStartupPending:
				goto next
			case SidecarStartupFailed:
				acts.kill = append(acts.kill, containerKill{id: cs.ID, container: c, reason: reasonStartupProbe,
					message: fmt.Sprintf("Init container %s failed startup probe", c.Name)})
				start = append(start, c)
				goto next
			}
			if i == len(inits)-1 {
				initialized = true
			} else if !previouslyInitialized {
				start = append(start, &inits[i+1])
			}
			switch {
			case cs.Hash != r.containerHash(c):
				acts.kill = append(acts.kill, containerKill{id: cs.ID, container: c,
					message: fmt.Sprintf("Init container %s definition changed", c.Name)})
				start = append(start, c)
			case c.LivenessProbe != nil && probes != nil && !probes.LivenessKnown(cs.ID):
				// A sidecar with a liveness probe not run yet waits for it: its resize is only
				// looked at once the probe has a result.
			case probes != nil && probes.LivenessFailed(cs.ID):
				// A sidecar that failed its liveness probe is always restarted.
				acts.kill = append(acts.kill, containerKill{id: cs.ID, container: c, reason: reasonLivenessProbe,
					message: fmt.Sprintf("Init container %s failed liveness probe", c.Name)})
				start = append(start, c)
			case !r.resizeAction(pod, c, cs, acts):
				start = append(start, c)
			}
		case kubecontainer.ContainerStateExited:
			if sidecar {
				start = append(start, c)
				break
			}
			if initContainerFailed(cs) {
				if !kubecontainer.ShouldContainerBeRestarted(c, pod, status) {
					acts.killPod = true
					acts.why = "init container " + c.Name + " failed"
					acts.initStart = nil
					return false
				}
				start = append(start, c)
				break
			}
			if i == len(inits)-1 {
				initialized = true
			} else {
				start = append(start, &inits[i+1])
			}
		default: // unknown
			if !sidecar && !restartsUnknown(c, pod) {
				acts.killPod = true
				acts.why = "init container " + c.Name + " failed"
				acts.initStart = nil
				return false
			}
			kind := "Init container"
			acts.kill = append(acts.kill, containerKill{id: cs.ID, container: c, reason: reasonUnknown,
				message: fmt.Sprintf("%s is in %q state, try killing it before restart", kind, cs.State)})
			start = append(start, c)
		}
	next:
		previouslyInitialized = true
	}
	if !previouslyInitialized {
		start = append(start, &inits[0])
	}
	for i := len(start) - 1; i >= 0; i-- {
		acts.initStart = append(acts.initStart, start[i])
	}
	// The scan ran last to first; kills go in spec order like the starts.
	for i, j := 0, len(acts.kill)-1; i < j; i, j = i+1, j-1 {
		acts.kill[i], acts.kill[j] = acts.kill[j], acts.kill[i]
	}
	return initialized
}

// restartsUnknown is whether a regular init container in an unknown state is tried again: its
// own restartPolicy if it has one, else the pod's (anything but Never).
func restartsUnknown(c *v1.Container, pod *v1.Pod) bool {
	if c.RestartPolicy != nil {
		return *c.RestartPolicy != v1.ContainerRestartPolicyNever
	}
	return pod.Spec.RestartPolicy != v1.RestartPolicyNever
}

// sandboxChanged reports whether a new sandbox is needed, its attempt number and the newest
// sandbox's ID ("" when there is none): when there is none, when more than one is ready, or when
// the newest is not ready. The kubelet's PodSandboxChanged; the fake has no network, so its
// namespace and IP checks never fire.
func sandboxChanged(status *kubecontainer.PodStatus) (bool, int, string) {
	if len(status.Sandboxes) == 0 {
		return true, 0, ""
	}
	ready := 0
	for _, s := range status.Sandboxes {
		if s.State == kubecontainer.SandboxReady {
			ready++
		}
	}
	newest := status.Sandboxes[0]
	if ready > 1 || newest.State != kubecontainer.SandboxReady {
		return true, newest.Attempt + 1, newest.ID
	}
	return false, newest.Attempt, newest.ID
}

// containerSucceeded reports whether the newest instance of c exited 0.
func containerSucceeded(c *v1.Container, status *kubecontainer.PodStatus) bool {
	cs := status.FindContainerStatusByName(c.Name)
	return cs != nil && cs.State == kubecontainer.ContainerStateExited && cs.ExitCode == 0
}

// anyRegularContainerCreated reports whether a regular container was ever created in the runtime
// (created, running or exited): the kubelet's hasAnyRegularContainerCreated.
func anyRegularContainerCreated(pod *v1.Pod, status *kubecontainer.PodStatus) bool {
	for i := range pod.Spec.Containers {
		cs := status.FindContainerStatusByName(pod.Spec.Containers[i].Name)
		if cs != nil && cs.State != kubecontainer.ContainerStateUnknown {
			return true
		}
	}
	return false
}

// initContainerFailed reports whether an init container instance failed: exited non-zero, or in
// an unknown state.
func initContainerFailed(cs *kubecontainer.ContainerStatus) bool {
	if cs.Reason == ReasonOOMKilled {
		return true
	}
	if cs.State == kubecontainer.ContainerStateExited && cs.ExitCode != 0 {
		return true
	}
	return cs.State == kubecontainer.ContainerStateUnknown
}
