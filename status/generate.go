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
	// Buffers, when set, lends the status built the backing arrays of its lists, its start time
	// and its containers' waiting and running states, which the next status built with the same
	// Buffers overwrites. The caller must be done with the status before that: the status
	// manager's SetPodStatus deep-copies the status it is handed (as the kubelet's does), so a
	// status handed to it and read no more may be built into Buffers. Nil builds every list anew.
	Buffers *Buffers
}

// Buffers is what GenerateOptions.Buffers lends: the backing arrays of a status's lists, reused
// from one status to the next. A pod sync builds one status and hands it to the status manager,
// which keeps its own deep copy, so each list the sync built (the conditions alone, five of 120
// bytes at every sync) was garbage at once.
type Buffers struct {
	conditions     []v1.PodCondition
	containers     []v1.ContainerStatus
	initContainers []v1.ContainerStatus
	podIPs         [1]v1.PodIP
	hostIPs        [1]v1.HostIP
	startTime      metav1.Time
	// waiting and running hold the containers' states, which a status points to one a
	// container; the first n of each are taken by the status being built.
	waiting  []v1.ContainerStateWaiting
	running  []v1.ContainerStateRunning
	nWaiting int
	nRunning int
}

// reset starts a status: every state held is free again.
func (b *Buffers) reset() {
	if b != nil {
		b.nWaiting, b.nRunning = 0, 0
	}
}

// waitingState returns a pointer to a copy of w: one of b's when b is set.
func (b *Buffers) waitingState(w v1.ContainerStateWaiting) *v1.ContainerStateWaiting {
	if b == nil {
		p := new(v1.ContainerStateWaiting)
		*p = w
		return p
	}
	return take(&b.waiting, &b.nWaiting, w)
}

// runningState is waitingState for a running state.
func (b *Buffers) runningState(r v1.ContainerStateRunning) *v1.ContainerStateRunning {
	if b == nil {
		p := new(v1.ContainerStateRunning)
		*p = r
		return p
	}
	return take(&b.running, &b.nRunning, r)
}

// take copies v into the next free element of *arr (n counts those taken) and returns a pointer
// to it. A full array is replaced, not grown in place: the pointers already handed out keep
// pointing into the old one.
func take[T any](arr *[]T, n *int, v T) *T {
	if *n == len(*arr) {
		*arr, *n = make([]T, max(2*len(*arr), 1)), 0
	}
	p := &(*arr)[*n]
	*p = v
	(*n)++
	return p
}

// conditionsList returns an empty list with room for n conditions: b's when b is set.
func (b *Buffers) conditionsList(n int) []v1.PodCondition {
	if b == nil {
		return make([]v1.PodCondition, 0, n)
	}
	if cap(b.conditions) < n {
		b.conditions = make([]v1.PodCondition, 0, n)
	}
	return b.conditions[:0]
}

// containerList returns a list of n zero container statuses: buf's when b is set and n is not
// zero (an empty list stays a new one, which allocates nothing and is not nil).
func (b *Buffers) containerList(isInit bool, n int) []v1.ContainerStatus {
	if b == nil || n == 0 {
		return make([]v1.ContainerStatus, n)
	}
	buf := &b.containers
	if isInit {
		buf = &b.initContainers
	}
	if cap(*buf) < n {
		*buf = make([]v1.ContainerStatus, n)
	}
	// The whole array is cleared, not only the n taken, so that it keeps no pointer into a
	// status built before.
	clear((*buf)[:cap(*buf)])
	return (*buf)[:n]
}

// podIPList returns the one-IP list of ip: b's when b is set.
func (b *Buffers) podIPList(ip string) []v1.PodIP {
	if b == nil {
		return []v1.PodIP{{IP: ip}}
	}
	b.podIPs[0] = v1.PodIP{IP: ip}
	return b.podIPs[:]
}

// hostIPList returns the one-IP list of ip: b's when b is set.
func (b *Buffers) hostIPList(ip string) []v1.HostIP {
	if b == nil {
		return []v1.HostIP{{IP: ip}}
	}
	b.hostIPs[0] = v1.HostIP{IP: ip}
	return b.hostIPs[:]
}

// time returns a pointer to t: to b's when b is set. (The new copy is made in its branch: a
// pointer to the parameter would move it to the heap at every call.)
func (b *Buffers) time(t metav1.Time) *metav1.Time {
	if b == nil {
		p := new(metav1.Time)
		*p = t
		return p
	}
	b.startTime = t
	return &b.startTime
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
	opts.Buffers.reset()
	var s v1.PodStatus
	if ip := podIP(pod, rs, old); ip != "" {
		s.PodIP = ip
		s.PodIPs = opts.Buffers.podIPList(ip)
	}
	s.QOSClass = apidefaults.QOSClass(pod)
	s.ContainerStatuses = convertContainerStatuses(pod, rs, old.ContainerStatuses, pod.Spec.Containers, false, opts.Reasons, opts.RecursiveReadOnlyMounts, opts.Buffers)
	s.InitContainerStatuses = convertContainerStatuses(pod, rs, old.InitContainerStatuses, pod.Spec.InitContainers, true, opts.Reasons, opts.RecursiveReadOnlyMounts, opts.Buffers)

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

	s.Conditions = opts.Buffers.conditionsList(conditionsCap(pod, &old, opts.ResizeConditions))
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
		s.StartTime = opts.Buffers.time(*old.StartTime)
	} else {
		s.StartTime = opts.Buffers.time(metav1.NewTime(now))
	}

	if opts.HostIP != "" {
		s.HostIP = opts.HostIP
		s.HostIPs = opts.Buffers.hostIPList(opts.HostIP)
		if pod.Spec.HostNetwork && s.PodIP == "" {
			s.PodIP = opts.HostIP
			s.PodIPs = opts.Buffers.podIPList(opts.HostIP)
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
