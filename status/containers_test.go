package status

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// convertContainerStatusesBefore is convertContainerStatuses as it was before it built the
// statuses in place (a map of pointers to statuses, copied into the list returned): the
// reference TestConvertContainerStatusesAsBefore holds it to.
func convertContainerStatusesBefore(pod *v1.Pod, rs *kubecontainer.PodStatus, previous []v1.ContainerStatus,
	containers []v1.Container, isInit bool, reasons map[string]Reason) []v1.ContainerStatus {
	hasInit := len(pod.Spec.InitContainers) > 0
	old := make(map[string]v1.ContainerStatus, len(previous))
	for _, s := range previous {
		old[s.Name] = s
	}
	defaultReason := reasonContainerCreating
	if hasInit {
		defaultReason = reasonPodInitializing
	}

	statuses := make(map[string]*v1.ContainerStatus, len(containers))
	for _, c := range containers {
		if rs.FindContainerStatusByName(c.Name) != nil {
			// The newest instance replaces the default status below, whole: only the key is
			// needed until then (the kubelet builds the default and drops it; at every sync of
			// a running container, two allocations and a copy of the previous status).
			statuses[c.Name] = nil
			continue
		}
		s := &v1.ContainerStatus{
			Name:  c.Name,
			Image: c.Image,
			State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: defaultReason}},
		}
		if o, ok := old[c.Name]; ok {
			if o.State.Terminated != nil {
				s = o.DeepCopy()
			} else {
				s.RestartCount = o.RestartCount
				s.LastTerminationState = *o.LastTerminationState.DeepCopy()
			}
		}
		statuses[c.Name] = s
	}

	// A container that used to run and is gone from the runtime ended unseen: show it stopped, not
	// freshly waiting, so the pod does not fall back to Pending.
	for _, c := range containers {
		if rs.FindContainerStatusByName(c.Name) != nil {
			continue
		}
		o, ok := old[c.Name]
		if !ok || o.State.Terminated != nil || o.State.Running == nil {
			continue
		}
		s := statuses[c.Name]
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
		if _, ok := statuses[cs.Name]; !ok || seen[cs.Name] >= 2 {
			continue
		}
		var o *v1.ContainerStatus
		if prev, ok := old[cs.Name]; ok {
			o = &prev
		}
		s := convertInstanceBefore(cs, o)
		if seen[cs.Name] == 0 {
			setResources(s, containerByName(containers, cs.Name), cs)
			statuses[cs.Name] = s
		} else {
			statuses[cs.Name].LastTerminationState = s.State
		}
		seen[cs.Name]++
	}

	// A container the runtime will start again shows why it has not started yet.
	for i := range containers {
		c := &containers[i]
		if isInit {
			cs := rs.FindContainerStatusByName(c.Name)
			if cs != nil && cs.State == kubecontainer.ContainerStateExited && cs.ExitCode == 0 {
				continue
			}
			if cs == nil && anyRegularContainerCreated(pod, rs) && !kubecontainer.IsRestartableInitContainer(c) && statuses[c.Name].State.Waiting != nil {
				statuses[c.Name].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
					Reason: reasonCompleted, Message: msgInitAssumedDone,
				}}
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
		s := statuses[c.Name]
		if s.State.Terminated != nil {
			s.LastTerminationState = s.State
		}
		s.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: r.Reason, Message: r.Message}}
	}

	out := make([]v1.ContainerStatus, 0, len(containers))
	if isInit {
		for _, c := range containers {
			out = append(out, *statuses[c.Name])
		}
		return out
	}
	for _, s := range statuses {
		out = append(out, *s)
	}
	// The names are the map's keys, so unique: any sort gives the one order.
	slices.SortFunc(out, func(a, b v1.ContainerStatus) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// convertInstanceBefore is convertInstance as it was.
func convertInstanceBefore(cs *kubecontainer.ContainerStatus, old *v1.ContainerStatus) *v1.ContainerStatus {
	id := containerIDPrefix + cs.ID
	s := &v1.ContainerStatus{
		Name:         cs.Name,
		RestartCount: int32(cs.RestartCount),
		Image:        cs.Image,
		ImageID:      imageID(cs.Image),
		ContainerID:  id,
	}
	switch {
	case cs.State == kubecontainer.ContainerStateRunning:
		s.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(cs.StartedAt)}
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

// randomContainerWorld makes a pod, the runtime's view of it, its previous API statuses and the
// reasons of its last sync, from a small universe of names (so that they collide, and now and
// then repeat in the spec, which validation would refuse), states and times.
func randomContainerWorld(r *rand.Rand) (*v1.Pod, *kubecontainer.PodStatus, v1.PodStatus, map[string]Reason) {
	names := []string{"a", "b", "c", "d", "e"}
	pick := func() string { return names[r.IntN(len(names))] }
	image := func() string { return []string{"busybox:1.36", "nginx:1.27", ""}[r.IntN(3)] }
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func() time.Time { return epoch.Add(time.Duration(r.IntN(5)) * time.Second) }
	container := func() v1.Container {
		c := v1.Container{Name: pick(), Image: image()}
		if r.IntN(3) == 0 {
			c.Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse(fmt.Sprintf("%dm", 100*(1+r.IntN(3))))}
		}
		return c
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"}}
	pod.Spec.RestartPolicy = []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}[r.IntN(3)]
	if r.IntN(6) == 0 {
		pod.DeletionTimestamp = &metav1.Time{Time: epoch}
	}
	for range 1 + r.IntN(3) {
		pod.Spec.Containers = append(pod.Spec.Containers, container())
	}
	for range r.IntN(3) {
		c := container()
		if r.IntN(2) == 0 {
			c.RestartPolicy = ptrTo(v1.ContainerRestartPolicyAlways)
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
	}
	rs := &kubecontainer.PodStatus{UID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	for i := range r.IntN(6) {
		cs := kubecontainer.ContainerStatus{ID: fmt.Sprintf("c-%d", i), Name: pick(), Image: image(), CreatedAt: at(), RestartCount: r.IntN(3)}
		switch r.IntN(4) {
		case 0:
			cs.State, cs.StartedAt = kubecontainer.ContainerStateRunning, at()
		case 1:
			cs.State = kubecontainer.ContainerStateCreated
		case 2:
			cs.State, cs.StartedAt, cs.FinishedAt, cs.ExitCode = kubecontainer.ContainerStateExited, at(), at(), r.IntN(2)
			if r.IntN(4) == 0 {
				cs.Reason = "OOMKilled"
			}
		default:
			cs.State = kubecontainer.ContainerStateUnknown
		}
		if r.IntN(3) == 0 {
			cs.Resources = &kubecontainer.ContainerResources{}
		}
		rs.ContainerStatuses = append(rs.ContainerStatuses, cs)
	}
	previous := func() []v1.ContainerStatus {
		var out []v1.ContainerStatus
		for range r.IntN(4) {
			s := v1.ContainerStatus{Name: pick(), Image: image(), RestartCount: int32(r.IntN(3))}
			switch r.IntN(3) {
			case 0:
				s.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(at())}
			case 1:
				s.State.Terminated = &v1.ContainerStateTerminated{ExitCode: int32(r.IntN(2)), Reason: "Error", FinishedAt: metav1.NewTime(at())}
			default:
				s.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
			}
			if r.IntN(2) == 0 {
				s.LastTerminationState.Terminated = &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}
			}
			out = append(out, s)
		}
		return out
	}
	old := v1.PodStatus{ContainerStatuses: previous(), InitContainerStatuses: previous()}
	reasons := map[string]Reason{}
	for range r.IntN(3) {
		reasons[pick()] = Reason{Reason: "CrashLoopBackOff", Message: "back-off " + pick()}
	}
	return pod, rs, old, reasons
}

func ptrTo[T any](v T) *T { return &v }

// TestConvertContainerStatusesAsBefore: the statuses built in place are the ones the map of
// pointers gave, for regular and init containers, over random pods, runtime views, previous
// statuses and reasons; and building them leaves the previous statuses and the runtime's view
// as they were.
func TestConvertContainerStatusesAsBefore(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 10))
	for i := range 3000 {
		pod, rs, old, reasons := randomContainerWorld(r)
		keptOld, keptRS := old.DeepCopy(), slices.Clone(rs.ContainerStatuses)
		for _, isInit := range []bool{false, true} {
			containers, previous := pod.Spec.Containers, old.ContainerStatuses
			if isInit {
				containers, previous = pod.Spec.InitContainers, old.InitContainerStatuses
			}
			want := convertContainerStatusesBefore(pod, rs, previous, containers, isInit, reasons)
			got := convertContainerStatuses(pod, rs, previous, containers, isInit, reasons)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("case %d (init %v): statuses differ (-before +now):\n%s\npod %+v\nruntime %+v\nprevious %+v", i, isInit, diff, pod.Spec, rs.ContainerStatuses, previous)
			}
		}
		if diff := cmp.Diff(keptOld, &old); diff != "" {
			t.Fatalf("case %d: previous statuses changed:\n%s", i, diff)
		}
		if diff := cmp.Diff(keptRS, rs.ContainerStatuses); diff != "" {
			t.Fatalf("case %d: runtime statuses changed:\n%s", i, diff)
		}
	}
}
