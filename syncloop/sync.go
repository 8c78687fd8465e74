package syncloop

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/status"
	"github.com/minikubelet/minikubelet/trace"
)

// ErrContainersStillRunning is returned when the runtime still lists running containers after a
// kill that reported success: the kubelet's "CRI violation" check in SyncTerminatingPod.
var ErrContainersStillRunning = errors.New("detected running containers after a successful KillPod, CRI violation")

// SyncPod makes the pod run as configured: the kubelet's SyncPod. It writes the pod's status,
// stops at a terminal phase, reconciles a static pod's mirror pod and asks the runtime to start
// what should run. A back-off is returned as the runtime's *kubecontainer.BackoffError, so the pod
// worker requeues the pod when the back-off expires (v1.35).
func (l *Loop) SyncPod(ctx context.Context, updateType podworkers.SyncPodType, pod, mirrorPod *v1.Pod, podStatus *kubecontainer.PodStatus) (podworkers.Result, error) {
	apiStatus := l.generateStatus(pod, podStatus, false)
	if apiStatus.Phase == v1.PodSucceeded || apiStatus.Phase == v1.PodFailed {
		// A terminal pod goes to terminating at once: no mirror handling, no runtime call.
		l.status.SetPodStatus(pod, apiStatus)
		return podworkers.Result{IsTerminal: true}, nil
	}
	l.status.SetPodStatus(pod, apiStatus)
	l.reconcileMirror(ctx, pod, mirrorPod)

	res, err := l.opts.Runtime.SyncPod(pod, podStatus, l.backoff)
	l.reasons.update(pod, err)
	if err != nil {
		return podworkers.Result{Done: res.Done}, fmt.Errorf("sync pod %s: %w", kubecontainer.PodKey(pod), err)
	}
	return podworkers.Result{Done: res.Done}, nil
}

// SyncTerminatingPod stops every container of the pod: the kubelet's SyncTerminatingPod. The kill
// returns at once with the instant its last container stops; the check that nothing runs any more
// and the final status (podIsTerminal) are written at that instant, by Advance when it is later
// than now.
func (l *Loop) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, podStatus *kubecontainer.PodStatus, gracePeriod *int64, podStatusFn func(*v1.PodStatus)) (podworkers.Result, error) {
	apiStatus := l.generateStatus(pod, podStatus, false)
	if podStatusFn != nil {
		podStatusFn(&apiStatus)
	}
	l.status.SetPodStatus(pod, apiStatus)

	res, err := l.opts.Runtime.KillPod(pod, runningPodFromStatus(pod, podStatus), gracePeriod)
	if err != nil {
		l.recordEvent(pod, v1.EventTypeWarning, reasonFailedToKillPod, fmt.Sprintf("error killing pod: %v", err))
		return podworkers.Result{Done: res.Done}, fmt.Errorf("kill pod %s: %w", kubecontainer.PodKey(pod), err)
	}
	if res.Done.After(l.opts.Clock.Now()) {
		l.kills.add(pod, res.Done)
		return podworkers.Result{Done: res.Done}, nil
	}
	if err := l.finishTerminating(pod); err != nil {
		return podworkers.Result{}, err
	}
	return podworkers.Result{}, nil
}

// finishTerminating is the end of SyncTerminatingPod, once the kill is over: read the pod from the
// runtime, fail if a container still runs, and write the final status.
func (l *Loop) finishTerminating(pod *v1.Pod) error {
	stopped, err := l.opts.Runtime.GetPodStatus(pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		return fmt.Errorf("read status of pod %s before final termination: %w", kubecontainer.PodKey(pod), err)
	}
	var running []string
	for _, c := range stopped.ContainerStatuses {
		if c.State == kubecontainer.ContainerStateRunning {
			running = append(running, c.ID)
		}
	}
	if len(running) > 0 {
		return fmt.Errorf("terminate pod %s: %v: %w", kubecontainer.PodKey(pod), running, ErrContainersStillRunning)
	}
	l.status.SetPodStatus(pod, l.generateStatus(pod, stopped, true))
	return nil
}

// completeKills runs finishTerminating for every kill that ended by now, earliest first.
func (l *Loop) completeKills(now time.Time) {
	for _, pod := range l.kills.popDue(now) {
		if err := l.finishTerminating(pod); err != nil {
			l.emit(trace.Event{Event: "error", Pod: kubecontainer.PodKey(pod), UID: string(pod.UID), Reason: "KillPodIncomplete", Message: err.Error(), Func: "SyncTerminatingPod"})
		}
	}
}

// SyncTerminatingRuntimePod stops a pod that exists only in the runtime, with grace 1: the
// kubelet's SyncTerminatingRuntimePod. No status is written.
func (l *Loop) SyncTerminatingRuntimePod(ctx context.Context, running *kubecontainer.Pod) (podworkers.Result, error) {
	grace := orphanKillGracePeriod
	res, err := l.opts.Runtime.KillPod(nil, running, &grace)
	if err != nil {
		return podworkers.Result{Done: res.Done}, fmt.Errorf("kill runtime pod %s/%s: %w", running.Namespace, running.Name, err)
	}
	return podworkers.Result{Done: res.Done}, nil
}

// SyncTerminatedPod writes the stopped pod's final status and marks it finished in the status
// manager: the kubelet's SyncTerminatedPod. Volumes, cgroups and user namespaces are not
// modelled, so there is nothing to wait for.
func (l *Loop) SyncTerminatedPod(ctx context.Context, pod *v1.Pod, podStatus *kubecontainer.PodStatus) (podworkers.Result, error) {
	l.status.SetPodStatus(pod, l.generateStatus(pod, podStatus, true))
	l.status.TerminatePod(pod)
	l.reasons.forget(pod.UID)
	return podworkers.Result{}, nil
}

// generateStatus is the kubelet's generateAPIPodStatus: the old status is the status manager's, or
// the pod's own when the manager has none.
func (l *Loop) generateStatus(pod *v1.Pod, podStatus *kubecontainer.PodStatus, podIsTerminal bool) v1.PodStatus {
	old, ok := l.status.GetPodStatus(pod.UID)
	if !ok {
		old = pod.Status
	}
	return status.GeneratePodStatus(pod, old, podStatus, podIsTerminal, l.opts.Clock.Now(), status.GenerateOptions{
		Reasons: l.reasons[pod.UID],
		HostIP:  l.hostIP(),
	})
}

// runningPodFromStatus is the kubelet's ConvertPodStatusToRunningPod: the running containers and
// every sandbox of the pod.
func runningPodFromStatus(pod *v1.Pod, s *kubecontainer.PodStatus) *kubecontainer.Pod {
	rp := &kubecontainer.Pod{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	if s == nil {
		return rp
	}
	for _, c := range s.ContainerStatuses {
		if c.State == kubecontainer.ContainerStateRunning {
			rp.Containers = append(rp.Containers, c)
		}
	}
	rp.Sandboxes = append(rp.Sandboxes, s.Sandboxes...)
	return rp
}
