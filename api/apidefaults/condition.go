package apidefaults

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UpdatePodCondition sets c in status, adding it or replacing the condition of its type, and
// reports whether anything changed: pkg/api/v1/pod's UpdatePodCondition, which the API server's
// binding, the scheduler and the controllers apply. The transition time is now, or the old
// condition's when the status stays the same.
func UpdatePodCondition(status *v1.PodStatus, c v1.PodCondition, now time.Time) bool {
	c.LastTransitionTime = metav1.NewTime(now)
	for i := range status.Conditions {
		old := &status.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		same := old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message &&
			old.ObservedGeneration == c.ObservedGeneration &&
			old.LastProbeTime.Equal(&c.LastProbeTime) && old.LastTransitionTime.Equal(&c.LastTransitionTime)
		*old = c
		return !same
	}
	status.Conditions = append(status.Conditions, c)
	return true
}
