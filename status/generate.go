package status

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/api/apidefaults"
	"github.com/minikubelet/minikubelet/kubecontainer"
)

// Active deadline eviction, with the kubelet's values: the pod status's reason and message, and
// the Normal event the active-deadline handler records each time it fails a pod's status.
const (
	ReasonDeadlineExceeded  = "DeadlineExceeded"
	MessageDeadlineExceeded = "Pod was active on the node longer than the specified deadline"
)

// GenerateOptions carries what GeneratePodStatus needs beyond the pod and the runtime's view.
type GenerateOptions struct {
	// Reasons holds, per container name, why the last runtime sync failed to start that container
	// (the kubelet's reasonCache). The caller adds an entry for every failed start and removes it
	// when the container starts.
	Reasons map[string]Reason
	// HostIP is the node's IP. Empty leaves hostIP unset, as a kubelet with no API client does.
	HostIP string
	// Probes sets the started and ready fields from the probe results. Nil treats every
	// container as if it had no probes: running is started, started is ready.
	Probes ProbeStatus
	// ResizeConditions are the pod's in-place resize conditions (PodResizePending,
	// PodResizeInProgress) from the status manager; they follow the conditions others set.
	ResizeConditions []v1.PodCondition
	// RecursiveReadOnlyMounts is whether the pod's runtime handler supports recursive read-only
	// mounts, which decides what a read-only mount asking for IfPossible reports. The fake
	// runtime lists no runtime handlers (nor does the node's status), and the kubelet then finds
	// no support: false.
	RecursiveReadOnlyMounts bool
}

// GeneratePodStatus returns the API status of pod from the runtime's view of it: the kubelet's
// generateAPIPodStatus. old is the status manager's cached status for the pod, or pod.Status when
// it has none. podIsTerminal is true in SyncTerminatingPod's final status and in
// SyncTerminatedPod. now stamps new condition transitions and the start time.
//
// A terminal phase never goes back: if the computed phase is not terminal but old or the API
// status is, that phase is kept. The reason and message stay while the phase does not change.
func GeneratePodStatus(pod *v1.Pod, old v1.PodStatus, status *kubecontainer.PodStatus, podIsTerminal bool,
	now time.Time, opts GenerateOptions) v1.PodStatus {
	rs := status
	if rs == nil {
		rs = &kubecontainer.PodStatus{}
	}
	var s v1.PodStatus
	if ip := podIP(pod, rs, old); ip != "" {
		s.PodIP = ip
		s.PodIPs = []v1.PodIP{{IP: ip}}
	}
	s.QOSClass = apidefaults.QOSClass(pod)
	s.ContainerStatuses = convertContainerStatuses(pod, rs, old.ContainerStatuses, pod.Spec.Containers, false, opts.Reasons, opts.RecursiveReadOnlyMounts)
	s.InitContainerStatuses = convertContainerStatuses(pod, rs, old.InitContainerStatuses, pod.Spec.InitContainers, true, opts.Reasons, opts.RecursiveReadOnlyMounts)

	all := joinStatuses(s.ContainerStatuses, s.InitContainerStatuses)
	s.Phase = GetPhase(pod, all, podIsTerminal, kubecontainer.HasAnyActiveRegularContainerStarted(&pod.Spec, rs))
	if !isTerminal(s.Phase) {
		switch {
		case isTerminal(old.Phase):
			s.Phase = old.Phase
		case isTerminal(pod.Status.Phase):
			s.Phase = pod.Status.Phase
		}
	}
	if s.Phase == old.Phase {
		s.Reason, s.Message = old.Reason, old.Message
		if s.Reason == "" {
			s.Reason = pod.Status.Reason
		}
		if s.Message == "" {
			s.Message = pod.Status.Message
		}
	}
	if PastActiveDeadline(pod, old, now) {
		s.Phase, s.Reason, s.Message = v1.PodFailed, ReasonDeadlineExceeded, MessageDeadlineExceeded
	}
	if isTerminal(pod.Status.Phase) && s.Phase != pod.Status.Phase {
		s.Phase = pod.Status.Phase
	}
	if opts.Probes != nil {
		keepStarted(&s, &old)
		opts.Probes.UpdateContainerStatuses(pod, s.ContainerStatuses, s.InitContainerStatuses)
	} else {
		setStartedAndReady(pod, &s)
	}

	s.Conditions = make([]v1.PodCondition, 0, conditionsCap(pod, &old, opts.ResizeConditions))
	for _, c := range pod.Status.Conditions {
		if !ownedByKubelet(c.Type) {
			s.Conditions = append(s.Conditions, c)
		}
	}
	s.Conditions = append(s.Conditions, opts.ResizeConditions...)
	if _, dt := findCondition(old.Conditions, v1.DisruptionTarget); dt != nil {
		if i, _ := findCondition(s.Conditions, v1.DisruptionTarget); i >= 0 {
			s.Conditions[i] = *dt
		} else {
			s.Conditions = append(s.Conditions, *dt)
		}
	}
	all = joinStatuses(s.InitContainerStatuses, s.ContainerStatuses)
	s.Conditions = append(s.Conditions, readyToStartContainersCondition(pod, rs))
	s.Conditions = append(s.Conditions, initializedCondition(pod, all, s.Phase))
	containersReady := containersReadyCondition(pod, all, s.Phase)
	s.Conditions = append(s.Conditions, readyConditionOf(pod, s.Conditions, containersReady))
	s.Conditions = append(s.Conditions, containersReady)
	s.Conditions = append(s.Conditions, v1.PodCondition{Type: v1.PodScheduled, ObservedGeneration: pod.Generation, Status: v1.ConditionTrue})
	stampTransitions(&s, &old, now)

	if old.StartTime != nil && !old.StartTime.IsZero() {
		s.StartTime = old.StartTime.DeepCopy()
	} else {
		t := metav1.NewTime(now)
		s.StartTime = &t
	}

	if opts.HostIP != "" {
		s.HostIP = opts.HostIP
		s.HostIPs = []v1.HostIP{{IP: opts.HostIP}}
		if pod.Spec.HostNetwork && s.PodIP == "" {
			s.PodIP = opts.HostIP
			s.PodIPs = []v1.PodIP{{IP: opts.HostIP}}
		}
	}
	return s
}

// conditionsCap is how many conditions GeneratePodStatus may list: the others' conditions it
// keeps, the resize conditions, the disruption target it may add and the kubelet's five. The list
// is made that size once; a room for every condition of the API status was twice what a pod
// whose API status shows the kubelet's own five needs, and the status manager copies the list it
// caches anyway.
func conditionsCap(pod *v1.Pod, old *v1.PodStatus, resize []v1.PodCondition) int {
	n := len(resize) + 5
	for i := range pod.Status.Conditions {
		if !ownedByKubelet(pod.Status.Conditions[i].Type) {
			n++
		}
	}
	if _, dt := findCondition(old.Conditions, v1.DisruptionTarget); dt != nil {
		n++
	}
	return n
}

// joinStatuses is first then second in one list, for the phase and the conditions, which only read
// it before anything changes either list. When one is empty (a pod without init containers) it
// is the other itself, not a copy. The result is never nil: the conditions tell a nil list (no
// statuses known) from an empty one.
func joinStatuses(first, second []v1.ContainerStatus) []v1.ContainerStatus {
	switch {
	case len(second) == 0 && first != nil:
		return first
	case len(first) == 0 && second != nil:
		return second
	}
	return append(append([]v1.ContainerStatus{}, first...), second...)
}

// keepStarted copies the started field of the old status to each running container, as
// convertToAPIContainerStatuses does while ChangeContainerStatusOnKubeletRestart is off (v1.35):
// the prober manager then keeps a started container started until its startup worker has seen
// the instance.
func keepStarted(s, old *v1.PodStatus) {
	for _, pair := range [][2][]v1.ContainerStatus{{s.ContainerStatuses, old.ContainerStatuses}, {s.InitContainerStatuses, old.InitContainerStatuses}} {
		for i := range pair[0] {
			cs := &pair[0][i]
			if cs.State.Running == nil {
				continue
			}
			if o, ok := findStatus(pair[1], cs.Name); ok && o.Started != nil {
				started := *o.Started
				cs.Started = &started
			}
		}
	}
}

// podIP returns the pod's IP: none for a host-network pod (it gets the host IP later), the IP
// the runtime reports for its ready sandbox, or else the IP already shown: the kubelet's PLEG
// keeps a pod's last IPs while it has no ready sandbox (GenericPLEG.getPodIPs).
func podIP(pod *v1.Pod, rs *kubecontainer.PodStatus, old v1.PodStatus) string {
	if pod.Spec.HostNetwork {
		return ""
	}
	if len(rs.IPs) > 0 {
		return rs.IPs[0]
	}
	return old.PodIP
}

// PastActiveDeadline reports whether the pod has run longer than spec.activeDeadlineSeconds,
// counted from the start time the status manager knows: the kubelet's activeDeadlineHandler.
func PastActiveDeadline(pod *v1.Pod, old v1.PodStatus, now time.Time) bool {
	if pod.Spec.ActiveDeadlineSeconds == nil {
		return false
	}
	start := old.StartTime
	if start == nil || start.IsZero() {
		return false
	}
	return now.Sub(start.Time) >= time.Duration(*pod.Spec.ActiveDeadlineSeconds)*time.Second
}

// stampTransitions sets the lastTransitionTime of every kubelet condition in s: the old one when
// the condition's status did not change, now otherwise. The kubelet's updateLastTransitionTime.
func stampTransitions(s, old *v1.PodStatus, now time.Time) {
	for _, t := range []v1.PodConditionType{v1.ContainersReady, v1.PodReady, v1.PodInitialized,
		v1.PodReadyToStartContainers, v1.PodScheduled, v1.DisruptionTarget} {
		_, c := findCondition(s.Conditions, t)
		if c == nil {
			continue
		}
		ltt := metav1.NewTime(now)
		if _, oc := findCondition(old.Conditions, t); oc != nil && oc.Status == c.Status {
			ltt = oc.LastTransitionTime
		}
		c.LastTransitionTime = ltt
	}
}
