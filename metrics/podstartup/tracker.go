package podstartup

import (
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Metrics receives the measurements.
type Metrics interface {
	ObservePodStartSLI(d time.Duration)
	ObservePodStartTotal(d time.Duration)
	SetFirstNetworkPodStartSLI(d time.Duration)
}

// Options configure a Tracker.
type Options struct {
	// Clock stamps the first status write that shows the pod running. Required.
	Clock clock.PassiveClock
	// Metrics receives the measurements. Required.
	Metrics Metrics
	// Tracer receives one event per measured pod. Required; trace.Discard drops them.
	Tracer trace.Tracer
}

// state is what is known of one pod's start.
type state struct {
	firstStartedPulling time.Time
	lastFinishedPulling time.Time
	observedRunningTime time.Time
	recorded            bool
}

// Tracker follows the start of the pods the kubelet first saw before they started: a pod already
// started when the kubelet first sees it (a restarted kubelet) is never measured.
type Tracker struct {
	clock   clock.PassiveClock
	metrics Metrics
	tracer  trace.Tracer
	pods    map[types.UID]*state
	// firstNetworkPodSeen: the first measured pod that is not on the host network has set the
	// first-network-pod gauge, which no later pod changes.
	firstNetworkPodSeen bool
}

// New returns a Tracker that knows no pod.
func New(opts Options) (*Tracker, error) {
	switch {
	case opts.Clock == nil:
		return nil, errors.Join(minikubelet.ErrMissingOption, errors.New("podstartup: Clock"))
	case opts.Metrics == nil:
		return nil, errors.Join(minikubelet.ErrMissingOption, errors.New("podstartup: Metrics"))
	case opts.Tracer == nil:
		return nil, errors.Join(minikubelet.ErrMissingOption, errors.New("podstartup: Tracer"))
	}
	return &Tracker{clock: opts.Clock, metrics: opts.Metrics, tracer: opts.Tracer, pods: map[types.UID]*state{}}, nil
}

// ObservedPodOnWatch is told of every API pod the pod config receives, at when. A pod seen for
// the first time is followed only if it has no start time yet; a followed pod whose status write
// showing it running has come back on the watch is measured, once.
func (t *Tracker) ObservedPodOnWatch(pod *v1.Pod, when time.Time) {
	if pod.Status.Phase == v1.PodFailed || pod.Status.Phase == v1.PodSucceeded {
		delete(t.pods, pod.UID)
		return
	}
	s := t.pods[pod.UID]
	if s == nil {
		if pod.Status.StartTime.IsZero() {
			t.pods[pod.UID] = &state{}
		}
		return
	}
	if s.observedRunningTime.IsZero() || s.recorded || !allContainersStarted(pod) {
		return
	}
	total := when.Sub(pod.CreationTimestamp.Time)
	pulling := s.lastFinishedPulling.Sub(s.firstStartedPulling)
	sli := total - pulling
	// The kubelet logs this line ("Observed pod startup duration"); here it is a trace event.
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	t.tracer.Emit(trace.Event{Component: trace.PodStartup, Event: trace.KindMeasured, Pod: pod.Namespace + "/" + pod.Name,
		UID: string(pod.UID), Message: fmt.Sprintf("SLI %v, total %v, pulling %v", ms(sli), ms(total), ms(pulling)), Func: "ObservedPodOnWatch"})
	t.metrics.ObservePodStartSLI(sli)
	t.metrics.ObservePodStartTotal(total)
	s.recorded = true
	if !pod.Spec.HostNetwork && !t.firstNetworkPodSeen {
		t.metrics.SetFirstNetworkPodStartSLI(sli)
		t.firstNetworkPodSeen = true
	}
}

// RecordImageStartedPulling notes that a pull for the pod began at at; only the first counts.
func (t *Tracker) RecordImageStartedPulling(uid types.UID, at time.Time) {
	if s := t.pods[uid]; s != nil && s.firstStartedPulling.IsZero() {
		s.firstStartedPulling = at
	}
}

// RecordImageFinishedPulling notes that a pull for the pod ended (or was found unnecessary) at at,
// once a pull has begun; the last one counts. The image manager also calls it for an image that
// is present, which is why a pod whose first image was pulled and whose second was present
// counts the time up to the second container's check.
func (t *Tracker) RecordImageFinishedPulling(uid types.UID, at time.Time) {
	if s := t.pods[uid]; s != nil && !s.firstStartedPulling.IsZero() {
		s.lastFinishedPulling = at
	}
}

// RecordStatusUpdated is told of every status write that changed the pod, with the pod the API
// server returned; the first that shows every container running is the observed running time.
func (t *Tracker) RecordStatusUpdated(pod *v1.Pod) {
	s := t.pods[pod.UID]
	if s == nil || s.recorded || !s.observedRunningTime.IsZero() {
		return
	}
	if allContainersStarted(pod) {
		s.observedRunningTime = t.clock.Now()
	}
}

// DeletePodStartupState forgets the pod.
func (t *Tracker) DeletePodStartupState(uid types.UID) { delete(t.pods, uid) }

// allContainersStarted is the kubelet's hasPodStartedSLO: every container status shows a running
// container with a start time. Init containers do not count, so their run time is in the SLI.
func allContainersStarted(pod *v1.Pod) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Running == nil || cs.State.Running.StartedAt.IsZero() {
			return false
		}
	}
	return true
}
