package admission

import (
	"errors"
	"fmt"
	"math"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/api/apidefaults"
	"github.com/minikubelet/minikubelet/events"
	"github.com/minikubelet/minikubelet/kubecontainer"
)

// Preemption's event and status, as pkg/kubelet/preemption writes them on a victim.
const (
	ReasonPreempting       = events.PreemptContainer
	MessagePreempted       = "Preempted in order to admit critical pod"
	messageDisruption      = "Pod was preempted by Kubelet to accommodate a critical pod."
	systemCriticalPriority = 2000000000
)

// ErrNoVictims is wrapped when no set of active pods frees enough for a critical pod.
var ErrNoVictims = errors.New("no set of running pods found to reclaim resources")

// IsCritical is the kubelet's IsCriticalPod: static and mirror pods, and pods whose priority is at
// least system-cluster-critical's 2000000000.
func IsCritical(pod *v1.Pod) bool {
	if kubecontainer.IsStaticPod(pod) || kubecontainer.IsMirrorPod(pod) {
		return true
	}
	return pod.Spec.Priority != nil && *pod.Spec.Priority >= systemCriticalPriority
}

// preemptable is the kubelet's Preemptable: a critical pod may preempt any pod that is not
// critical, and a pod with a priority any pod with a lower one.
func preemptable(preemptor, victim *v1.Pod) bool {
	if IsCritical(preemptor) && !IsCritical(victim) {
		return true
	}
	if preemptor.Spec.Priority != nil && victim.Spec.Priority != nil {
		return *preemptor.Spec.Priority > *victim.Spec.Priority
	}
	return false
}

// requirement is how much of a resource must be freed.
type requirement struct {
	name     v1.ResourceName
	quantity int64
}

type requirements []requirement

// subtract returns what is still needed once the pods are gone.
func (rs requirements) subtract(pods ...*v1.Pod) requirements {
	var out requirements
	for _, r := range rs {
		q := r.quantity
		for _, p := range pods {
			q -= resourceRequest(p, r.name)
			if q <= 0 {
				break
			}
		}
		if q > 0 {
			out = append(out, requirement{r.name, q})
		}
	}
	return out
}

// distance is how far the pod's requests fall short of the requirements: the sum of the squared
// unmet fractions, so that every resource weighs the same.
func (rs requirements) distance(pod *v1.Pod) float64 {
	d := 0.0
	for _, r := range rs {
		if left := float64(r.quantity - resourceRequest(pod, r.name)); left > 0 {
			d += math.Pow(left/float64(r.quantity), 2)
		}
	}
	return d
}

// String is the kubelet's toString: "[(res: cpu, q: 500), ]".
func (rs requirements) String() string {
	var b strings.Builder
	b.WriteString("[")
	for _, r := range rs {
		fmt.Fprintf(&b, "(res: %v, q: %d), ", r.name, r.quantity)
	}
	b.WriteString("]")
	return b.String()
}

// podsToPreempt is the kubelet's getPodsToPreempt: the victims among the active pods that free
// what the critical pod lacks with the least impact. Guaranteed pods go only if evicting every
// Burstable and BestEffort pod would not be enough, then Burstable pods likewise, then BestEffort.
func podsToPreempt(preemptor *v1.Pod, active []*v1.Pod, needed requirements) ([]*v1.Pod, error) {
	var bestEffort, burstable, guaranteed []*v1.Pod
	for _, p := range active {
		if !preemptable(preemptor, p) {
			continue
		}
		switch apidefaults.QOSClass(p) {
		case v1.PodQOSBestEffort:
			bestEffort = append(bestEffort, p)
		case v1.PodQOSBurstable:
			burstable = append(burstable, p)
		case v1.PodQOSGuaranteed:
			guaranteed = append(guaranteed, p)
		}
	}
	all := append(append(append([]*v1.Pod(nil), bestEffort...), burstable...), guaranteed...)
	if left := needed.subtract(all...); len(left) > 0 {
		return nil, fmt.Errorf("%w: %v", ErrNoVictims, left)
	}
	g, err := byDistance(guaranteed, needed.subtract(append(append([]*v1.Pod(nil), bestEffort...), burstable...)...))
	if err != nil {
		return nil, err
	}
	b, err := byDistance(burstable, needed.subtract(append(append([]*v1.Pod(nil), bestEffort...), g...)...))
	if err != nil {
		return nil, err
	}
	be, err := byDistance(bestEffort, needed.subtract(append(append([]*v1.Pod(nil), b...), g...)...))
	if err != nil {
		return nil, err
	}
	return append(append(be, b...), g...), nil
}

// byDistance is getPodsToPreemptByDistance: until nothing is needed, take the pod closest to
// what is still needed, the smaller one (memory, then cpu) on a tie.
func byDistance(candidates []*v1.Pod, needed requirements) ([]*v1.Pod, error) {
	pods := append([]*v1.Pod(nil), candidates...)
	var out []*v1.Pod
	for len(needed) > 0 {
		if len(pods) == 0 {
			return nil, fmt.Errorf("%w: %v", ErrNoVictims, needed)
		}
		best, bestDist := 0, float64(len(needed)+1)
		for i, p := range pods {
			d := needed.distance(p)
			if d < bestDist || (d == bestDist && smallerRequest(p, pods[best])) {
				best, bestDist = i, d
			}
		}
		needed = needed.subtract(pods[best])
		out = append(out, pods[best])
		// The kubelet moves the last candidate into the chosen one's place; the order of later
		// ties depends on it.
		pods[best] = pods[len(pods)-1]
		pods = pods[:len(pods)-1]
	}
	return out, nil
}

// smallerRequest reports whether a asks for less memory than b, or as much memory and less cpu;
// equal pods count as smaller, as in the kubelet.
func smallerRequest(a, b *v1.Pod) bool {
	for _, name := range []v1.ResourceName{v1.ResourceMemory, v1.ResourceCPU} {
		x, y := resourceRequest(a, name), resourceRequest(b, name)
		if x != y {
			return x < y
		}
	}
	return true
}

// preemptionStatus is the status function the kill of a victim applies: Failed, reason
// Preempting, and the DisruptionTarget condition.
func preemptionStatus(victim *v1.Pod) func(*v1.PodStatus) {
	return func(s *v1.PodStatus) {
		s.Phase, s.Reason, s.Message = v1.PodFailed, ReasonPreempting, MessagePreempted
		cond := v1.PodCondition{
			Type: v1.DisruptionTarget, ObservedGeneration: victim.Generation, Status: v1.ConditionTrue,
			Reason: v1.PodReasonTerminationByKubelet, Message: messageDisruption,
		}
		for i := range s.Conditions {
			if s.Conditions[i].Type == v1.DisruptionTarget {
				if s.Conditions[i].Status == cond.Status {
					cond.LastTransitionTime = s.Conditions[i].LastTransitionTime
				}
				s.Conditions[i] = cond
				return
			}
		}
		s.Conditions = append(s.Conditions, cond)
	}
}
