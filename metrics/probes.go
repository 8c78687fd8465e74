package metrics

import (
	"net/http"
	"time"

	compbasemetrics "k8s.io/component-base/metrics"
)

// probeFamilies are the prober's metrics, which the kubelet keeps in a registry of their own and
// serves at /metrics/probes (pkg/kubelet/prober/prober_manager.go).
type probeFamilies struct {
	results  *compbasemetrics.CounterVec
	duration *compbasemetrics.HistogramVec
}

func newProbeFamilies() *probeFamilies {
	return &probeFamilies{
		results: compbasemetrics.NewCounterVec(&compbasemetrics.CounterOpts{
			Subsystem: "prober", Name: "probe_total",
			Help:           "Cumulative number of a liveness, readiness or startup probe for a container by result.",
			StabilityLevel: compbasemetrics.BETA,
		}, []string{"probe_type", "result", "container", "pod", "namespace", "pod_uid"}),
		duration: compbasemetrics.NewHistogramVec(&compbasemetrics.HistogramOpts{
			Subsystem: "prober", Name: "probe_duration_seconds",
			Help:           "Duration in seconds for a probe response.",
			StabilityLevel: compbasemetrics.ALPHA,
		}, []string{"probe_type", "container", "pod", "namespace"}),
	}
}

// ProbeLabels name one probe worker's series.
type ProbeLabels struct {
	ProbeType, Container, Pod, Namespace, PodUID string
}

// The result label values of prober_probe_total.
const (
	ProbeResultSuccessful = "successful"
	ProbeResultFailed     = "failed"
	ProbeResultUnknown    = "unknown"
)

// ObserveProbe records one probe a worker made: prober_probe_total by result and, for a
// successful or unknown one (as the kubelet does), prober_probe_duration_seconds.
func (r *Registry) ObserveProbe(l ProbeLabels, result string, d time.Duration) {
	if r == nil {
		return
	}
	r.probes.results.WithLabelValues(l.ProbeType, result, l.Container, l.Pod, l.Namespace, l.PodUID).Inc()
	if result != ProbeResultFailed {
		r.probes.duration.WithLabelValues(l.ProbeType, l.Container, l.Pod, l.Namespace).Observe(d.Seconds())
	}
}

// ForgetProbe deletes a stopped worker's series, as the kubelet's worker does when it exits.
func (r *Registry) ForgetProbe(l ProbeLabels) {
	if r == nil {
		return
	}
	for _, result := range []string{ProbeResultSuccessful, ProbeResultFailed, ProbeResultUnknown} {
		r.probes.results.DeleteLabelValues(l.ProbeType, result, l.Container, l.Pod, l.Namespace, l.PodUID)
	}
	r.probes.duration.DeleteLabelValues(l.ProbeType, l.Container, l.Pod, l.Namespace)
}

// ProbesHandler serves the prober's registry: the kubelet's /metrics/probes.
func (r *Registry) ProbesHandler() http.Handler {
	return compbasemetrics.HandlerFor(r.probeReg, compbasemetrics.HandlerOpts{})
}
