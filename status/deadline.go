package status

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// PodStatusProvider gives the status manager's cached status of a pod.
type PodStatusProvider interface {
	GetPodStatus(uid types.UID) (v1.PodStatus, bool)
}

// ActiveDeadline is the kubelet's activeDeadlineHandler as a sync loop handler: a pod past its
// spec.activeDeadlineSeconds, counted from the start time in the status manager (or the API
// status when the status manager has none), is synced at every sync tick, and its next status
// is Failed with reason DeadlineExceeded (GeneratePodStatus).
type ActiveDeadline struct {
	clock    clock.PassiveClock
	statuses PodStatusProvider
}

// NewActiveDeadline returns the handler; both arguments are required.
func NewActiveDeadline(clk clock.PassiveClock, statuses PodStatusProvider) (*ActiveDeadline, error) {
	if clk == nil || statuses == nil {
		return nil, fmt.Errorf("new active deadline handler: %w", errors.New("clock and status provider are required"))
	}
	return &ActiveDeadline{clock: clk, statuses: statuses}, nil
}

// MaySync reports whether ShouldSync can ever be true for this pod object: only a pod with
// activeDeadlineSeconds can be past it (syncloop.PodSyncLoopFilter).
func (a *ActiveDeadline) MaySync(pod *v1.Pod) bool {
	return pod.Spec.ActiveDeadlineSeconds != nil
}

// ShouldSync reports whether pod has been active longer than its activeDeadlineSeconds.
func (a *ActiveDeadline) ShouldSync(pod *v1.Pod) bool {
	if pod.Spec.ActiveDeadlineSeconds == nil {
		return false
	}
	s, ok := a.statuses.GetPodStatus(pod.UID)
	if !ok {
		s = pod.Status
	}
	return PastActiveDeadline(pod, s, a.clock.Now())
}
