package podsync

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/events"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/status"
)

// orphanKillGracePeriod is the grace, in seconds, SyncTerminatingRuntimePod gives a pod that
// exists only in the runtime.
const orphanKillGracePeriod int64 = 1

// ErrContainersStillRunning is returned when the runtime still lists running containers after a
// kill that reported success: the kubelet's "CRI violation" check in SyncTerminatingPod.
var ErrContainersStillRunning = errors.New("detected running containers after a successful KillPod, CRI violation")

// Syncer runs the pod sync functions.
type Syncer struct {
	opts Options
	// reasons is the kubelet's reasonCache: why the last runtime sync could not start a container.
	reasons reasonCache
	// kills are SyncTerminatingPod calls whose kill ends after the call returned.
	kills killQueue
	// resync is the status manager's StatusResyncer, nil when it has none; memos are, per pod,
	// what its last status was built from when it came out unchanged (unchangedStatus).
	resync StatusResyncer
	memos  map[types.UID]statusMemo
	// beside makes the mirror pod calls beside the pod workers; nil makes them inline.
	beside Beside
	// buffers lends SyncPod's status its lists: the status manager keeps a deep copy of each
	// status it is handed (StatusManager), so the lists built for one sync are free at the next.
	buffers status.Buffers
}

// New returns a Syncer.
func New(opts Options) (*Syncer, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new pod syncer: %w", err)
	}
	resync, _ := opts.Status.(StatusResyncer)
	return &Syncer{opts: opts, reasons: reasonCache{}, kills: killQueue{}, resync: resync, memos: map[types.UID]statusMemo{}}, nil
}

// SyncPod makes the pod run as configured: the kubelet's SyncPod. It writes the pod's status,
// stops at a terminal phase, reconciles a static pod's mirror pod and asks the runtime to start
// what should run. A back-off is returned as the runtime's *kubecontainer.BackoffError, so the pod
// worker requeues the pod when the back-off expires (v1.35).
func (s *Syncer) SyncPod(ctx context.Context, updateType podworkers.SyncPodType, pod, mirrorPod *v1.Pod, podStatus *kubecontainer.PodStatus) (podworkers.Result, error) {
	pod = s.allocated(pod)
	s.observeWorkerStart(updateType, pod)
	s.resizeInProgress(pod, podStatus)
	if cached, ok := s.unchangedStatus(pod, podStatus); ok {
		// What the status would come out as, proven by the last sync: not terminal (that sync
		// went on), and equal to the cached one, so SetPodStatus would do nothing.
		if c := s.opts.CheckSkip; c != nil {
			c.check(s, pod, podStatus)
		}
		s.observePodStart(pod, cached)
	} else {
		apiStatus := s.generateStatus(pod, podStatus, false, &s.buffers)
		if apiStatus.Phase == v1.PodSucceeded || apiStatus.Phase == v1.PodFailed {
			// A terminal pod goes to terminating at once: no mirror handling, no runtime call.
			delete(s.memos, pod.UID)
			s.opts.Status.SetPodStatus(pod, apiStatus)
			return podworkers.Result{IsTerminal: true}, nil
		}
		s.observePodStart(pod, apiStatus)
		s.setStatus(pod, podStatus, apiStatus)
	}
	// The ConfigMap and Secret managers learn what the pod references before anything reads
	// them (its environment, its volumes).
	if s.opts.Objects != nil {
		s.opts.Objects.RegisterPod(pod)
	}
	if s.beside != nil && s.mirrorCalls(pod, mirrorPod) {
		return s.reconcileMirrorBeside(ctx, pod, mirrorPod, podStatus)
	}
	s.reconcileMirror(ctx, pod, mirrorPod)
	return s.mountAndStart(ctx, pod, podStatus, false)
}

// mountAndStart is SyncPod after the mirror pod step: the wait for the pod's volumes, then the
// runtime sync. canceled is set when the worker's context was cancelled during the mirror pod
// calls: the wait then ends at once.
func (s *Syncer) mountAndStart(ctx context.Context, pod *v1.Pod, podStatus *kubecontainer.PodStatus, canceled bool) (podworkers.Result, error) {
	if s.opts.Volumes != nil {
		if w := s.opts.Volumes.WaitForAttachAndMount(pod); w != nil {
			return s.waitMounted(ctx, pod, podStatus, w, canceled)
		}
	}
	return s.startPod(ctx, pod, podStatus)
}

// waitMounted is one look of SyncPod's wait for the pod's volumes (the kubelet's poll, at once and
// then every 300ms): while they are not mounted the sync goes on waiting (Result.Wait); once they
// are, it starts the pod. A wait that failed for another reason than its context or its timeout
// records FailedMount ("Unable to attach or mount volumes: ..."), as SyncPod does; each fails the
// sync, which the worker retries.
func (s *Syncer) waitMounted(ctx context.Context, pod *v1.Pod, podStatus *kubecontainer.PodStatus, w VolumeWait, canceled bool) (podworkers.Result, error) {
	next, done, err := w.Poll(canceled)
	if !done {
		return podworkers.Result{Done: next, Wait: func(ctx context.Context, canceled bool) (podworkers.Result, error) {
			return s.waitMounted(ctx, pod, podStatus, w, canceled)
		}}, nil
	}
	if err != nil {
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			s.recordEvent(pod, v1.EventTypeWarning, events.FailedMountVolume, "Unable to attach or mount volumes: "+err.Error())
		}
		return podworkers.Result{}, fmt.Errorf("sync pod %s: %w", podkey.Of(pod), err)
	}
	return s.startPod(ctx, pod, podStatus)
}

// startPod is the end of SyncPod, once the volumes are mounted: the runtime sync.
func (s *Syncer) startPod(ctx context.Context, pod *v1.Pod, podStatus *kubecontainer.PodStatus) (podworkers.Result, error) {
	res, err := s.runtimeSync(ctx, pod, podStatus)
	s.reasons.update(pod, err)
	s.resizeActuated(pod, res, err)
	if err != nil {
		return podworkers.Result{Done: res.Done}, fmt.Errorf("sync pod %s: %w", podkey.Of(pod), err)
	}
	return podworkers.Result{Done: res.Done}, nil
}

// SyncTerminatingPod stops every container of the pod: the kubelet's SyncTerminatingPod. The kill
// returns at once with the instant its last container stops; the check that nothing runs any more
// and the final status (podIsTerminal) are written at that instant, by Advance when it is later
// than now.
func (s *Syncer) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, podStatus *kubecontainer.PodStatus, gracePeriod *int64, podStatusFn func(*v1.PodStatus)) (podworkers.Result, error) {
	pod = s.allocated(pod)
	delete(s.memos, pod.UID)
	apiStatus := s.generateStatus(pod, podStatus, false, nil)
	if podStatusFn != nil {
		podStatusFn(&apiStatus)
	}
	s.opts.Status.SetPodStatus(pod, apiStatus)

	if s.opts.Probes != nil {
		s.opts.Probes.StopLivenessAndStartup(pod)
	}
	running := kubecontainer.ConvertPodStatusToRunningPod(podStatus)
	running.ID, running.Name, running.Namespace = pod.UID, pod.Name, pod.Namespace
	res, err := s.opts.Runtime.KillPod(pod, running, gracePeriod)
	if err != nil {
		s.recordEvent(pod, v1.EventTypeWarning, events.FailedToKillPod, fmt.Sprintf("error killing pod: %v", err))
		return podworkers.Result{Done: res.Done}, fmt.Errorf("kill pod %s: %w", podkey.Of(pod), err)
	}
	if res.Done.After(s.opts.Clock.Now()) {
		s.kills.add(pod, res.Done)
		return podworkers.Result{Done: res.Done}, nil
	}
	if err := s.finishTerminating(pod); err != nil {
		return podworkers.Result{}, err
	}
	return podworkers.Result{}, nil
}

// finishTerminating is the end of SyncTerminatingPod, once the kill is over: read the pod from the
// runtime, fail if a container still runs, and write the final status.
func (s *Syncer) finishTerminating(pod *v1.Pod) error {
	// Readiness went on being probed during the kill; now every worker stops.
	if s.opts.Probes != nil {
		s.opts.Probes.RemovePod(pod)
	}
	stopped, err := s.opts.Runtime.GetPodStatus(pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		return fmt.Errorf("read status of pod %s before final termination: %w", podkey.Of(pod), err)
	}
	var running []string
	for _, c := range stopped.ContainerStatuses {
		if c.State == kubecontainer.ContainerStateRunning {
			running = append(running, c.ID)
		}
	}
	if len(running) > 0 {
		return fmt.Errorf("terminate pod %s: %v: %w", podkey.Of(pod), running, ErrContainersStillRunning)
	}
	s.opts.Status.SetPodStatus(pod, s.generateStatus(pod, stopped, true, nil))
	return nil
}

// SyncTerminatingRuntimePod stops a pod that exists only in the runtime, with grace 1: the
// kubelet's SyncTerminatingRuntimePod. No status is written.
func (s *Syncer) SyncTerminatingRuntimePod(ctx context.Context, running *kubecontainer.Pod) (podworkers.Result, error) {
	grace := orphanKillGracePeriod
	res, err := s.opts.Runtime.KillPod(nil, running, &grace)
	if err != nil {
		return podworkers.Result{Done: res.Done}, fmt.Errorf("kill runtime pod %s: %w", podkey.Build(running.Namespace, running.Name), err)
	}
	return podworkers.Result{Done: res.Done}, nil
}

// SyncTerminatedPod writes the stopped pod's final status, waits until no volume of the pod is
// mounted (WaitForUnmount), then until none is possibly mounted (the kubelet's second poll,
// podVolumesExist: a volume a restarted kubelet reconstructed as uncertain holds it up, not the
// first), and marks the pod finished in the status manager: the kubelet's SyncTerminatedPod.
// Cgroups and user namespaces are not modelled.
func (s *Syncer) SyncTerminatedPod(ctx context.Context, pod *v1.Pod, podStatus *kubecontainer.PodStatus) (podworkers.Result, error) {
	pod = s.allocated(pod)
	s.opts.Status.SetPodStatus(pod, s.generateStatus(pod, podStatus, true, nil))
	if s.opts.Volumes != nil {
		return s.waitUnmounted(pod, s.opts.Volumes.WaitForUnmount(pod), false, false)
	}
	return s.finishTerminated(pod)
}

// waitUnmounted is one look of one of SyncTerminatedPod's waits: the first (gone false), for no
// volume of the pod to be mounted, then the second, for none to be possibly mounted, which starts
// with a look at the moment the first ends. A failed wait fails the sync, which the worker
// retries.
func (s *Syncer) waitUnmounted(pod *v1.Pod, w VolumeWait, gone, canceled bool) (podworkers.Result, error) {
	next, done, err := w.Poll(canceled)
	if !done {
		return podworkers.Result{Done: next, Wait: func(_ context.Context, canceled bool) (podworkers.Result, error) {
			return s.waitUnmounted(pod, w, gone, canceled)
		}}, nil
	}
	if err != nil {
		return podworkers.Result{}, fmt.Errorf("sync terminated pod %s: %w", podkey.Of(pod), err)
	}
	if !gone {
		return s.waitUnmounted(pod, s.opts.Volumes.WaitForVolumesGone(pod), true, false)
	}
	return s.finishTerminated(pod)
}

// finishTerminated is the end of SyncTerminatedPod, once the volumes are unmounted.
func (s *Syncer) finishTerminated(pod *v1.Pod) (podworkers.Result, error) {
	if s.opts.Objects != nil {
		s.opts.Objects.UnregisterPod(pod)
	}
	s.opts.Status.TerminatePod(pod)
	s.reasons.forget(pod.UID)
	delete(s.memos, pod.UID)
	return podworkers.Result{}, nil
}

// generateStatus is the kubelet's generateAPIPodStatus: the old status is the status manager's, or
// the pod's own when the manager has none. With buffers the status's lists are built into them
// (status.GenerateOptions.Buffers): the caller hands the status to the status manager and reads
// it no more before the next build.
func (s *Syncer) generateStatus(pod *v1.Pod, podStatus *kubecontainer.PodStatus, podIsTerminal bool, buffers *status.Buffers) v1.PodStatus {
	old, ok := s.opts.Status.GetPodStatus(pod.UID)
	if !ok {
		old = pod.Status
	}
	now := s.opts.Clock.Now()
	if status.PastActiveDeadline(pod, old, now) {
		// The active-deadline handler's ShouldEvict records this at every status it fails.
		s.recordEvent(pod, v1.EventTypeNormal, status.ReasonDeadlineExceeded, status.MessageDeadlineExceeded)
	}
	opts := status.GenerateOptions{Reasons: s.reasons[pod.UID], HostIP: s.opts.HostIP, ResizeConditions: s.resizeConditions(pod, podIsTerminal), Buffers: buffers}
	if s.opts.Probes != nil {
		opts.Probes = s.opts.Probes
	}
	return status.GeneratePodStatus(pod, old, podStatus, podIsTerminal, now, opts)
}

// runtimeSync makes sure the pod is probed, then calls the runtime's SyncPod, with the liveness
// and startup results when the runtime reads them.
func (s *Syncer) runtimeSync(ctx context.Context, pod *v1.Pod, podStatus *kubecontainer.PodStatus) (kubecontainer.Result, error) {
	if s.opts.Probes == nil {
		return s.opts.Runtime.SyncPod(pod, podStatus, s.opts.CrashLoopBackOff)
	}
	s.opts.Probes.AddPod(ctx, pod)
	if pr, ok := s.opts.Runtime.(ProbingRuntime); ok {
		return pr.SyncPodWithProbes(pod, podStatus, s.opts.CrashLoopBackOff, s.opts.Probes)
	}
	return s.opts.Runtime.SyncPod(pod, podStatus, s.opts.CrashLoopBackOff)
}

// recordEvent sends one Kubernetes event about pod; a nil Recorder records nothing.
func (s *Syncer) recordEvent(pod *v1.Pod, eventType, reason, message string) {
	if s.opts.Recorder == nil {
		return
	}
	s.opts.Recorder.Event(pod, eventType, reason, message)
}

// emit traces e; every event names its own component.
func (s *Syncer) emit(e trace.Event) { s.opts.Tracer.Emit(e) }
