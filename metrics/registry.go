package metrics

import (
	"fmt"
	"net/http"
	"time"
	"weak"

	"k8s.io/apimachinery/pkg/types"
	compbasemetrics "k8s.io/component-base/metrics"

	"github.com/minikubelet/minikubelet"
)

// Options configure one node's Registry.
type Options struct {
	// NodeName labels kubelet_node_name. Required.
	NodeName string
}

func (o Options) validate() error {
	if o.NodeName == "" {
		return fmt.Errorf("options NodeName: %w", minikubelet.ErrMissingOption)
	}
	return nil
}

// Registry is one node's kubelet metrics. The zero value is not usable; a nil *Registry records
// nothing, so a core built without metrics can call its methods unconditionally.
type Registry struct {
	reg compbasemetrics.KubeRegistry
	f   *families
	// probeReg holds the prober's families, served apart at /metrics/probes.
	probeReg compbasemetrics.KubeRegistry
	probes   *probeFamilies
	// lastRelist is the start of the previous relist, for the relist interval. Written only by
	// the goroutine that drives the node's cores.
	lastRelist time.Time
	// counted and countedGen are the RunningCounts whose values the gauges were last set to, and
	// their Generation. The pointer is weak: the counts are a field of the PLEG that handed them,
	// and a strong one kept that PLEG, and all it reaches of its kubelet, alive for as long as
	// the registry (a registry outlives its PLEG where something still serves or reads it).
	counted    weak.Pointer[RunningCounts]
	countedGen uint64
	// The children of the vectors the idle path records (children.go).
	opCount, opErrors children[string, compbasemetrics.CounterMetric]
	opDuration        children[string, compbasemetrics.ObserverMetric]
	podWorker         children[string, compbasemetrics.ObserverMetric]
	containers        children[string, compbasemetrics.GaugeMetric]
	desired, active   children[string, compbasemetrics.GaugeMetric]
	restarted         children[string, compbasemetrics.CounterMetric]
	working           children[WorkingKey, compbasemetrics.GaugeMetric]
	// pending is what the relists recorded since the registry was last gathered (pending.go).
	pending pending
}

// New returns a Registry holding the kubelet's families, with kubelet_node_name set.
func New(opts Options) (*Registry, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new metrics: %w", err)
	}
	r := &Registry{reg: compbasemetrics.NewKubeRegistry(), f: newFamilies(),
		probeReg: compbasemetrics.NewKubeRegistry(), probes: newProbeFamilies()}
	for _, c := range r.f.registerables() {
		if err := r.reg.Register(c); err != nil {
			return nil, fmt.Errorf("new metrics %s: %w", opts.NodeName, err)
		}
	}
	for _, c := range []compbasemetrics.Registerable{r.probes.results, r.probes.duration} {
		if err := r.probeReg.Register(c); err != nil {
			return nil, fmt.Errorf("new metrics %s: %w", opts.NodeName, err)
		}
	}
	r.f.nodeName.WithLabelValues(opts.NodeName).Set(1)
	r.opCount.new = func(op string) compbasemetrics.CounterMetric { return r.f.runtimeOps.WithLabelValues(op) }
	r.opErrors.new = func(op string) compbasemetrics.CounterMetric { return r.f.runtimeOpsErrors.WithLabelValues(op) }
	r.opDuration.new = func(op string) compbasemetrics.ObserverMetric { return r.f.runtimeOpsDuration.WithLabelValues(op) }
	r.podWorker.new = func(op string) compbasemetrics.ObserverMetric { return r.f.podWorkerDuration.WithLabelValues(op) }
	r.containers.new = func(state string) compbasemetrics.GaugeMetric { return r.f.runningContainers.WithLabelValues(state) }
	r.desired.new = func(static string) compbasemetrics.GaugeMetric { return r.f.desiredPods.WithLabelValues(static) }
	r.active.new = func(static string) compbasemetrics.GaugeMetric { return r.f.activePods.WithLabelValues(static) }
	r.restarted.new = func(static string) compbasemetrics.CounterMetric { return r.f.restartedPods.WithLabelValues(static) }
	r.working.new = func(k WorkingKey) compbasemetrics.GaugeMetric {
		return r.f.workingPods.WithLabelValues(k.Lifecycle, k.Config, k.Static)
	}
	return r, nil
}

// Gatherer returns the registry, for tests and for custom handlers. Its Gather includes what the
// relists recorded up to the call.
func (r *Registry) Gatherer() compbasemetrics.KubeRegistry { return flushingRegistry{r.reg, r} }

// Handler serves the registry in the Prometheus exposition format, as the kubelet's /metrics.
func (r *Registry) Handler() http.Handler {
	return compbasemetrics.HandlerFor(r.Gatherer(), compbasemetrics.HandlerOpts{})
}

// ObservePodWorker records one pod worker iteration: kubelet_pod_worker_duration_seconds with the
// update type (create, update, sync, kill) or "terminated" for SyncTerminatedPod.
func (r *Registry) ObservePodWorker(operation string, d time.Duration) {
	if r == nil {
		return
	}
	// Every periodic sync of every pod records one: the child is looked up once, and a sync's
	// waits in r.pending for the next gather.
	if operation == "sync" {
		p := &r.pending
		p.mu.Lock()
		if p.syncs.duration == nil {
			p.syncs.duration = r.podWorker.get(operation)
		}
		p.syncs.add(d.Seconds())
		p.mu.Unlock()
		return
	}
	r.podWorker.get(operation).Observe(d.Seconds())
}

// ObservePodWorkerStart records the time from the kubelet first seeing a pod to its worker
// starting the first SyncPod.
func (r *Registry) ObservePodWorkerStart(d time.Duration) {
	if r == nil {
		return
	}
	r.f.podWorkerStart.Observe(d.Seconds())
}

// ObservePodStart records the time from the kubelet first seeing a pod to SyncPod seeing it
// leave Pending for Running.
func (r *Registry) ObservePodStart(d time.Duration) {
	if r == nil {
		return
	}
	r.f.podStartDuration.Observe(d.Seconds())
}

// ObservePodStartSLI records the pod start SLI: creation to running, minus image pulls.
func (r *Registry) ObservePodStartSLI(d time.Duration) {
	if r == nil {
		return
	}
	r.f.podStartSLI.WithLabelValues().Observe(d.Seconds())
}

// ObservePodStartTotal records the pod start duration from creation to running, pulls included.
func (r *Registry) ObservePodStartTotal(d time.Duration) {
	if r == nil {
		return
	}
	r.f.podStartTotal.WithLabelValues().Observe(d.Seconds())
}

// SetFirstNetworkPodStartSLI records the start SLI of the first pod not on the host network.
func (r *Registry) SetFirstNetworkPodStartSLI(d time.Duration) {
	if r == nil {
		return
	}
	r.f.firstNetworkPodSLI.Set(d.Seconds())
}

// RunningCounts are what a relist saw: the pods with a running sandbox and the containers by
// state (created, running, exited, unknown).
type RunningCounts struct {
	Pods       int
	Containers map[string]int
	// Generation, when not zero, numbers the values: a caller that hands again the same
	// RunningCounts with the same Generation promises the same values, and their gauges are not
	// set again (a fleet node relists its unchanged runtime every second).
	Generation uint64
}

// ObserveRelist records one relist that started at start and ended at end, as the kubelet's
// generic PLEG does: the interval since the start of the last successful relist, the duration,
// and, when the listing succeeded (counts not nil), the last-seen time and the running pods and
// containers. As in the kubelet, a container state absent from this listing keeps its last value.
func (r *Registry) ObserveRelist(start, end time.Time, counts *RunningCounts) {
	if r == nil {
		return
	}
	// The histograms and the gauge are recorded in r.pending, handed over at the next gather.
	p := &r.pending
	p.mu.Lock()
	if !r.lastRelist.IsZero() {
		p.interval.add(start.Sub(r.lastRelist).Seconds(), r.f.plegRelistInterval)
	}
	p.duration.add(end.Sub(start).Seconds(), r.f.plegRelistDuration)
	if counts != nil {
		p.lastSeen, p.seen = float64(start.Unix()), true
	}
	p.mu.Unlock()
	if counts == nil {
		return
	}
	r.lastRelist = start
	// The weak pointer's Value is counts only while the counts it was made of live and are
	// these: a RunningCounts made later at the same address is another caller's.
	if counts.Generation != 0 && counts.Generation == r.countedGen && r.counted.Value() == counts {
		return // the gauges hold these values already
	}
	r.counted, r.countedGen = weak.Make(counts), counts.Generation
	r.f.runningPods.Set(float64(counts.Pods))
	for state, n := range counts.Containers {
		r.containers.get(state).Set(float64(n))
	}
}

// ObserveRuntimeOperation records one CRI call by its operation_type name (run_podsandbox,
// create_container, start_container, ...), its duration and whether it failed.
func (r *Registry) ObserveRuntimeOperation(operation string, d time.Duration, err error) {
	if r == nil {
		return
	}
	if slot := listingSlot(operation); slot >= 0 {
		// Every relist lists: its calls wait in r.pending for the next gather.
		p := &r.pending
		p.mu.Lock()
		o := &p.listings[slot]
		if o.count == nil {
			o.count, o.duration = r.opCount.get(operation), r.opDuration.get(operation)
		}
		if err == nil {
			o.add(d.Seconds())
			p.mu.Unlock()
			return
		}
		// A failed call is recorded at once, after the calls before it.
		o.flush()
		p.mu.Unlock()
	}
	r.opCount.get(operation).Inc()
	r.opDuration.get(operation).Observe(d.Seconds())
	if err != nil {
		r.opErrors.get(operation).Inc()
	}
}

// StartedPod counts a pod sandbox creation attempt; err is its failure, if any.
func (r *Registry) StartedPod(err error) {
	if r == nil {
		return
	}
	r.f.startedPods.Inc()
	if err != nil {
		r.f.startedPodsErrors.Inc()
	}
}

// StartedContainer counts a container start attempt of a type (container, init_container,
// ephemeral_container); code is the error's text when it failed, empty otherwise.
func (r *Registry) StartedContainer(containerType, code string) {
	if r == nil {
		return
	}
	r.f.startedContainers.WithLabelValues(containerType).Inc()
	if code != "" {
		r.f.startedContainersErr.WithLabelValues(containerType, code).Inc()
	}
}

// PodCounts are what housekeeping counts at the end of HandlePodCleanups.
type PodCounts struct {
	// DesiredRegular and DesiredStatic are the pods the kubelet is told to run.
	DesiredRegular, DesiredStatic int
	// ActiveRegular and ActiveStatic are those not yet terminal.
	ActiveRegular, ActiveStatic int
	// Mirror is the number of mirror pods.
	Mirror int
	// Restarted maps the UIDs restarted in this pass to whether the pod is static.
	Restarted map[types.UID]bool
	// Working counts the pod workers by (lifecycle, config, static).
	Working map[WorkingKey]int
	// OrphanedRuntimePods is how many runtime pods unknown to the workers this pass killed.
	OrphanedRuntimePods int
}

// WorkingKey labels kubelet_working_pods: lifecycle is sync, terminating or terminated; config is
// desired, orphan or runtime_only; static is "true", "" or "unknown".
type WorkingKey struct {
	Lifecycle, Config, Static string
}

// workingKeys are the label combinations the kubelet always reports, zero or not.
var workingKeys = func() []WorkingKey {
	var keys []WorkingKey
	for _, cfg := range []struct{ config, static string }{
		{"desired", "true"}, {"desired", ""}, {"orphan", "true"}, {"orphan", ""}, {"runtime_only", "unknown"},
	} {
		for _, lc := range []string{"sync", "terminating", "terminated"} {
			keys = append(keys, WorkingKey{Lifecycle: lc, Config: cfg.config, Static: cfg.static})
		}
	}
	return keys
}()

// SetPodCounts records housekeeping's counts.
func (r *Registry) SetPodCounts(c PodCounts) {
	if r == nil {
		return
	}
	r.desired.get("").Set(float64(c.DesiredRegular))
	r.desired.get("true").Set(float64(c.DesiredStatic))
	r.active.get("").Set(float64(c.ActiveRegular))
	r.active.get("true").Set(float64(c.ActiveStatic))
	r.f.mirrorPods.Set(float64(c.Mirror))
	var static, regular int
	for _, isStatic := range c.Restarted {
		if isStatic {
			static++
		} else {
			regular++
		}
	}
	r.restarted.get("true").Add(float64(static))
	r.restarted.get("").Add(float64(regular))
	r.f.orphanedRuntimePods.Add(float64(c.OrphanedRuntimePods))
	for _, k := range workingKeys {
		r.working.get(k).Set(float64(c.Working[k]))
	}
}

// Eviction counts an eviction by its signal (memory.available, nodefs.available, ...).
func (r *Registry) Eviction(signal string) {
	if r == nil {
		return
	}
	r.f.evictions.WithLabelValues(signal).Inc()
}

// PluginCount is one series of plugin_manager_total_plugins: how many plugins (0 or 1) a cache of
// the plugin manager holds for a socket; State is actual_state_of_world or
// desired_state_of_world.
type PluginCount struct {
	SocketPath, State string
	Value             int
}

// SetTotalPlugins replaces plugin_manager_total_plugins with the plugin manager's caches as
// they are now. The kubelet computes the family at every scrape; here the plugin manager's driver
// sets it after every change, so a scrape never reads the caches from another goroutine.
func (r *Registry) SetTotalPlugins(counts []PluginCount) {
	if r == nil {
		return
	}
	r.f.totalPlugins.Reset()
	for _, c := range counts {
		r.f.totalPlugins.WithLabelValues(c.SocketPath, c.State).Set(float64(c.Value))
	}
}
