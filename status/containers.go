package status

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// Waiting reasons the kubelet gives a container that has not started, and the reason and message
// of a container whose end nobody saw.
const (
	reasonContainerCreating = "ContainerCreating"
	reasonPodInitializing   = "PodInitializing"
	reasonStatusUnknown     = "ContainerStatusUnknown"
	reasonCompleted         = "Completed"
	reasonError             = "Error"

	msgNotLocatedTerminated = "The container could not be located when the pod was terminated"
	msgNotLocatedDeleted    = "The container could not be located when the pod was deleted.  The container used to be Running"
)

// exitCodeUnknown is the exit code the kubelet reports for a container whose end it did not see.
const exitCodeUnknown = 137

// Reason is why the runtime last failed to start a container: an entry of the kubelet's
// reasonCache, filled from the results of the last runtime sync. A container that has no running
// instance and should be restarted shows Waiting with this reason and message.
type Reason struct {
	// Reason is the failure class, such as "CrashLoopBackOff", "ErrImagePull" or
	// "ImagePullBackOff".
	Reason string
	// Message explains it, such as "back-off 10s restarting failed container=app pod=web_default".
	Message string
}

// ReasonFromError turns a runtime start error into a Reason. The kubecontainer back-off sentinels
// give their own names; any other error gives its text as the reason.
func ReasonFromError(err error) Reason {
	switch {
	case errors.Is(err, kubecontainer.ErrCrashLoopBackOff):
		return Reason{Reason: kubecontainer.ErrCrashLoopBackOff.Error(), Message: err.Error()}
	case errors.Is(err, kubecontainer.ErrImagePullBackOff):
		return Reason{Reason: kubecontainer.ErrImagePullBackOff.Error(), Message: err.Error()}
	}
	return Reason{Reason: err.Error()}
}

// convertContainerStatuses builds the API statuses of containers (the regular or the init
// containers of pod) from the runtime's view and the previous API statuses: the kubelet's
// convertToAPIContainerStatuses.
//
// The kubelet builds a map of pointers to statuses and copies them into the list it returns; here
// each container's status is built in place in the list returned (a slot a name: the first
// container of that name), and the previous statuses are searched rather than mapped, which
// saves an allocation a container and a map a call. The statuses are the same.
//
// supportsRRO is whether the pod's runtime handler supports recursive read-only mounts (the
// kubelet's runtimeClassSupportsRecursiveReadOnlyMounts): it decides the recursiveReadOnly of a
// read-only mount that asks for IfPossible. The list is built in buffers' array when buffers is
// set (GenerateOptions.Buffers).
func convertContainerStatuses(pod *v1.Pod, rs *kubecontainer.PodStatus, previous []v1.ContainerStatus,
	containers []v1.Container, isInit bool, reasons map[string]Reason, supportsRRO bool, buffers *Buffers) []v1.ContainerStatus {
	hasInit := len(pod.Spec.InitContainers) > 0
	defaultReason := reasonContainerCreating
	if hasInit {
		defaultReason = reasonPodInitializing
	}

	statuses := buffers.containerList(isInit, len(containers))
	unique := true
	for i, c := range containers {
		// A name repeated (which validation refuses) shares its first container's slot, where
		// the last of them writes its default, as into the kubelet's map by name.
		k := slotOf(containers, c.Name)
		unique = unique && k == i
		if rs.FindContainerStatusByName(c.Name) != nil {
			// The newest instance replaces the default status below, whole: the slot stays
			// empty until then (the kubelet builds the default and drops it; at every sync of
			// a running container, two allocations and a copy of the previous status).
			continue
		}
		s := &statuses[k]
		*s = v1.ContainerStatus{
			Name:  c.Name,
			Image: c.Image,
			State: v1.ContainerState{Waiting: buffers.waitingState(v1.ContainerStateWaiting{Reason: defaultReason})},
		}
		o := previousStatus(previous, c.Name)
		if o != nil && o.State.Terminated != nil {
			// The previous status replaces the default whole, mounts included.
			o.DeepCopyInto(s)
			continue
		}
		s.VolumeMounts = volumeMountStatuses(&containers[i], supportsRRO)
		if o != nil {
			s.RestartCount = o.RestartCount
			o.LastTerminationState.DeepCopyInto(&s.LastTerminationState)
		}
	}

	// A container that used to run and is gone from the runtime ended unseen: show it stopped, not
	// freshly waiting, so the pod does not fall back to Pending.
	for i, c := range containers {
		if slotOf(containers, c.Name) != i || rs.FindContainerStatusByName(c.Name) != nil {
			continue
		}
		o := previousStatus(previous, c.Name)
		if o == nil || o.State.Terminated != nil || o.State.Running == nil {
			continue
		}
		s := &statuses[i]
		if s.State.Waiting == nil || s.State.Waiting.Reason != defaultReason || s.LastTerminationState.Terminated != nil {
			continue
		}
		s.LastTerminationState.Terminated = &v1.ContainerStateTerminated{
			Reason:   reasonStatusUnknown,
			Message:  msgNotLocatedDeleted,
			ExitCode: exitCodeUnknown,
		}
		if pod.DeletionTimestamp == nil {
			s.RestartCount++
		}
	}

	// The newest instance gives the state, the one before it the last termination state. The
	// instances are only read: a single one (most pods' single container) needs no sorted copy.
	instances := rs.ContainerStatuses
	if len(instances) > 1 {
		instances = slices.Clone(instances)
		slices.SortStableFunc(instances, func(a, b kubecontainer.ContainerStatus) int { return b.CreatedAt.Compare(a.CreatedAt) })
	}
	seen := map[string]int{}
	for i := range instances {
		cs := &instances[i]
		k := slotOf(containers, cs.Name)
		if k < 0 || seen[cs.Name] >= 2 {
			continue
		}
		s := convertInstance(cs, previousStatus(previous, cs.Name), buffers)
		if seen[cs.Name] == 0 {
			statuses[k] = s
			setResources(&statuses[k], &containers[k], cs)
		} else {
			statuses[k].LastTerminationState = s.State
		}
		seen[cs.Name]++
	}

	// A container the runtime will start again shows why it has not started yet.
	for i := range containers {
		c := &containers[i]
		s := &statuses[slotOf(containers, c.Name)]
		if isInit {
			cs := rs.FindContainerStatusByName(c.Name)
			// Only an instance that exited 0 is done. One the runtime no longer has keeps its
			// default (v1.35 has no "assumed done once a regular container was created": that
			// came in v1.36).
			if cs != nil && cs.State == kubecontainer.ContainerStateExited && cs.ExitCode == 0 {
				continue
			}
		}
		if !kubecontainer.ShouldContainerBeRestarted(c, pod, rs) {
			continue
		}
		r, ok := reasons[c.Name]
		if !ok {
			continue
		}
		if s.State.Terminated != nil {
			s.LastTerminationState = s.State
		}
		s.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: r.Reason, Message: r.Message}}
	}

	if !unique {
		// Init containers listed in their order, a repeated name again with its status; regular
		// containers one a name.
		out := make([]v1.ContainerStatus, 0, len(containers))
		for i, c := range containers {
			k := slotOf(containers, c.Name)
			if isInit || k == i {
				out = append(out, statuses[k])
			}
		}
		statuses = out
	}
	if !isInit {
		// The names are unique: any sort gives the one order.
		slices.SortFunc(statuses, func(a, b v1.ContainerStatus) int { return strings.Compare(a.Name, b.Name) })
	}
	return statuses
}

// slotOf is the index of the first of containers named name, -1 for none.
func slotOf(containers []v1.Container, name string) int {
	for i := range containers {
		if containers[i].Name == name {
			return i
		}
	}
	return -1
}

// previousStatus is the last of the previous statuses named name, nil for none: the one a map of
// them by name would keep. It is only read.
func previousStatus(previous []v1.ContainerStatus, name string) *v1.ContainerStatus {
	for i := len(previous) - 1; i >= 0; i-- {
		if previous[i].Name == name {
			return &previous[i]
		}
	}
	return nil
}

// convertInstance converts one runtime container instance. The runtime does not know the names
// of the volumes it mounted, so the mounts are the previous status's (none without one), as the
// kubelet keeps them: unchanged for the container's life, so the slice is shared, not copied.
// A running state is buffers' (GenerateOptions.Buffers) when buffers is set.
func convertInstance(cs *kubecontainer.ContainerStatus, old *v1.ContainerStatus, buffers *Buffers) v1.ContainerStatus {
	id := kubecontainer.RuntimeScheme + cs.ID
	s := v1.ContainerStatus{
		Name:         cs.Name,
		RestartCount: int32(cs.RestartCount),
		Image:        cs.Image,
		ImageID:      cs.ImageRef,
		ContainerID:  id,
	}
	if old != nil {
		s.VolumeMounts = old.VolumeMounts
	}
	switch {
	case cs.State == kubecontainer.ContainerStateRunning:
		s.State.Running = buffers.runningState(v1.ContainerStateRunning{StartedAt: metav1.NewTime(cs.StartedAt)})
	case cs.State == kubecontainer.ContainerStateCreated:
		s.State.Waiting = &v1.ContainerStateWaiting{}
	case cs.State == kubecontainer.ContainerStateExited:
		reason := cs.Reason
		if reason == "" {
			// What containerd reports when nothing more specific (such as OOMKilled) is known.
			reason = reasonError
			if cs.ExitCode == 0 {
				reason = reasonCompleted
			}
		}
		s.State.Terminated = &v1.ContainerStateTerminated{
			ExitCode:    int32(cs.ExitCode),
			Reason:      reason,
			Message:     cs.Message,
			StartedAt:   metav1.NewTime(cs.StartedAt),
			FinishedAt:  metav1.NewTime(cs.FinishedAt),
			ContainerID: id,
		}
	case cs.State == kubecontainer.ContainerStateUnknown && old != nil && old.State.Running != nil:
		s.State.Terminated = &v1.ContainerStateTerminated{
			Reason:   reasonStatusUnknown,
			Message:  msgNotLocatedTerminated,
			ExitCode: exitCodeUnknown,
		}
		s.RestartCount = old.RestartCount + 1
	default:
		s.State.Waiting = &v1.ContainerStateWaiting{}
	}
	return s
}

// volumeMountStatuses lists the mounts of c as its status reports them, now that
// RecursiveReadOnlyMounts is GA and locked on: name, mount path and read-only of each, and for a
// read-only mount whether it was made recursively read-only (Disabled or Enabled, never
// IfPossible). A mount whose mode cannot be resolved is logged and reported Disabled. Nil for a
// container with no mounts.
func volumeMountStatuses(c *v1.Container, supportsRRO bool) []v1.VolumeMountStatus {
	if len(c.VolumeMounts) == 0 {
		return nil
	}
	out := make([]v1.VolumeMountStatus, len(c.VolumeMounts))
	for i := range c.VolumeMounts {
		m := &c.VolumeMounts[i]
		out[i] = v1.VolumeMountStatus{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly}
		if !m.ReadOnly {
			continue
		}
		mode := v1.RecursiveReadOnlyDisabled
		if rro, err := resolveRecursiveReadOnly(m, supportsRRO); err != nil {
			klog.TODO().Error(err, "failed to resolve recursive read-only mode", "mode", *m.RecursiveReadOnly)
		} else if rro {
			mode = v1.RecursiveReadOnlyEnabled
		}
		out[i].RecursiveReadOnly = &mode
	}
	return out
}

// resolveRecursiveReadOnly reports whether mount m is to be made recursively read-only on a
// runtime handler that does (supportsRRO) or does not support it, or why m's request cannot be
// met: the kubelet's resolveRecursiveReadOnly, which also refuses to start such a container.
func resolveRecursiveReadOnly(m *v1.VolumeMount, supportsRRO bool) (bool, error) {
	if m.RecursiveReadOnly == nil || *m.RecursiveReadOnly == v1.RecursiveReadOnlyDisabled {
		return false, nil
	}
	if !m.ReadOnly {
		return false, fmt.Errorf("volume %q requested recursive read-only mode, but it is not read-only", m.Name)
	}
	if m.MountPropagation != nil && *m.MountPropagation != v1.MountPropagationNone {
		return false, fmt.Errorf("volume %q requested recursive read-only mode, but it is not compatible with propagation %q",
			m.Name, *m.MountPropagation)
	}
	switch mode := *m.RecursiveReadOnly; mode {
	case v1.RecursiveReadOnlyIfPossible:
		return supportsRRO, nil
	case v1.RecursiveReadOnlyEnabled:
		if !supportsRRO {
			return false, fmt.Errorf("volume %q requested recursive read-only mode, but it is not supported by the runtime", m.Name)
		}
		return true, nil
	default:
		return false, fmt.Errorf("unknown recursive read-only mode %q", mode)
	}
}

// setStartedAndReady does what the kubelet's probe manager does to a fresh status when no probe
// has run: a running container has started, a started container is ready, and a regular init
// container is ready once it exited 0. Probes are not simulated, so every probe counts as passed.
func setStartedAndReady(pod *v1.Pod, s *v1.PodStatus) {
	for i := range s.ContainerStatuses {
		cs := &s.ContainerStatuses[i]
		started := cs.State.Running != nil
		cs.Started = &started
		if started {
			cs.Ready = true
		}
	}
	for i := range s.InitContainerStatuses {
		cs := &s.InitContainerStatuses[i]
		started := cs.State.Running != nil
		cs.Started = &started
		if i < len(pod.Spec.InitContainers) && !kubecontainer.IsRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			if cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0 {
				cs.Ready = true
			}
			continue
		}
		if started {
			cs.Ready = true
		}
	}
}

// containerByName returns the spec of the named container, or nil.
func containerByName(containers []v1.Container, name string) *v1.Container {
	for i := range containers {
		if containers[i].Name == name {
			return &containers[i]
		}
	}
	return nil
}

// setResources writes what the v1.35 kubelet reports of a container the runtime knows, now that
// in-place resize is GA (convertToAPIContainerStatuses' convertContainerStatusResources):
// allocatedResources, the allocated requests, and resources, the allocated requests and limits
// with, for a running instance, the cpu and memory the runtime says it gave it in their place
// (which differ from the allocated ones while a resize is being actuated). A container that asks
// for nothing still gets resources, empty: `resources: {}`, and no allocatedResources.
func setResources(s *v1.ContainerStatus, c *v1.Container, cs *kubecontainer.ContainerStatus) {
	if c == nil {
		return
	}
	s.Resources = c.Resources.DeepCopy()
	s.AllocatedResources = c.Resources.Requests.DeepCopy()
	if cs.State != kubecontainer.ContainerStateRunning || cs.Resources == nil {
		return
	}
	actual := cs.Resources
	if l := s.Resources.Limits; l != nil {
		// At or below the smallest cpu limit a cgroup takes (10m), the allocated value stays.
		if q := actual.CPULimit; q != nil && (q.MilliValue() > minMilliCPULimit || l.Cpu().MilliValue() > minMilliCPULimit) {
			l[v1.ResourceCPU] = q.DeepCopy()
		}
		if q := actual.MemoryLimit; q != nil {
			l[v1.ResourceMemory] = q.DeepCopy()
		}
	}
	if r := s.Resources.Requests; r != nil {
		// At or below the smallest cpu shares (2m), the allocated value stays.
		if q := actual.CPURequest; q != nil && (q.MilliValue() > minShares || r.Cpu().MilliValue() > minShares) {
			r[v1.ResourceCPU] = q.DeepCopy()
		}
		if q := actual.MemoryRequest; q != nil {
			r[v1.ResourceMemory] = q.DeepCopy()
		}
	}
}

// The kubelet's cm.MinMilliCPULimit and cm.MinShares.
const (
	minMilliCPULimit = 10
	minShares        = 2
)
