package metrics

import (
	compbasemetrics "k8s.io/component-base/metrics"
)

// Subsystem is the kubelet's metric subsystem: every family here is kubelet_<name>.
const Subsystem = "kubelet"

// podStartupBuckets are the kubelet's podStartupDurationBuckets.
var podStartupBuckets = []float64{0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600}

// families are one node's collectors, named, labelled and bucketed as the kubelet's
// pkg/kubelet/metrics declares them.
type families struct {
	nodeName             *compbasemetrics.GaugeVec
	podWorkerDuration    *compbasemetrics.HistogramVec
	podWorkerStart       *compbasemetrics.Histogram
	podStartDuration     *compbasemetrics.Histogram
	podStartSLI          *compbasemetrics.HistogramVec
	podStartTotal        *compbasemetrics.HistogramVec
	firstNetworkPodSLI   *compbasemetrics.Gauge
	plegRelistDuration   *compbasemetrics.Histogram
	plegRelistInterval   *compbasemetrics.Histogram
	plegLastSeen         *compbasemetrics.Gauge
	runtimeOps           *compbasemetrics.CounterVec
	runtimeOpsErrors     *compbasemetrics.CounterVec
	runtimeOpsDuration   *compbasemetrics.HistogramVec
	evictions            *compbasemetrics.CounterVec
	runningPods          *compbasemetrics.Gauge
	runningContainers    *compbasemetrics.GaugeVec
	desiredPods          *compbasemetrics.GaugeVec
	activePods           *compbasemetrics.GaugeVec
	mirrorPods           *compbasemetrics.Gauge
	workingPods          *compbasemetrics.GaugeVec
	restartedPods        *compbasemetrics.CounterVec
	orphanedRuntimePods  *compbasemetrics.Counter
	startedPods          *compbasemetrics.Counter
	startedPodsErrors    *compbasemetrics.Counter
	startedContainers    *compbasemetrics.CounterVec
	startedContainersErr *compbasemetrics.CounterVec
	totalPlugins         *compbasemetrics.GaugeVec
}

func newFamilies() *families {
	hist := func(name, help string, buckets []float64) *compbasemetrics.Histogram {
		return compbasemetrics.NewHistogram(&compbasemetrics.HistogramOpts{
			Subsystem: Subsystem, Name: name, Help: help, Buckets: buckets, StabilityLevel: compbasemetrics.ALPHA,
		})
	}
	histVec := func(name, help string, buckets []float64, labels ...string) *compbasemetrics.HistogramVec {
		return compbasemetrics.NewHistogramVec(&compbasemetrics.HistogramOpts{
			Subsystem: Subsystem, Name: name, Help: help, Buckets: buckets, StabilityLevel: compbasemetrics.ALPHA,
		}, labels)
	}
	gauge := func(name, help string) *compbasemetrics.Gauge {
		return compbasemetrics.NewGauge(&compbasemetrics.GaugeOpts{
			Subsystem: Subsystem, Name: name, Help: help, StabilityLevel: compbasemetrics.ALPHA,
		})
	}
	gaugeVec := func(name, help string, labels ...string) *compbasemetrics.GaugeVec {
		return compbasemetrics.NewGaugeVec(&compbasemetrics.GaugeOpts{
			Subsystem: Subsystem, Name: name, Help: help, StabilityLevel: compbasemetrics.ALPHA,
		}, labels)
	}
	counter := func(name, help string) *compbasemetrics.Counter {
		return compbasemetrics.NewCounter(&compbasemetrics.CounterOpts{
			Subsystem: Subsystem, Name: name, Help: help, StabilityLevel: compbasemetrics.ALPHA,
		})
	}
	counterVec := func(name, help string, labels ...string) *compbasemetrics.CounterVec {
		return compbasemetrics.NewCounterVec(&compbasemetrics.CounterOpts{
			Subsystem: Subsystem, Name: name, Help: help, StabilityLevel: compbasemetrics.ALPHA,
		}, labels)
	}
	return &families{
		nodeName:          gaugeVec("node_name", "The node's name. The count is always 1.", "node"),
		podWorkerDuration: histVec("pod_worker_duration_seconds", "Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync", compbasemetrics.DefBuckets, "operation_type"),
		podWorkerStart:    hist("pod_worker_start_duration_seconds", "Duration in seconds from kubelet seeing a pod to starting a worker.", compbasemetrics.DefBuckets),
		podStartDuration:  hist("pod_start_duration_seconds", "Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run", podStartupBuckets),
		podStartSLI:       histVec("pod_start_sli_duration_seconds", "Duration in seconds to start a pod, excluding time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch", podStartupBuckets),
		podStartTotal:     histVec("pod_start_total_duration_seconds", "Duration in seconds to start a pod since creation, including time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch", podStartupBuckets),
		// The kubelet declares this one INTERNAL: a stopgap until CNI reports readiness itself.
		firstNetworkPodSLI: compbasemetrics.NewGauge(&compbasemetrics.GaugeOpts{
			Subsystem: Subsystem, Name: "first_network_pod_start_sli_duration_seconds",
			Help:           "Duration in seconds to start the first network pod, excluding time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch",
			StabilityLevel: compbasemetrics.INTERNAL,
		}),
		plegRelistDuration:   hist("pleg_relist_duration_seconds", "Duration in seconds for relisting pods in PLEG.", compbasemetrics.DefBuckets),
		plegRelistInterval:   hist("pleg_relist_interval_seconds", "Interval in seconds between relisting in PLEG.", compbasemetrics.DefBuckets),
		plegLastSeen:         gauge("pleg_last_seen_seconds", "Timestamp in seconds when PLEG was last seen active."),
		runtimeOps:           counterVec("runtime_operations_total", "Cumulative number of runtime operations by operation type.", "operation_type"),
		runtimeOpsErrors:     counterVec("runtime_operations_errors_total", "Cumulative number of runtime operation errors by operation type.", "operation_type"),
		runtimeOpsDuration:   histVec("runtime_operations_duration_seconds", "Duration in seconds of runtime operations. Broken down by operation type.", compbasemetrics.ExponentialBuckets(.005, 2.5, 14), "operation_type"),
		evictions:            counterVec("evictions", "Cumulative number of pod evictions by eviction signal", "eviction_signal"),
		runningPods:          gauge("running_pods", "Number of pods that have a running pod sandbox"),
		runningContainers:    gaugeVec("running_containers", "Number of containers currently running", "container_state"),
		desiredPods:          gaugeVec("desired_pods", "The number of pods the kubelet is being instructed to run. static is true if the pod is not from the apiserver.", "static"),
		activePods:           gaugeVec("active_pods", "The number of pods the kubelet considers active and which are being considered when admitting new pods. static is true if the pod is not from the apiserver.", "static"),
		mirrorPods:           gauge("mirror_pods", "The number of mirror pods the kubelet will try to create (one per admitted static pod)"),
		workingPods:          gaugeVec("working_pods", "Number of pods the kubelet is actually running, broken down by lifecycle phase, whether the pod is desired, orphaned, or runtime only (also orphaned), and whether the pod is static. An orphaned pod has been removed from local configuration or force deleted in the API and consumes resources that are not otherwise visible.", "lifecycle", "config", "static"),
		restartedPods:        counterVec("restarted_pods_total", "Number of pods that have been restarted because they were deleted and recreated with the same UID while the kubelet was watching them (common for static pods, extremely uncommon for API pods)", "static"),
		orphanedRuntimePods:  counter("orphaned_runtime_pods_total", "Number of pods that have been detected in the container runtime without being already known to the pod worker. This typically indicates the kubelet was restarted while a pod was force deleted in the API or in the local configuration, which is unusual."),
		startedPods:          counter("started_pods_total", "Cumulative number of pods started"),
		startedPodsErrors:    counter("started_pods_errors_total", "Cumulative number of errors when starting pods"),
		startedContainers:    counterVec("started_containers_total", "Cumulative number of containers started", "container_type"),
		startedContainersErr: counterVec("started_containers_errors_total", "Cumulative number of errors when starting containers", "container_type", "code"),
		// The plugin manager's family has no kubelet_ prefix: the kubelet declares it with a
		// bare name.
		totalPlugins: compbasemetrics.NewGaugeVec(&compbasemetrics.GaugeOpts{
			Name: "plugin_manager_total_plugins", Help: "Number of plugins in Plugin Manager", StabilityLevel: compbasemetrics.ALPHA,
		}, []string{"socket_path", "state"}),
	}
}

// registerables lists every family, in declaration order.
func (f *families) registerables() []compbasemetrics.Registerable {
	return []compbasemetrics.Registerable{
		f.nodeName, f.podWorkerDuration, f.podWorkerStart, f.podStartDuration, f.podStartSLI, f.podStartTotal, f.firstNetworkPodSLI,
		f.plegRelistDuration, f.plegRelistInterval, f.plegLastSeen,
		f.runtimeOps, f.runtimeOpsErrors, f.runtimeOpsDuration, f.evictions,
		f.runningPods, f.runningContainers, f.desiredPods, f.activePods, f.mirrorPods, f.workingPods,
		f.restartedPods, f.orphanedRuntimePods, f.startedPods, f.startedPodsErrors, f.startedContainers, f.startedContainersErr,
		f.totalPlugins,
	}
}
