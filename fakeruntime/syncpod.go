package fakeruntime

import (
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/events"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// SyncPod makes the runtime run pod as its spec says, given the status the caller last read from
// the pod cache: the kubelet's kuberuntime SyncPod. It kills the pod first when its sandbox must be
// recreated, creates the sandbox, starts the next init container or the regular containers that
// should run, each after its image is present, and holds back restarts that are in back-off.
//
// Every step takes its latency: the sandbox is ready, each image pulled and each container created
// and running at the instant the step ends, and Result.Done is when the last step ends. Crash-loop
// back-offs come back as *kubecontainer.BackoffError (joined with errors.Join when several
// containers are held back), so kubecontainer.MinBackoffExpiration gives the requeue time; an
// image pull back-off is a plain error wrapping kubecontainer.ErrImagePullBackOff, as in v1.35.0.
// backOff is the crash-loop back-off; nil disables it.
func (r *Runtime) SyncPod(pod *v1.Pod, status *kubecontainer.PodStatus, backOff *kubecontainer.Backoff) (kubecontainer.Result, error) {
	return r.SyncPodWithProbes(pod, status, backOff, nil)
}

// SyncPodWithProbes is SyncPod with the kubelet's liveness and startup results: a running
// container whose liveness (else startup) result is Failure is stopped first, with the Killing
// message "Container <name> failed liveness probe, will be restarted" and the probe's
// terminationGracePeriodSeconds, and started again in the same sync (subject to the crash-loop
// back-off) unless its restart policy is Never.
func (r *Runtime) SyncPodWithProbes(pod *v1.Pod, status *kubecontainer.PodStatus, backOff *kubecontainer.Backoff, probes kubecontainer.ProbeResults) (kubecontainer.Result, error) {
	now := r.clock.Now()
	r.applyDue(now)
	if err := r.checkUp(now); err != nil {
		key := r.keyOf(pod)
		r.emit(trace.Event{Event: trace.KindError, Pod: key, UID: string(pod.UID), Message: err.Error(), Func: "SyncPod"})
		return kubecontainer.Result{Done: now}, fmt.Errorf("sync pod %s: %w", key, err)
	}
	if status == nil {
		status = &kubecontainer.PodStatus{UID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	}
	acts := r.computePodActions(pod, status, probes)
	if acts.empty() {
		// Nearly every periodic sync of a running pod: no key for a trace that says nothing.
		return kubecontainer.Result{Done: now}, nil
	}
	key := r.keyOf(pod)
	r.emit(trace.Event{Event: trace.KindSync, Pod: key, UID: string(pod.UID), Message: acts.String(), Func: "SyncPod"})
	if acts.createSandbox && acts.sandboxID != "" {
		// A pod that had a sandbox learns, before the kill, why it is killed; a new pod does not.
		r.record(pod, key, pod.UID, "", kubeEvent{v1.EventTypeNormal, events.SandboxChanged, "Pod sandbox changed, it will be killed and re-created."})
	}
	s := &podSync{r: r, pod: pod, key: key, status: status, backOff: backOff, now: now, at: now}
	err := s.run(acts)
	r.applyDue(now)
	return kubecontainer.Result{Done: s.at, Resized: s.resized}, err
}

// podSync is one SyncPod in progress. at is the virtual instant the current step starts: the
// kubelet's goroutine would be there, blocked on the previous steps.
type podSync struct {
	r       *Runtime
	pod     *v1.Pod
	key     string
	status  *kubecontainer.PodStatus
	backOff *kubecontainer.Backoff
	now, at time.Time
	// newSandbox is whether this sync creates the pod's sandbox, and newSandboxIPs the IPs it
	// will have (none for a host-network pod), which the hooks of the containers it starts see:
	// the same slice the sandbox's record hands out once it exists.
	newSandbox    bool
	newSandboxIPs []string
	// resized is set once the resize action ran.
	resized bool
}

// podIPs are the IPs the runtime will report for the pod when a hook of this sync runs: the new
// sandbox's, or else the current one's.
func (s *podSync) podIPs() []string {
	switch {
	case !s.newSandbox:
		return s.r.pods[s.pod.UID].podIPs()
	}
	return s.newSandboxIPs
}

func (s *podSync) run(acts podActions) error {
	r := s.r
	if acts.killPod {
		s.at = r.killPodAt(s.pod, kubecontainer.ConvertPodStatusToRunningPod(s.status), nil, s.now, acts.why)
		if acts.createSandbox {
			s.purgeInitContainers()
		}
	} else if len(acts.kill) > 0 {
		// Each unwanted container is killed in turn, and the starts wait for all of them.
		for _, k := range acts.kill {
			s.at = s.killContainer(k.id, k.container, k.message, k.reason)
		}
	}
	if acts.createSandbox {
		if err := s.createSandbox(acts.attempt); err != nil {
			return err
		}
	}
	var errs []error
	for _, c := range acts.initStart {
		if err := s.start(c); err != nil {
			errs = append(errs, err)
			if !kubecontainer.IsRestartableInitContainer(c) {
				// Regular containers wait for every regular init container, so the sync ends
				// here; a sidecar that cannot start does not hold the others back.
				return joinErrors(errs)
			}
		}
	}
	if acts.resizes() {
		// After the init containers and before the regular ones (SyncPod's step 7); a failed
		// resize does not hold the starts back.
		s.resized = true
		if err := s.resize(acts.updates); err != nil {
			errs = append(errs, err)
		}
	}
	for _, c := range acts.start {
		if err := s.start(c); err != nil {
			errs = append(errs, err)
		}
	}
	return joinErrors(errs)
}

// joinErrors returns nil, the one error, or all of them joined.
func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// killContainer stops one running container of the pod from s.at, with message as the Killing
// event's (the kubelet's killContainer called from SyncPod, without ordering), and returns when
// it exited.
func (s *podSync) killContainer(id string, c *v1.Container, message, reason string) time.Time {
	r := s.r
	rec := r.containers[id]
	if rec == nil || rec.status.State != kubecontainer.ContainerStateRunning {
		return s.at
	}
	return r.stopContainers(s.pod, s.key, string(s.pod.UID), s.podIPs(), []killTarget{{rec: rec, spec: c, message: message, reason: reason, why: message}}, nil, false, s.at)
}

// schedule runs fn at the instant at unless the pod is killed before then (see
// Runtime.generation) or the kubelet restarts.
func (s *podSync) schedule(at time.Time, fn func(at time.Time)) {
	s.r.postGuarded(at, s.pod, step{apply: fn})
}

// scheduleContainer schedules a typed step (stepCreated, stepStarted) of rec at the sync's
// current instant, as schedule would a closure doing the same.
func (s *podSync) scheduleContainer(kind stepKind, rec *containerRec) {
	s.r.postGuarded(s.at, s.pod, step{kind: kind, key: s.key, rec: rec})
}

// emitAndRecordAt traces e and records k about the pod at the sync's current instant, unless the
// kubelet restarts before then: the process that would log and record them is gone.
func (s *podSync) emitAndRecordAt(e trace.Event, k kubeEvent) {
	r := s.r
	r.seq++
	r.schedule.push(step{at: s.at, seq: r.seq, kind: stepEvent, ofProcess: true, pod: s.pod, event: r.pendingEvent(e, k)})
}

// recordAt records k about the pod's container at the sync's current instant, with no trace event
// of the runtime's own (the events component traces it), unless the kubelet restarts before then.
func (s *podSync) recordAt(container string, k kubeEvent) {
	r, pod, key := s.r, s.pod, s.key
	r.postOfProcess(s.at, func(time.Time) { r.record(pod, key, pod.UID, container, k) })
}

// createSandbox makes a sandbox that is ready SandboxStart from now, or fails then when
// RunPodSandbox is scripted to fail.
func (s *podSync) createSandbox(attempt int) error {
	r := s.r
	if r.failCall(CallRunPodSandbox) {
		s.at = s.at.Add(r.lat.SandboxStart)
		msg := "rpc error: code = Unknown desc = failed to create sandbox (scripted RunPodSandbox failure)"
		s.emitAndRecordAt(trace.Event{Event: trace.KindFailed, Pod: s.key, UID: string(s.pod.UID), Reason: events.FailedCreatePodSandBox, Message: msg, Func: "createPodSandbox"},
			kubeEvent{v1.EventTypeWarning, events.FailedCreatePodSandBox, "Failed to create pod sandbox: " + msg})
		return fmt.Errorf("create sandbox for pod %s: %s: %w", s.key, msg, kubecontainer.ErrCreatePodSandbox)
	}
	r.lastSandbox++
	r.state++
	seq := r.lastSandbox
	id := seqID("s-", seq)
	s.at = s.at.Add(r.lat.SandboxStart)
	r.observeOp("run_podsandbox", r.lat.SandboxStart, nil)
	if r.metrics != nil {
		r.metrics.StartedPod(nil)
	}
	pod, key := s.pod, s.key
	ip := ""
	var ips []string
	if !pod.Spec.HostNetwork {
		ip = sandboxIP(pod.UID)
		ips = []string{ip}[:1:1]
	}
	s.newSandbox, s.newSandboxIPs = true, ips
	s.schedule(s.at, func(at time.Time) {
		rec := r.podFor(pod.UID, pod.Name, pod.Namespace, key)
		rec.addSandbox(sandboxRec{seq: seq, ip: ip, ips: ips, status: kubecontainer.SandboxStatus{
			ID: id, State: kubecontainer.SandboxReady, CreatedAt: at, Attempt: attempt,
		}})
		r.emit(trace.Event{Event: trace.KindSandbox, Pod: key, UID: string(pod.UID), To: string(kubecontainer.SandboxReady), Message: id, Func: "createPodSandbox"})
	})
	return nil
}

// start starts one container: back-off check, image, create, start. The kubelet's start closure in
// SyncPod with doBackOff and startContainer.
func (s *podSync) start(c *v1.Container) error {
	r := s.r
	if err := s.doBackOff(c); err != nil {
		return err
	}
	if err := s.ensureImage(c); err != nil {
		r.startedContainer(s.pod, c, err)
		// startContainer's own event after EnsureImageExists failed: "Error: " and the
		// reason (ErrImagePull, ImagePullBackOff, ErrImageNeverPull, InvalidImageName).
		s.recordAt(c.Name, kubeEvent{v1.EventTypeWarning, events.FailedToCreateContainer, "Error: " + imageErrorReason(err)})
		return err
	}
	script, scripted, err := BehaviorFromAnnotations(s.pod.Annotations, c.Name)
	if err == nil {
		err = checkHookAnnotations(s.pod.Annotations, c.Name)
	}
	if err == nil {
		_, err = startFailsFromAnnotations(s.pod.Annotations, c.Name, 0)
	}
	if err == nil && r.helper != nil {
		// generateContainerConfig asks the kubelet for the container's environment before it
		// checks the user: a ConfigMap, Secret or key it names that does not exist fails here.
		ips := s.podIPs()
		ip := ""
		if len(ips) > 0 {
			ip = ips[0]
		}
		err = r.helper.CheckEnvironment(s.pod, c, ip, ips)
	}
	if err == nil {
		err = containerConfigError(s.pod, c)
	}
	if err != nil {
		// generateContainerConfig failed: no container exists, so no back-off either; the pod
		// worker retries after its error delay.
		r.startedContainer(s.pod, c, kubecontainer.ErrCreateContainerConfig)
		s.emitAndRecordAt(trace.Event{Event: trace.KindFailed, Pod: s.key, UID: string(s.pod.UID), Container: c.Name, Reason: "CreateContainerConfigError", Message: err.Error(), Func: "startContainer"},
			kubeEvent{v1.EventTypeWarning, events.FailedToCreateContainer, "Error: " + err.Error()})
		return &kubecontainer.StartError{Container: c.Name, Message: err.Error(), Err: kubecontainer.ErrCreateContainerConfig, Cause: err}
	}
	if r.failCall(CallCreateContainer) {
		r.startedContainer(s.pod, c, kubecontainer.ErrCreateContainer)
		msg := "failed to create containerd container: scripted CreateContainer failure"
		s.emitAndRecordAt(trace.Event{Event: trace.KindFailed, Pod: s.key, UID: string(s.pod.UID), Container: c.Name, Reason: "CreateContainerError", Message: msg, Func: "startContainer"},
			kubeEvent{v1.EventTypeWarning, events.FailedToCreateContainer, "Error: " + msg})
		return fmt.Errorf("start container %s of pod %s: %s: %w", c.Name, s.key, msg, kubecontainer.ErrCreateContainer)
	}
	restarts := 0
	if prev := s.status.FindContainerStatusByName(c.Name); prev != nil {
		restarts = prev.RestartCount + 1
	}
	r.lastContainer++
	r.state++
	rec := &containerRec{seq: r.lastContainer, podUID: s.pod.UID, status: kubecontainer.ContainerStatus{
		ID:           seqID("c-", r.lastContainer),
		Name:         c.Name,
		Image:        c.Image,
		ImageRef:     r.imageRefOf(c.Image),
		State:        kubecontainer.ContainerStateCreated,
		RestartCount: restarts,
		Hash:         r.containerHash(c),
		// The resources it is created with: the allocated ones of the pod SyncPod was given.
		Resources: kubecontainer.ResourcesOf(c.Resources),
	}}
	s.scheduleContainer(stepCreated, rec)
	s.at = s.at.Add(r.lat.ContainerStart)
	failStart, err := startFailsFromAnnotations(s.pod.Annotations, c.Name, restarts)
	if err != nil {
		return err // checked with the other annotations above; kept for the compiler's sake
	}
	if r.failCall(CallStartContainer) || failStart {
		return s.failStart(c, rec)
	}
	r.observeOp("create_container", 0, nil)
	r.observeOp("start_container", r.lat.ContainerStart, nil)
	if scripted {
		pod, key := s.pod, s.key
		s.schedule(s.at, func(at time.Time) { r.containerStarted(at, pod, key, rec, script, true) })
	} else {
		s.scheduleContainer(stepStarted, rec)
	}
	// A start counts as failed when its postStart hook fails: startContainer returns
	// ErrPostStartHook, and SyncPod counts it in started_containers_errors_total.
	if c.Lifecycle != nil && c.Lifecycle.PostStart != nil {
		err := s.postStart(c, rec)
		if err != nil {
			r.startedContainer(s.pod, c, kubecontainer.ErrPostStartHook)
		} else {
			r.startedContainer(s.pod, c, nil)
		}
		return err
	}
	r.startedContainer(s.pod, c, nil)
	return nil
}

// postStart runs c's postStart hook right after the container started, as startContainer does:
// the sync blocks until the hook returns, so the next init container (after a sidecar) or the
// next container waits for it. A failed hook records FailedPostStartHook, kills the container
// with the message "FailedPostStartHook" (running its preStop hook), and fails the start with
// PostStartHookError.
func (s *podSync) postStart(c *v1.Container, rec *containerRec) error {
	r := s.r
	uid := string(s.pod.UID)
	run := r.runHook(s.pod, c, HookPostStart, c.Lifecycle.PostStart, s.podIPs())
	e := trace.Event{Event: trace.KindHook, Pod: s.key, UID: uid, Container: c.Name, Reason: HookPostStart, Delay: run.d, Message: "running", Func: "startContainer"}
	s.schedule(s.at, func(time.Time) { r.emit(e) })
	s.at = s.at.Add(run.d)
	r.scheduleHookEnd(s.at, true, s.pod, s.key, uid, c.Name, HookPostStart, run, "startContainer",
		kubeEvent{v1.EventTypeWarning, events.FailedPostStartHook, "PostStartHook failed"})
	if run.err == "" {
		return nil
	}
	s.at = r.stopContainers(s.pod, s.key, uid, s.podIPs(), []killTarget{{rec: rec, spec: c, message: reasonFailedPostStartHook, reason: reasonFailedPostStartHook, why: reasonFailedPostStartHook}}, nil, false, s.at)
	return fmt.Errorf("start container %s of pod %s: %w", c.Name, s.key, &kubecontainer.PostStartHookError{Container: c.Name, Message: run.msg})
}

// failStart is a StartContainer call that fails: containerd leaves the created container exited
// with reason StartError, exit code 128, its message the error and its start time the epoch; the
// kubelet records "Error: <message>" and the container shows RunContainerError.
func (s *podSync) failStart(c *v1.Container, rec *containerRec) error {
	r, pod, key := s.r, s.pod, s.key
	msg := startErrorMessage(c)
	r.startedContainer(pod, c, kubecontainer.ErrRunContainer)
	r.observeOp("create_container", 0, nil)
	r.observeOp("start_container", r.lat.ContainerStart, kubecontainer.ErrRunContainer)
	s.schedule(s.at, func(at time.Time) {
		if r.containers[rec.status.ID] != rec || rec.status.State != kubecontainer.ContainerStateCreated {
			return
		}
		rec.status.State = kubecontainer.ContainerStateExited
		rec.status.StartedAt = time.Unix(0, 0).UTC()
		rec.status.FinishedAt = at
		rec.status.ExitCode, rec.status.Reason, rec.status.Message = ExitCodeStartError, ReasonStartError, msg
		r.emitAndRecord(pod, trace.Event{Event: trace.KindFailed, Pod: key, UID: string(pod.UID), Container: c.Name, ExitCode: trace.Int(ExitCodeStartError), Reason: "RunContainerError", Message: msg, Func: "startContainer"},
			kubeEvent{v1.EventTypeWarning, events.FailedToStartContainer, "Error: " + msg})
	})
	return &kubecontainer.StartError{Container: c.Name, Message: msg, Err: kubecontainer.ErrRunContainer}
}

// imageErrorReason is the reason EnsureImageExists failed with, as startContainer's event names it.
func imageErrorReason(err error) string {
	for _, known := range []error{kubecontainer.ErrImagePullBackOff, kubecontainer.ErrImagePull, kubecontainer.ErrImageNeverPull, kubecontainer.ErrInvalidImageName} {
		if errors.Is(err, known) {
			return known.Error()
		}
	}
	return err.Error()
}

// doBackOff holds a restart back while the newest exited instance of c is in crash-loop back-off,
// and otherwise records the restart in the back-off.
func (s *podSync) doBackOff(c *v1.Container) error {
	if s.backOff == nil {
		return nil
	}
	var exited *kubecontainer.ContainerStatus
	for i := range s.status.ContainerStatuses {
		cs := &s.status.ContainerStatuses[i]
		if cs.Name == c.Name && cs.State == kubecontainer.ContainerStateExited {
			exited = cs
			break
		}
	}
	if exited == nil {
		return nil
	}
	id := backoffKey(s.pod, c)
	if s.backOff.IsInBackOffSinceAt(id, exited.FinishedAt, s.at) {
		d := s.backOff.Get(id)
		err := fmt.Errorf("back-off %s restarting failed container=%s pod=%s: %w", d, c.Name, formatPod(s.pod), kubecontainer.ErrCrashLoopBackOff)
		s.emitAndRecordAt(trace.Event{Event: trace.KindBackOff, Pod: s.key, UID: string(s.pod.UID), Container: c.Name, Delay: d, Reason: "CrashLoopBackOff", Func: "doBackOff"},
			kubeEvent{v1.EventTypeWarning, events.BackOffStartContainer, fmt.Sprintf("Back-off restarting failed container %s in pod %s", c.Name, formatPod(s.pod))})
		return &kubecontainer.BackoffError{Err: err, Expiry: exited.FinishedAt.Add(d)}
	}
	s.backOff.NextAt(id, exited.FinishedAt, s.at)
	return nil
}

// ensureImage makes c's image present: the kubelet's EnsureImageExists with its pull policy and
// per-pod image back-off.
func (s *podSync) ensureImage(c *v1.Container) error {
	r := s.r
	image := c.Image
	policy := c.ImagePullPolicy
	if policy == "" {
		policy = defaultPullPolicy(image)
	}
	pulledAt, ok := r.images[image]
	present := ok && !pulledAt.After(s.at)
	ev := trace.Event{Pod: s.key, UID: string(s.pod.UID), Container: c.Name, Message: image, Func: "EnsureImageExists"}
	if err := r.checkImageName(image); err != nil {
		// applyDefaultImageTag, before any pull policy: the reference does not parse.
		msg := fmt.Sprintf("Failed to apply default image tag %q: %v", image, err)
		ev.Event, ev.Reason, ev.Message = trace.KindFailed, "InvalidImageName", msg
		s.emitAndRecordAt(ev, kubeEvent{v1.EventTypeWarning, events.FailedToInspectImage, msg})
		return &kubecontainer.StartError{Container: c.Name, Message: msg, Err: kubecontainer.ErrInvalidImageName}
	}
	switch {
	case policy == v1.PullNever && present, policy == v1.PullIfNotPresent && present:
		// v1.35's image manager (KubeletEnsureSecretPulledImages, beta and on) records that the
		// image is there, and ends any pull time the startup tracker is counting. Every image
		// here was pulled by the kubelet without credentials, so any pod may use it.
		r.pulled(s.pod.UID, s.at)
		ev.Event, ev.Reason = trace.KindPulled, "AlreadyPresent"
		s.emitAndRecordAt(ev, kubeEvent{v1.EventTypeNormal, events.PulledImage, r.alreadyPresentMessage(image)})
		return nil
	case policy == v1.PullNever:
		ev.Event, ev.Reason = trace.KindFailed, "ErrImageNeverPull"
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", image)
		s.emitAndRecordAt(ev, kubeEvent{v1.EventTypeWarning, events.ErrImageNeverPullPolicy, msg})
		return &kubecontainer.StartError{Container: c.Name, Message: msg, Err: kubecontainer.ErrImageNeverPull}
	}
	id := string(s.pod.UID) + "_" + image
	if r.imageBackoff.IsInBackOffSinceUpdate(id, s.at) {
		d := r.imageBackoff.Get(id)
		ev.Event, ev.Reason, ev.Delay = trace.KindBackOff, "ImagePullBackOff", d
		s.emitAndRecordAt(ev, kubeEvent{v1.EventTypeNormal, events.BackOffPullImage, fmt.Sprintf("Back-off pulling image %q", image)})
		// A plain error, as in v1.35.0, where only doBackOff returns a BackoffError: the pod
		// worker retries after jitter(backOffPeriod), not at the pull back-off's expiry.
		return fmt.Errorf("back-off pulling image %q: %w", image, kubecontainer.ErrImagePullBackOff)
	}
	ev.Event = trace.KindPull
	if r.pulls != nil {
		r.pulls.RecordImageStartedPulling(s.pod.UID, s.at)
	}
	slot, start := r.reservePull(s.at)
	ev.Delay = start.Sub(s.at)
	s.emitAndRecordAt(ev, kubeEvent{v1.EventTypeNormal, events.PullingImage, fmt.Sprintf("Pulling image %q", image)})
	ev.Delay = 0
	s.at = r.pullEnd(image, start)
	r.releasePull(slot, s.at)
	f := fetch{image: image, start: start, prev: pulledAt, hadPrev: ok}
	if r.pullFailures[image] > 0 {
		r.observeOp("pull_image", s.at.Sub(start), kubecontainer.ErrImagePull)
		r.pullFailures[image]--
		f.failure = true
		r.planFetch(f)
		r.imageBackoff.NextAt(id, s.at, s.at)
		ev.Event, ev.Reason = trace.KindFailed, "ErrImagePull"
		s.emitAndRecordAt(ev, kubeEvent{v1.EventTypeWarning, events.FailedToPullImage, fmt.Sprintf("Failed to pull image %q", image)})
		return fmt.Errorf("pull image %q for container %s: %w", image, c.Name, kubecontainer.ErrImagePull)
	}
	r.observeOp("pull_image", s.at.Sub(start), nil)
	if !ok || s.at.Before(pulledAt) {
		r.images[image] = s.at
		r.state++
		r.planFetch(f)
	}
	r.pulled(s.pod.UID, s.at)
	ev.Event = trace.KindPulled
	s.emitAndRecordAt(ev, kubeEvent{v1.EventTypeNormal, events.PulledImage, fmt.Sprintf("Successfully pulled image %q", image)})
	return nil
}

// pulled tells the startup tracker that the pod's image is there at at.
func (r *Runtime) pulled(uid types.UID, at time.Time) {
	if r.pulls != nil {
		r.pulls.RecordImageFinishedPulling(uid, at)
	}
}

// purgeInitContainers removes every init container instance of the pod at the sync's current
// instant, so a new sandbox runs initialization from the start. The kubelet's SyncPod makes these
// RemoveContainer calls: a restart before then drops them.
func (s *podSync) purgeInitContainers() {
	r, pod := s.r, s.pod
	if len(pod.Spec.InitContainers) == 0 {
		return
	}
	names := map[string]bool{}
	for _, c := range pod.Spec.InitContainers {
		names[c.Name] = true
	}
	purge := func(time.Time) {
		rec := r.pods[pod.UID]
		if rec == nil {
			return
		}
		for _, c := range append([]*containerRec(nil), rec.containers...) {
			if names[c.status.Name] && c.status.State != kubecontainer.ContainerStateRunning {
				r.removeContainer(rec, c, "purgeInitContainers")
			}
		}
	}
	r.postOfProcess(s.at, purge)
}

// backoffKey names a container in the crash-loop back-off: v1.35's GetBackoffKey, an FNV-64a hash
// of the pod's name, namespace and UID and the container's name, image and resources. A new image
// or new resources give a fresh entry, so the container restarts at once.
func backoffKey(pod *v1.Pod, c *v1.Container) string {
	key := strings.Join([]string{pod.Name, pod.Namespace, string(pod.UID), c.Name, c.Image, c.Resources.String()}, "/")
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return strconv.FormatUint(h.Sum64(), 16)
}

// formatPod is the kubelet's format.Pod: "name_namespace(uid)".
func formatPod(pod *v1.Pod) string {
	return pod.Name + "_" + pod.Namespace + "(" + string(pod.UID) + ")"
}

// defaultPullPolicy is the API server's default: Always for an untagged or ":latest" image,
// IfNotPresent otherwise.
func defaultPullPolicy(image string) v1.PullPolicy {
	if strings.Contains(image, "@") {
		return v1.PullIfNotPresent
	}
	name := image[strings.LastIndex(image, "/")+1:]
	i := strings.LastIndex(name, ":")
	if i < 0 || name[i+1:] == "latest" {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}

// reservePull takes the image puller slot that frees first for a pull asked for at the instant
// at, and returns it (-1 without a limit) and when the pull starts: at once without a limit, else
// when the slot is free. The kubelet's serial puller is one slot, its parallel puller with
// maxParallelImagePulls that many; a pull runs to its end even if its pod is killed meanwhile, so
// the slot stays taken until releasePull's instant.
func (r *Runtime) reservePull(at time.Time) (slot int, start time.Time) {
	if len(r.pullSlots) == 0 {
		return -1, at
	}
	i := 0
	for j := range r.pullSlots {
		if r.pullSlots[j].Before(r.pullSlots[i]) {
			i = j
		}
	}
	start = at
	if r.pullSlots[i].After(start) {
		start = r.pullSlots[i]
	}
	return i, start
}

// releasePull frees the slot reservePull took at the pull's end.
func (r *Runtime) releasePull(slot int, end time.Time) {
	if slot >= 0 {
		r.pullSlots[slot] = end
	}
}

// pullEnd is when a pull of image that starts at start ends. The runtime's content store decides:
// an image whose pull completed by then has every layer there, and the pull only resolves its
// manifest (ImagePullPresent), as containerd's pull of a present image; an image another pull is
// fetching is ready when that pull ends, its layers fetched once; any other takes ImagePull. So
// with serialized pulls, the pulls of one image that queued behind its first are quick, as on a
// real node, where EnsureImageExists checked for the image before the pull queued.
func (r *Runtime) pullEnd(image string, start time.Time) time.Time {
	pulledAt, ok := r.images[image]
	switch {
	case !ok:
		return start.Add(r.lat.ImagePull)
	case !pulledAt.After(start):
		return start.Add(r.lat.ImagePullPresent)
	}
	return later(pulledAt, start.Add(r.lat.ImagePullPresent))
}

// fetch is a pull as the runtime took it: the image, the instant the PullImage call reaches it
// (start: after the wait in the kubelet's puller queue), what images held for the image before,
// and whether the pull used up a scripted failure.
type fetch struct {
	image            string
	start, prev      time.Time
	hadPrev, failure bool
}

// planFetch remembers f until its PullImage has reached the runtime, and forgets the fetches that
// did by now.
func (r *Runtime) planFetch(f fetch) {
	now := r.clock.Now()
	r.fetches = slices.DeleteFunc(r.fetches, func(f fetch) bool { return !f.start.After(now) })
	r.fetches = append(r.fetches, f)
}

// unsentFetches returns the planned fetches whose PullImage the kubelet process had not sent by
// now, the last planned first: those still wait in its puller's queue, which is its memory, or
// come at a later step of its SyncPod.
func (r *Runtime) unsentFetches(now time.Time) []fetch {
	var out []fetch
	for i := len(r.fetches) - 1; i >= 0; i-- {
		if r.fetches[i].start.After(now) {
			out = append(out, r.fetches[i])
		}
	}
	return out
}

// undoUnsentFetches is the runtime's side of a kubelet restart at now: the pulls the old process
// had not sent never reach containerd, so the image is as it was before them and a scripted
// failure they used up is left for the next pull.
func (r *Runtime) undoUnsentFetches(now time.Time) {
	for _, f := range r.unsentFetches(now) {
		if f.failure {
			r.pullFailures[f.image]++
			continue
		}
		if f.hadPrev {
			r.images[f.image] = f.prev
		} else {
			delete(r.images, f.image)
		}
		r.state++
	}
	r.fetches = r.fetches[:0]
}

// sentImages is images without the fetches the kubelet process had not sent by now: what a
// restarted process finds in the runtime (checkpoint).
func (r *Runtime) sentImages(now time.Time) map[string]time.Time {
	unsent := r.unsentFetches(now)
	if len(unsent) == 0 {
		return r.images
	}
	images := maps.Clone(r.images)
	for _, f := range unsent {
		switch {
		case f.failure:
		case f.hadPrev:
			images[f.image] = f.prev
		default:
			delete(images, f.image)
		}
	}
	return images
}

// later returns the later of two instants.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// containerCreated is CreateContainer returning at at for rec, a container of pod (trace key key):
// the container joins the pod's record, and Created is traced and recorded.
func (r *Runtime) containerCreated(at time.Time, pod *v1.Pod, key string, rec *containerRec) {
	rec.status.CreatedAt = at
	p := r.podFor(pod.UID, pod.Name, pod.Namespace, key)
	p.addContainer(rec)
	r.containers[rec.status.ID] = rec
	r.emitAndRecord(pod, trace.Event{Event: trace.KindCreated, Pod: key, UID: string(pod.UID), Container: rec.status.Name, Message: rec.status.ID, Func: "startContainer"},
		kubeEvent{v1.EventTypeNormal, events.CreatedContainer, "Container created"})
}

// containerStarted is StartContainer returning at at for rec: it runs, Started is traced and
// recorded, and the exit its behavior scripts (a Behavior set for it, else script from the pod's
// annotations when scripted) is scheduled. A container removed or stopped before then stays so.
func (r *Runtime) containerStarted(at time.Time, pod *v1.Pod, key string, rec *containerRec, script Behavior, scripted bool) {
	if r.containers[rec.status.ID] != rec || rec.status.State != kubecontainer.ContainerStateCreated {
		return // removed or stopped before it ran
	}
	rec.status.State = kubecontainer.ContainerStateRunning
	rec.status.StartedAt = at
	r.emitAndRecord(pod, trace.Event{Event: trace.KindStarted, Pod: key, UID: string(pod.UID), Container: rec.status.Name, Message: rec.status.ID, Func: "startContainer"},
		kubeEvent{v1.EventTypeNormal, events.StartedContainer, "Container started"})
	b, ok := r.behaviors[behaviorKey{pod: key, container: rec.status.Name}]
	if !ok && scripted {
		b, ok = script, true
	}
	if ok && b.RunFor > 0 {
		r.scheduleBehaviorExit(rec, at.Add(b.RunFor), b)
	}
}
