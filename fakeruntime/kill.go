package fakeruntime

import (
	"errors"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/events"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Exit codes a stopped container reports.
const (
	// ExitCodeStopped is what a container that handled SIGTERM and exited within its grace period
	// reports. PID 1 in a container ignores SIGTERM unless it installs a handler, so a container
	// that stops before the deadline did handle it, and most programs then exit 0.
	ExitCodeStopped = 0
	// ExitCodeKilled is what a container killed with SIGKILL at the end of its grace period
	// reports: 128 + 9.
	ExitCodeKilled = 137
	// ExitCodeStartError is what containerd reports for a container whose process could not be
	// started.
	ExitCodeStartError = 128
)

// The reasons containerd gives an exited container besides Completed and Error.
const (
	ReasonOOMKilled  = "OOMKilled"
	ReasonStartError = "StartError"
)

// minimumGracePeriodSeconds is kuberuntime's minimumGracePeriodInSeconds: no container gets
// less time than this to stop, even after its preStop hook used up the grace period.
const minimumGracePeriodSeconds int64 = 2

// KillPod stops the running containers of running (all of the pod's, if running is nil), then its
// sandboxes: the kubelet's killPodWithSyncResult. pod may be nil for a pod that exists only in the
// runtime.
//
// The grace period is gracePeriodOverride if given, used as is; otherwise the pod's
// DeletionGracePeriodSeconds, else its spec's TerminationGracePeriodSeconds, else 2s, and never
// less than 2s. A container exits ContainerStop after the call with ExitCodeStopped if that is
// within the grace period, or at the deadline with ExitCodeKilled if it is not or if the
// container is scripted to ignore SIGTERM. A container that was about to exit by itself earlier
// does so. The sandboxes stop when the last container has; that instant is Result.Done.
func (r *Runtime) KillPod(pod *v1.Pod, running *kubecontainer.Pod, gracePeriodOverride *int64) (kubecontainer.Result, error) {
	now := r.clock.Now()
	r.applyDue(now)
	if pod == nil && running == nil {
		return kubecontainer.Result{Done: now}, errors.New("kill pod: neither a pod nor a running pod given")
	}
	if err := r.checkUp(now); err != nil {
		e := trace.Event{Event: trace.KindError, Message: err.Error(), Func: "KillPod"}
		e.Pod, e.UID = r.podIdentity(pod, running)
		r.emit(e)
		return kubecontainer.Result{Done: now}, fmt.Errorf("kill pod %s: %w", e.Pod, err)
	}
	done := r.killPodAt(pod, running, gracePeriodOverride, now, "")
	r.applyDue(now)
	return kubecontainer.Result{Done: done}, nil
}

// killPodAt stops the pod's containers and sandboxes from the instant now and returns when the
// last one is stopped: killPodWithSyncResult. Every container's kill starts at once, as the
// kubelet's goroutines do; in a pod with a sidecar, the sidecars wait for the regular containers
// and for the sidecars declared after them (killContainersWithSyncResult's terminationOrdering).
func (r *Runtime) killPodAt(pod *v1.Pod, running *kubecontainer.Pod, override *int64, now time.Time, why string) time.Time {
	r.generation[podUID(pod, running)]++
	rec := r.pods[podUID(pod, running)]
	if rec == nil {
		return now
	}
	key, uid := r.podIdentity(pod, running)
	var targets []*containerRec
	var sandboxes []*sandboxRec
	if running == nil {
		targets = append(targets, rec.containers...)
		sandboxes = rec.sandboxes
	} else {
		for _, c := range running.Containers {
			if cr := r.containers[c.ID]; cr != nil && cr.podUID == rec.uid {
				targets = append(targets, cr)
			}
		}
		for _, s := range running.Sandboxes {
			for _, sr := range rec.sandboxes {
				if sr.status.ID == s.ID {
					sandboxes = append(sandboxes, sr)
				}
			}
		}
	}
	slices.SortFunc(targets, func(a, b *containerRec) int { return a.seq - b.seq })
	var kills []killTarget
	for _, c := range targets {
		if c.status.State == kubecontainer.ContainerStateRunning {
			kills = append(kills, killTarget{rec: c, spec: containerSpec(pod, c.status.Name), why: why})
		}
	}
	done := r.stopContainers(pod, key, uid, rec.podIPs(), kills, override, pod != nil && hasSidecar(pod), now)
	for _, s := range sandboxes {
		if s.status.State != kubecontainer.SandboxReady {
			continue
		}
		// The kubelet calls StopPodSandbox after its wait for the containers: a process that
		// ends before then never calls it. A StopContainer the process sent after a wait
		// (stopContainers) scheduled the exit after this step, at the same instant when the stop
		// is immediate: the step then goes once more behind it, so the sandbox stops after the
		// containers, as the kubelet's wait makes it.
		var stop func(time.Time)
		again := true
		stop = func(at time.Time) {
			if s.status.State != kubecontainer.SandboxReady {
				return
			}
			if again && anyRunning(kills) {
				again = false
				r.postOfProcess(at, stop)
				return
			}
			s.status.State = kubecontainer.SandboxNotReady
			r.emit(trace.Event{Event: trace.KindSandbox, Pod: key, UID: uid, From: string(kubecontainer.SandboxReady), To: string(kubecontainer.SandboxNotReady), Message: s.status.ID, Func: "StopPodSandbox"})
		}
		r.postOfProcess(done, stop)
	}
	return done
}

// anyRunning reports whether a container a kill targets still runs.
func anyRunning(kills []killTarget) bool {
	for _, k := range kills {
		if k.rec.status.State == kubecontainer.ContainerStateRunning {
			return true
		}
	}
	return false
}

// killTarget is one running container a kill stops: its record, its spec (nil for a pod known
// only to the runtime), the Killing event's message (empty for "Stopping container <name>"), the
// kill reason, and why, the trace's explanation.
type killTarget struct {
	rec                  *containerRec
	spec                 *v1.Container
	message, reason, why string
}

// killPlan is what stopContainers decided for one target.
type killPlan struct {
	t       killTarget
	grace   int64         // seconds left for StopContainer, before the 2s floor
	turn    time.Time     // when StopContainer is called: after preStop and the ordering wait
	hook    *hookRun      // the preStop run, if any
	stopFor time.Duration // how long the stop takes: the container's own stop time or the timeout
	timeout time.Duration // StopContainer's timeout
	code    int
	exit    time.Time
}

// stopContainers kills every target from the instant now (which may be later than the clock, for
// a kill at the end of a SyncPod step), in parallel, and returns when the last
// one exited: the kubelet's killContainer per container. Each gets the Killing event at once,
// then its preStop hook, which eats into its grace period in whole seconds; with ordered (a pod
// with a sidecar) a sidecar then waits, out of what is left of its grace, until every regular
// container and the next sidecar in the spec have exited; and the container gets what remains,
// never less than 2s, to stop before SIGKILL. podIPs are the IPs the runtime reports for the pod's
// sandbox when the kill starts, at which an HTTP preStop hook without a host is aimed.
func (r *Runtime) stopContainers(pod *v1.Pod, key, uid string, podIPs []string, targets []killTarget, override *int64, ordered bool, now time.Time) time.Time {
	plans := make([]killPlan, len(targets))
	byName := map[string]*killPlan{}
	for i, t := range targets {
		p := &plans[i]
		*p = killPlan{t: t, grace: containerGracePeriod(pod, t.spec, t.reason), turn: now}
		if override != nil {
			p.grace = *override
		}
		if t.spec != nil && t.spec.Lifecycle != nil && t.spec.Lifecycle.PreStop != nil && p.grace > 0 {
			run := r.runHook(pod, t.spec, HookPreStop, t.spec.Lifecycle.PreStop, podIPs)
			waited := min(run.d, time.Duration(p.grace)*time.Second)
			p.hook = &run
			p.grace -= int64(waited.Seconds())
			p.turn = now.Add(waited)
		}
		byName[t.rec.status.Name] = p
	}
	plan := func(p *killPlan) {
		grace := time.Duration(max(p.grace, minimumGracePeriodSeconds)) * time.Second
		b := r.behaviors[behaviorKey{pod: key, container: p.t.rec.status.Name}]
		sb := r.stopBehavior(key, p.t.rec.status.Name, b)
		p.timeout = grace
		p.stopFor, p.code = grace, ExitCodeKilled
		if !sb.IgnoreSIGTERM && sb.After <= grace {
			p.stopFor, p.code = sb.After, ExitCodeStopped
		}
		p.exit = plannedExit(p.t.rec, p.turn.Add(p.stopFor))
	}
	for i := range plans {
		if !ordered || !isSidecar(pod, plans[i].t.rec.status.Name) {
			plan(&plans[i])
		}
	}
	if ordered {
		// Sidecars in reverse spec order: each waits for every regular container and for the
		// sidecar declared after it, bounded by its remaining grace.
		ready := now
		for i := range pod.Spec.Containers {
			if p := byName[pod.Spec.Containers[i].Name]; p != nil && p.exit.After(ready) {
				ready = p.exit
			}
		}
		for i := len(pod.Spec.InitContainers) - 1; i >= 0; i-- {
			ic := &pod.Spec.InitContainers[i]
			p := byName[ic.Name]
			if p == nil || !kubecontainer.IsRestartableInitContainer(ic) {
				continue
			}
			if p.grace > 0 && ready.After(p.turn) {
				until := min(ready.Sub(p.turn), time.Duration(p.grace)*time.Second)
				p.grace -= int64(until.Seconds())
				p.turn = p.turn.Add(until)
			}
			plan(p)
			if p.exit.After(ready) {
				ready = p.exit
			}
		}
	}
	// Everything the kill does at an instant later than the clock's is the kubelet process's own
	// doing, after a wait (a postStart hook, an earlier kill, a preStop hook, the sidecars'
	// ordering): a process that ends before then never records the event, runs the hook or sends
	// StopContainer (postOfProcess). A StopContainer sent now is the runtime's to finish.
	clock := r.clock.Now()
	done := now
	for i := range plans {
		p := &plans[i]
		name := p.t.rec.status.Name
		msg := p.t.message
		if msg == "" {
			msg = "Stopping container " + name
		}
		e := trace.Event{Event: trace.KindKilling, Pod: key, UID: uid, Container: name, Delay: p.timeout, Message: p.t.why, Func: "killContainer"}
		k := kubeEvent{v1.EventTypeNormal, events.KillingContainer, msg}
		r.postOfProcess(now, func(time.Time) { r.emitAndRecord(pod, e, k) })
		if p.hook != nil {
			e := trace.Event{Event: trace.KindHook, Pod: key, UID: uid, Container: name, Reason: HookPreStop, Delay: p.hook.d, Message: "running", Func: "executePreStopHook"}
			r.postOfProcess(now, func(time.Time) { r.emit(e) })
			// A hook that outlives the grace keeps running in the kubelet, but the container is
			// gone by then; its end is not simulated.
			if end := now.Add(p.hook.d); !end.After(p.exit) {
				r.scheduleHookEnd(end, true, pod, key, uid, name, HookPreStop, *p.hook, "executePreStopHook",
					kubeEvent{v1.EventTypeWarning, events.FailedPreStopHook, "PreStopHook failed"})
			}
		}
		t := p.exit
		if p.turn.After(clock) {
			c, at, code := p.t.rec, p.turn.Add(p.stopFor), p.code
			r.postOfProcess(p.turn, func(time.Time) { r.stopContainerAt(c, at, code) })
		} else {
			t = r.stopContainerAt(p.t.rec, p.turn.Add(p.stopFor), p.code)
		}
		if t.After(done) {
			done = t
		}
	}
	return done
}

// plannedExit is when c exits if it is stopped at the instant at: then, or earlier if it was
// about to exit or be killed anyway. stopContainerAt makes it so.
func plannedExit(c *containerRec, at time.Time) time.Time {
	for _, t := range []*transition{c.exitAt, c.killAt} {
		if t != nil && !t.cancelled && !t.at.After(at) {
			return t.at
		}
	}
	return at
}

// scheduleHookEnd traces the end of a hook run at the instant at and, if it failed, records
// failEvent. ofProcess is for a hook a SyncPod runs (postStart): a kubelet restart before its end
// drops the trace and the event with the process's other steps (see postOfProcess).
func (r *Runtime) scheduleHookEnd(at time.Time, ofProcess bool, pod *v1.Pod, key, uid, container, hook string, run hookRun, fn string, failEvent kubeEvent) {
	post := r.post
	if ofProcess {
		post = r.postOfProcess
	}
	e := trace.Event{Event: trace.KindHook, Pod: key, UID: uid, Container: container, Reason: hook, Message: "succeeded", Func: fn}
	if run.answered != 0 {
		// The kubelet discards the answer; the trace says what it was.
		e.Message = fmt.Sprintf("succeeded (HTTP %d)", run.answered)
	}
	if run.err != "" {
		e.Message = "failed: " + run.msg
		post(at, func(time.Time) { r.emitAndRecord(pod, e, failEvent) })
		return
	}
	post(at, func(time.Time) { r.emit(e) })
}

// hasSidecar reports whether the pod has a restartable init container, which makes its
// termination ordered.
func hasSidecar(pod *v1.Pod) bool {
	for i := range pod.Spec.InitContainers {
		if kubecontainer.IsRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			return true
		}
	}
	return false
}

// isSidecar reports whether name is a sidecar of pod.
func isSidecar(pod *v1.Pod, name string) bool {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return kubecontainer.IsRestartableInitContainer(&pod.Spec.InitContainers[i])
		}
	}
	return false
}

// containerSpec returns the spec of the named container of pod (init or regular), or nil.
func containerSpec(pod *v1.Pod, name string) *v1.Container {
	if pod == nil {
		return nil
	}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// stopContainerAt makes c exit at the instant at with code, unless it exits earlier anyway, and
// returns when it exits.
func (r *Runtime) stopContainerAt(c *containerRec, at time.Time, code int) time.Time {
	for _, t := range []*transition{c.exitAt, c.killAt} {
		if t != nil && !t.cancelled && !t.at.After(at) {
			return t.at
		}
	}
	cancel(c.killAt)
	c.killAt = r.scheduleAt(at, func(at time.Time) { r.exitContainer(c, at, code, "killContainer") })
	return at
}

// scheduleExit makes a running container exit by itself at the instant at, replacing any earlier
// plan for a natural exit.
func (r *Runtime) scheduleExit(c *containerRec, at time.Time, code int) {
	cancel(c.exitAt)
	c.exitAt = r.scheduleAt(at, func(at time.Time) { r.exitContainer(c, at, code, "") })
}

// scheduleBehaviorExit schedules the exit a Behavior scripts: an OOM kill or an ordinary exit.
func (r *Runtime) scheduleBehaviorExit(c *containerRec, at time.Time, b Behavior) {
	if !b.OOM {
		r.scheduleExit(c, at, b.ExitCode)
		return
	}
	cancel(c.exitAt)
	c.exitAt = r.scheduleAt(at, func(at time.Time) { r.exitContainerWithReason(c, at, ExitCodeKilled, ReasonOOMKilled, "") })
}

// exitContainer moves a running container to exited, with the reason containerd gives an
// ordinary exit.
func (r *Runtime) exitContainer(c *containerRec, at time.Time, code int, fn string) {
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	r.exitContainerWithReason(c, at, code, reason, fn)
}

// exitContainerWithReason moves a running container to exited with the runtime's reason.
func (r *Runtime) exitContainerWithReason(c *containerRec, at time.Time, code int, reason, fn string) {
	if r.containers[c.status.ID] != c || c.status.State != kubecontainer.ContainerStateRunning {
		return
	}
	cancel(c.exitAt)
	cancel(c.killAt)
	c.exitAt, c.killAt = nil, nil
	c.status.State = kubecontainer.ContainerStateExited
	c.status.FinishedAt = at
	c.status.ExitCode = code
	c.status.Reason = reason
	r.changed()
	rec := r.pods[c.podUID]
	r.emit(trace.Event{Event: trace.KindExited, Pod: rec.key(), UID: string(c.podUID), Container: c.status.Name, ExitCode: trace.Int(code), Reason: c.status.Reason, Message: c.status.ID, Func: fn})
}

// containerGracePeriod is the kubelet's setTerminationGracePeriod: the pod's
// deletionGracePeriodSeconds when it is being deleted, else, for a kill by a failed probe, the
// probe's own terminationGracePeriodSeconds, else the spec's terminationGracePeriodSeconds, else
// 2. The 2s floor of the stop itself is applied after the hook and the ordering wait.
func containerGracePeriod(pod *v1.Pod, c *v1.Container, reason string) int64 {
	switch {
	case pod == nil:
		return minimumGracePeriodSeconds
	case pod.DeletionGracePeriodSeconds != nil:
		return *pod.DeletionGracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		var probe *v1.Probe
		switch {
		case c == nil:
		case reason == reasonStartupProbe:
			probe = c.StartupProbe
		case reason == reasonLivenessProbe:
			probe = c.LivenessProbe
		}
		if probe != nil && probe.TerminationGracePeriodSeconds != nil {
			return *probe.TerminationGracePeriodSeconds
		}
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return minimumGracePeriodSeconds
}

// podIdentity returns the trace's pod key and UID for a kill.
func (r *Runtime) podIdentity(pod *v1.Pod, running *kubecontainer.Pod) (string, string) {
	if pod != nil {
		return r.keyOf(pod), string(pod.UID)
	}
	if rec := r.pods[running.ID]; rec != nil && rec.name == running.Name && rec.namespace == running.Namespace {
		return rec.key(), string(running.ID)
	}
	return podkey.Build(running.Namespace, running.Name), string(running.ID)
}

// podUID returns the UID of the pod a kill is for.
func podUID(pod *v1.Pod, running *kubecontainer.Pod) types.UID {
	if pod != nil {
		return pod.UID
	}
	return running.ID
}
