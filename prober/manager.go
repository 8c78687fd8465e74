package prober

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/metrics"
	"github.com/minikubelet/minikubelet/prober/results"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// restartGracePeriod is the kubelet's kubeletRestartGracePeriod: a container that was running
// this long before the kubelet started is taken to have survived a kubelet restart, and keeps its
// started and ready state (the ChangeContainerStatusOnKubeletRestart gate is off in v1.35).
const restartGracePeriod = 10 * time.Second

// StatusProvider is the status manager as probe workers read it: the cached status of a pod.
type StatusProvider interface {
	GetPodStatus(uid types.UID) (v1.PodStatus, bool)
}

// EventRecorder records one Kubernetes event about object. client-go's record.EventRecorder
// satisfies it.
type EventRecorder interface {
	Event(object runtime.Object, eventType, reason, message string)
}

// Options configure a Manager.
type Options struct {
	// Clock is the time of every probe. Required.
	Clock clock.PassiveClock
	// Tracer receives the workers' decisions. Required; trace.Discard drops them.
	Tracer trace.Tracer
	// Status is the status manager the workers read container IDs and states from. Required.
	Status StatusProvider
	// Rand draws each worker's initial delay. Required; seed it for replays.
	Rand *rand.Rand
	// Recorder receives the Unhealthy events. Nil records none.
	Recorder EventRecorder
	// Script holds the outcomes scripted from outside. Nil leaves the pods' annotations and the
	// default, success.
	Script *Script
	// Metrics receives prober_probe_total and prober_probe_duration_seconds. Nil records none.
	Metrics Metrics
}

// Metrics is the prober's registry (the kubelet's /metrics/probes).
type Metrics interface {
	ObserveProbe(l metrics.ProbeLabels, result string, d time.Duration)
	ForgetProbe(l metrics.ProbeLabels)
}

func (o Options) validate() error {
	var missing []string
	for _, c := range []struct {
		name  string
		unset bool
	}{{"Clock", o.Clock == nil}, {"Tracer", o.Tracer == nil}, {"Status", o.Status == nil}, {"Rand", o.Rand == nil}} {
		if c.unset {
			missing = append(missing, c.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	return nil
}

// Update is a changed value in one of the results caches: what the kubelet's syncLoopIteration
// reads from the liveness, readiness and startup managers' channels.
type Update struct {
	Probe ProbeType
	results.Update
}

// workerKey identifies a worker: the kubelet's probeKey.
type workerKey struct {
	uid       types.UID
	container string
	probe     ProbeType
}

// Manager is the kubelet's prober manager with its workers and the three results caches. It is a
// core: one goroutine, no lock.
type Manager struct {
	opts  Options
	start time.Time
	// workers are the live workers; seq numbers them in creation order, which breaks ties between
	// workers due at the same instant.
	workers map[workerKey]*worker
	seq     int
	// version numbers the set of live workers (Version).
	version uint64
	caches  [3]*results.Cache
	// updates are the cache changes not yet handed out by Advance, in order.
	updates []Update
}

// New returns a Manager; the kubelet process starts now, for the initial delay and the restart
// rules.
func New(opts Options) (*Manager, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new prober manager: %w", err)
	}
	m := &Manager{opts: opts, start: opts.Clock.Now(), workers: map[workerKey]*worker{}}
	for i := range m.caches {
		m.caches[i] = results.NewCache()
	}
	return m, nil
}

// Result returns the cached result of the probe of the type for the container instance (its
// runtime ID, without the "type://" prefix).
func (m *Manager) Result(t ProbeType, containerID string) (results.Result, bool) {
	return m.caches[t].Get(containerID)
}

// probedContainers returns the containers the kubelet probes: the main containers, then the
// sidecars (init containers whose restartPolicy is Always).
func probedContainers(pod *v1.Pod) []*v1.Container {
	out := make([]*v1.Container, 0, len(pod.Spec.Containers))
	for i := range pod.Spec.Containers {
		out = append(out, &pod.Spec.Containers[i])
	}
	for i := range pod.Spec.InitContainers {
		if kubecontainer.IsRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			out = append(out, &pod.Spec.InitContainers[i])
		}
	}
	return out
}

// AddPod creates the workers of the pod's probes that do not exist yet: the kubelet's AddPod,
// called by SyncPod before every runtime sync. Like the kubelet's, it stops at the first worker
// that already exists, so a pod's workers are all created by its first sync and keep the pod
// object they were created with. Bad probe annotations are traced; those probes then error.
func (m *Manager) AddPod(ctx context.Context, pod *v1.Pod) {
	containers := probedContainers(pod)
	var rules map[string]map[ProbeType]Rule
	var annErr error
	for _, c := range containers {
		// The kubelet's order: startup, readiness, liveness.
		for _, t := range []ProbeType{Startup, Readiness, Liveness} {
			spec := t.spec(c)
			if spec == nil {
				continue
			}
			k := workerKey{pod.UID, c.Name, t}
			if _, ok := m.workers[k]; ok {
				return
			}
			if rules == nil && annErr == nil {
				// Only a pod with a probe to create reads its annotations, so the names and the
				// key are built then: the sync side calls AddPod at every sync of every pod.
				names := make([]string, 0, len(containers))
				for _, c := range containers {
					names = append(names, c.Name)
				}
				key := podkey.Of(pod)
				rules, annErr = ParseAnnotations(key, pod.Annotations, names)
				if annErr != nil {
					m.emit(trace.Event{Event: trace.KindError, Pod: key, UID: string(pod.UID), Reason: "BadProbeAnnotation", Message: strings.ReplaceAll(annErr.Error(), "\n", "; "), Func: "AddPod"})
				}
			}
			w := m.newWorker(pod, c, t, spec)
			if r, ok := rules[c.Name][t]; ok {
				w.annotation = &r
			}
			if annErr != nil {
				w.annotationErr = annErr
			}
			m.workers[k] = w
			m.version++
		}
	}
}

// newWorker makes a worker whose first doProbe is due after the initial delay.
func (m *Manager) newWorker(pod *v1.Pod, c *v1.Container, t ProbeType, spec *v1.Probe) *worker {
	now := m.opts.Clock.Now()
	m.seq++
	w := &worker{
		// The pod, and the container and probe in it, are read-only and shared, as the kubelet's
		// probe worker keeps the pod it was made for (docs/design/008-shared-pods.md).
		seq: m.seq, pod: pod, podKey: podkey.Of(pod), container: *c,
		probe: t, spec: spec, period: period(spec), cache: m.caches[t],
	}
	switch t {
	case Readiness:
		w.initial = results.Failure
	case Liveness:
		w.initial = results.Success
	case Startup:
		w.initial = results.Unknown
	}
	// After a kubelet (re)start the workers would all probe at once; each waits a random part of
	// its period first, but only while the kubelet is younger than one period.
	var delay time.Duration
	if now.Sub(m.start) < w.period {
		delay = time.Duration(m.opts.Rand.Float64() * float64(w.period))
	}
	w.next = now.Add(delay)
	m.emit(trace.Event{Event: trace.KindWorker, Pod: w.podKey, UID: string(pod.UID), Container: c.Name, Op: t.Name(), To: "start", Delay: delay, Func: "AddPod"})
	return w
}

// StopLivenessAndStartup stops the liveness and startup workers of the pod's main containers, as
// SyncTerminatingPod does before it kills the pod; readiness (and the sidecars' probes) go on.
func (m *Manager) StopLivenessAndStartup(pod *v1.Pod) {
	for i := range pod.Spec.Containers {
		for _, t := range []ProbeType{Liveness, Startup} {
			m.stop(workerKey{pod.UID, pod.Spec.Containers[i].Name, t}, "StopLivenessAndStartup")
		}
	}
}

// RemovePod stops every worker of the pod, once its containers are stopped.
func (m *Manager) RemovePod(pod *v1.Pod) {
	for _, c := range probedContainers(pod) {
		for _, t := range []ProbeType{Readiness, Liveness, Startup} {
			m.stop(workerKey{pod.UID, c.Name, t}, "RemovePod")
		}
	}
}

// Version returns a number that grows with every worker started or stopped. Two calls that
// return the same number have the same workers between them, so that a CleanupPods between them
// with the same desired pods stopped nothing: housekeeping skips the pass's work when it proves
// nothing changed.
func (m *Manager) Version() uint64 { return m.version }

// CleanupPods stops the workers of every pod not in desired: housekeeping's cleanup of pods that
// should no longer run.
func (m *Manager) CleanupPods(desired map[types.UID]bool) {
	// Housekeeping calls this every 2s and there is rarely a worker to stop: look before
	// sorting.
	stale := false
	for k := range m.workers {
		if !desired[k.uid] {
			stale = true
			break
		}
	}
	if !stale {
		return
	}
	for _, k := range m.sortedKeys() {
		if !desired[k.uid] {
			m.stop(k, "CleanupPods")
		}
	}
}

// stop ends a worker: the kubelet's worker leaves its loop and deletes its cached result.
func (m *Manager) stop(k workerKey, fn string) {
	w, ok := m.workers[k]
	if !ok {
		return
	}
	delete(m.workers, k)
	m.version++
	if w.containerID != "" {
		w.cache.Remove(w.containerID)
	}
	if m.opts.Metrics != nil {
		m.opts.Metrics.ForgetProbe(w.metricLabels())
	}
	m.emit(trace.Event{Event: trace.KindWorker, Pod: w.podKey, UID: string(k.uid), Container: k.container, Op: k.probe.Name(), To: "stop", Func: fn})
}

// sortedKeys returns the workers' keys in creation order.
func (m *Manager) sortedKeys() []workerKey {
	keys := make([]workerKey, 0, len(m.workers))
	for k := range m.workers {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m.workers[keys[i]].seq < m.workers[keys[j]].seq })
	return keys
}

// NextWake returns when the earliest worker's doProbe is due, false with no workers.
func (m *Manager) NextWake() (time.Time, bool) {
	var at time.Time
	for _, w := range m.workers {
		if t := w.due(); at.IsZero() || t.Before(at) {
			at = t
		}
	}
	if len(m.updates) > 0 {
		at = m.opts.Clock.Now()
	}
	return at, !at.IsZero()
}

// Advance runs every doProbe due at the clock's current instant, earliest due first, ties in
// worker creation order, and returns the results cache changes they made, in order.
func (m *Manager) Advance(ctx context.Context) []Update {
	now := m.opts.Clock.Now()
	for _, k := range m.sortedKeys() {
		w, ok := m.workers[k]
		if !ok || w.due().After(now) {
			continue
		}
		// Go's select picks at random between a pending trigger and a due tick; the trigger is
		// taken here, and either way one doProbe runs now.
		manual := w.triggered && w.ran && w.next.After(now)
		if w.ran {
			w.triggered = false
		}
		if !m.doProbe(ctx, w, now) {
			m.stop(k, "run")
			continue
		}
		if manual {
			// A manual run resets the ticker: the next tick is one period from now.
			w.next = now.Add(w.period)
		} else {
			w.next = vclock.NextTick(w.next, w.period, now)
		}
	}
	out := m.updates
	m.updates = nil
	if logger := klog.FromContext(ctx); logger.V(3).Enabled() {
		for _, u := range out {
			logger.V(3).Info("Probe result changed", "probeType", u.Probe, "containerID", u.ContainerID, "podUID", u.PodUID, "result", u.Result)
		}
	}
	return out
}

// set writes a result to the worker's cache and queues an update when the value changed.
func (m *Manager) set(w *worker, r results.Result) {
	prev, had := w.cache.Get(w.containerID)
	if !w.cache.Set(w.containerID, r) {
		return
	}
	from := ""
	if had {
		from = prev.String()
	}
	m.emit(trace.Event{Event: trace.KindResult, Pod: w.podKey, UID: string(w.pod.UID), Container: w.container.Name, Op: w.probe.Name(), From: from, To: r.String(), Message: w.containerID, Func: "Set"})
	m.updates = append(m.updates, Update{Probe: w.probe, Update: results.Update{ContainerID: w.containerID, Result: r, PodUID: w.pod.UID}})
}

// recordEvent sends one Kubernetes event about the worker's container.
func (m *Manager) recordEvent(w *worker, eventType, reason, message string) {
	if m.opts.Recorder == nil {
		return
	}
	m.opts.Recorder.Event(containerRef(w.pod, w.container.Name), eventType, reason, message)
}

// emit traces e with the prober's component.
func (m *Manager) emit(e trace.Event) {
	e.Component = trace.Prober
	m.opts.Tracer.Emit(e)
}

// LivenessFailed reports whether the cached liveness result of the container instance is Failure.
func (m *Manager) LivenessFailed(containerID string) bool {
	r, ok := m.caches[Liveness].Get(containerID)
	return ok && r == results.Failure
}

// LivenessKnown reports whether the container instance has a cached liveness result: its worker
// writes the initial one as soon as it sees the instance.
func (m *Manager) LivenessKnown(containerID string) bool {
	_, ok := m.caches[Liveness].Get(containerID)
	return ok
}

// StartupFailed reports whether the cached startup result of the container instance is Failure.
func (m *Manager) StartupFailed(containerID string) bool {
	r, ok := m.caches[Startup].Get(containerID)
	return ok && r == results.Failure
}

// StartupSucceeded reports whether the cached startup result of the container instance is Success.
func (m *Manager) StartupSucceeded(containerID string) bool {
	r, ok := m.caches[Startup].Get(containerID)
	return ok && r == results.Success
}
