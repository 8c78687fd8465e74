package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestProbeMetrics(t *testing.T) {
	r, err := New(Options{NodeName: "node-1"})
	if err != nil {
		t.Fatal(err)
	}
	l := ProbeLabels{ProbeType: "Liveness", Container: "app", Pod: "web", Namespace: "default", PodUID: "u1"}
	r.ObserveProbe(l, ProbeResultSuccessful, 0)
	r.ObserveProbe(l, ProbeResultSuccessful, 0)
	r.ObserveProbe(l, ProbeResultFailed, 0)
	labels := map[string]string{"probe_type": "Liveness", "container": "app", "pod": "web", "namespace": "default", "pod_uid": "u1"}
	for result, want := range map[string]float64{ProbeResultSuccessful: 2, ProbeResultFailed: 1} {
		labels["result"] = result
		if got, ok, err := r.Value("prober_probe_total", labels); err != nil || !ok || got != want {
			t.Errorf("prober_probe_total %s = %v, %v, want %v", result, got, err, want)
		}
	}
	// Only successful (and unknown) probes are timed, as in the kubelet.
	durLabels := map[string]string{"probe_type": "Liveness", "container": "app", "pod": "web", "namespace": "default"}
	if got, ok, err := r.Value("prober_probe_duration_seconds_count", durLabels); err != nil || !ok || got != 2 {
		t.Errorf("prober_probe_duration_seconds_count = %v, %v, want 2", got, err)
	}

	rec := httptest.NewRecorder()
	r.ProbesHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics/probes", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{`prober_probe_total{container="app",namespace="default",pod="web",pod_uid="u1",probe_type="Liveness",result="failed"} 1`,
		"# TYPE prober_probe_duration_seconds histogram"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics/probes lacks %q:\n%s", want, body)
		}
	}
	rec = httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if body, _ := io.ReadAll(rec.Body); strings.Contains(string(body), "prober_probe_total") {
		t.Error("/metrics serves the prober's families, which the kubelet keeps apart")
	}

	r.ForgetProbe(l)
	labels["result"] = ProbeResultSuccessful
	if _, ok, err := r.Value("prober_probe_total", labels); ok || err != nil {
		t.Errorf("after ForgetProbe, prober_probe_total exists (%v, %v), want no series", ok, err)
	}
}
