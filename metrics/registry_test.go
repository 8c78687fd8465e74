package metrics_test

import (
	"errors"
	"io"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics/testutil"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/metrics"
)

func newRegistry(t *testing.T, node string) *metrics.Registry {
	t.Helper()
	r, err := metrics.New(metrics.Options{NodeName: node})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

func TestNewRequiresNodeName(t *testing.T) {
	if _, err := metrics.New(metrics.Options{}); !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Fatalf("New without NodeName: got %v, want minikubelet.ErrMissingOption", err)
	}
}

func TestRegistriesAreIndependent(t *testing.T) {
	a, b := newRegistry(t, "node-a"), newRegistry(t, "node-b")
	a.StartedPod(nil)
	a.StartedPod(nil)
	b.StartedPod(errors.New("boom"))
	for _, tc := range []struct {
		r           *metrics.Registry
		name        string
		want        float64
		description string
	}{
		{a, "kubelet_started_pods_total", 2, "a's pods"},
		{a, "kubelet_started_pods_errors_total", 0, "a's errors"},
		{b, "kubelet_started_pods_total", 1, "b's pods"},
		{b, "kubelet_started_pods_errors_total", 1, "b's errors"},
	} {
		got, ok, err := tc.r.Value(tc.name, nil)
		if err != nil || !ok || got != tc.want {
			t.Errorf("%s: Value(%s) = %v, %v; want %v", tc.description, tc.name, got, err, tc.want)
		}
	}
	if got, ok, err := b.Value("kubelet_node_name", map[string]string{"node": "node-b"}); err != nil || !ok || got != 1 {
		t.Errorf("node name of b = %v, %v; want 1", got, err)
	}
	if _, ok, err := b.Value("kubelet_node_name", map[string]string{"node": "node-a"}); ok || err != nil {
		t.Errorf("b carries a's node name: %v, %v", ok, err)
	}
}

// TestRelistCountsOfTheSameGeneration checks that the gauges are set again only for counts of
// another generation or from another caller's RunningCounts, and always without a generation.
func TestRelistCountsOfTheSameGeneration(t *testing.T) {
	t0 := time.Unix(1000, 0)
	running := func(r *metrics.Registry) float64 {
		t.Helper()
		v, _, err := r.Value("kubelet_running_pods", nil)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name string
		next func(first *metrics.RunningCounts) *metrics.RunningCounts
		want float64
	}{
		{name: "same counts, same generation", next: func(c *metrics.RunningCounts) *metrics.RunningCounts { c.Pods = 5; return c }, want: 2},
		{name: "same counts, next generation", next: func(c *metrics.RunningCounts) *metrics.RunningCounts { c.Pods = 5; c.Generation++; return c }, want: 5},
		{name: "other counts, same generation", next: func(c *metrics.RunningCounts) *metrics.RunningCounts {
			return &metrics.RunningCounts{Pods: 5, Generation: c.Generation}
		}, want: 5},
		{name: "no generation", next: func(c *metrics.RunningCounts) *metrics.RunningCounts { c.Pods = 5; c.Generation = 0; return c }, want: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRegistry(t, "n")
			first := &metrics.RunningCounts{Pods: 2, Generation: 1}
			r.ObserveRelist(t0, t0, first)
			r.ObserveRelist(t0.Add(time.Second), t0.Add(time.Second), tc.next(first))
			if got := running(r); got != tc.want {
				t.Errorf("kubelet_running_pods = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRelist(t *testing.T) {
	r := newRegistry(t, "n")
	t0 := time.Unix(1000, 0)
	r.ObserveRelist(t0, t0, &metrics.RunningCounts{Pods: 2, Containers: map[string]int{"running": 3, "exited": 1}})
	r.ObserveRelist(t0.Add(time.Second), t0.Add(1500*time.Millisecond), &metrics.RunningCounts{Pods: 2})
	r.ObserveRelist(t0.Add(3*time.Second), t0.Add(3*time.Second), nil) // a failed listing
	want := `
# HELP kubelet_pleg_last_seen_seconds [ALPHA] Timestamp in seconds when PLEG was last seen active.
# TYPE kubelet_pleg_last_seen_seconds gauge
kubelet_pleg_last_seen_seconds 1001
# HELP kubelet_running_containers [ALPHA] Number of containers currently running
# TYPE kubelet_running_containers gauge
kubelet_running_containers{container_state="exited"} 1
kubelet_running_containers{container_state="running"} 3
# HELP kubelet_running_pods [ALPHA] Number of pods that have a running pod sandbox
# TYPE kubelet_running_pods gauge
kubelet_running_pods 2
`
	if err := testutil.GatherAndCompare(r.Gatherer(), strings.NewReader(want),
		"kubelet_pleg_last_seen_seconds", "kubelet_running_containers", "kubelet_running_pods"); err != nil {
		t.Error(err)
	}
	for _, tc := range []struct {
		name string
		want float64
	}{
		{"kubelet_pleg_relist_interval_seconds_count", 2},
		{"kubelet_pleg_relist_interval_seconds_sum", 3},
		{"kubelet_pleg_relist_duration_seconds_count", 3},
		{"kubelet_pleg_relist_duration_seconds_sum", 0.5},
	} {
		if got, ok, err := r.Value(tc.name, nil); err != nil || !ok || got != tc.want {
			t.Errorf("Value(%s) = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestPodCounts(t *testing.T) {
	r := newRegistry(t, "n")
	r.SetPodCounts(metrics.PodCounts{
		DesiredRegular: 3, DesiredStatic: 2, ActiveRegular: 2, ActiveStatic: 1, Mirror: 2,
		Restarted:           map[types.UID]bool{"a": true, "b": false, "c": true},
		Working:             map[metrics.WorkingKey]int{{Lifecycle: "sync", Config: "desired", Static: "true"}: 2},
		OrphanedRuntimePods: 2,
	})
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"kubelet_desired_pods", map[string]string{"static": ""}, 3},
		{"kubelet_desired_pods", map[string]string{"static": "true"}, 2},
		{"kubelet_active_pods", map[string]string{"static": ""}, 2},
		{"kubelet_active_pods", map[string]string{"static": "true"}, 1},
		{"kubelet_mirror_pods", nil, 2},
		{"kubelet_orphaned_runtime_pods_total", nil, 2},
		{"kubelet_restarted_pods_total", map[string]string{"static": "true"}, 2},
		{"kubelet_restarted_pods_total", map[string]string{"static": ""}, 1},
		{"kubelet_working_pods", map[string]string{"lifecycle": "sync", "config": "desired", "static": "true"}, 2},
		{"kubelet_working_pods", map[string]string{"lifecycle": "terminated", "config": "runtime_only", "static": "unknown"}, 0},
	} {
		if got, ok, err := r.Value(tc.name, tc.labels); err != nil || !ok || got != tc.want {
			t.Errorf("Value(%s%v) = %v, %v; want %v", tc.name, tc.labels, got, err, tc.want)
		}
	}
}

func TestWorkersRuntimeAndStarts(t *testing.T) {
	r := newRegistry(t, "n")
	r.ObservePodWorker("create", 2*time.Second)
	r.ObservePodWorkerStart(time.Second)
	r.ObservePodStart(3 * time.Second)
	r.ObserveRuntimeOperation("start_container", 10*time.Millisecond, nil)
	r.ObserveRuntimeOperation("start_container", 10*time.Millisecond, errors.New("x"))
	r.StartedContainer("container", "")
	r.StartedContainer("init_container", "CreateContainerError")
	r.Eviction("memory.available")
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"kubelet_pod_worker_duration_seconds_sum", map[string]string{"operation_type": "create"}, 2},
		{"kubelet_pod_worker_start_duration_seconds_count", nil, 1},
		{"kubelet_pod_start_duration_seconds_sum", nil, 3},
		{"kubelet_runtime_operations_total", map[string]string{"operation_type": "start_container"}, 2},
		{"kubelet_runtime_operations_errors_total", map[string]string{"operation_type": "start_container"}, 1},
		{"kubelet_started_containers_total", map[string]string{"container_type": "init_container"}, 1},
		{"kubelet_started_containers_errors_total", map[string]string{"container_type": "init_container", "code": "CreateContainerError"}, 1},
		{"kubelet_evictions", map[string]string{"eviction_signal": "memory.available"}, 1},
	} {
		if got, ok, err := r.Value(tc.name, tc.labels); err != nil || !ok || got != tc.want {
			t.Errorf("Value(%s%v) = %v, %v; want %v", tc.name, tc.labels, got, err, tc.want)
		}
	}
}

// TestNilRegistryRecordsNothing: a core built without metrics holds a nil *Registry and calls
// its recording methods all the same; each is a no-op there and does not panic.
func TestNilRegistryRecordsNothing(t *testing.T) {
	var r *metrics.Registry
	for _, tc := range []struct {
		name   string
		record func()
	}{
		{"ObservePodWorker", func() { r.ObservePodWorker("sync", time.Second) }},
		{"ObservePodWorkerStart", func() { r.ObservePodWorkerStart(time.Second) }},
		{"ObservePodStart", func() { r.ObservePodStart(time.Second) }},
		{"ObservePodStartSLI", func() { r.ObservePodStartSLI(time.Second) }},
		{"ObservePodStartTotal", func() { r.ObservePodStartTotal(time.Second) }},
		{"SetFirstNetworkPodStartSLI", func() { r.SetFirstNetworkPodStartSLI(time.Second) }},
		{"ObserveRelist", func() { r.ObserveRelist(time.Unix(1, 0), time.Unix(1, 0), &metrics.RunningCounts{}) }},
		{"ObserveRuntimeOperation", func() { r.ObserveRuntimeOperation("start_container", time.Second, nil) }},
		{"StartedPod", func() { r.StartedPod(nil) }},
		{"StartedContainer", func() { r.StartedContainer("container", "") }},
		{"SetPodCounts", func() { r.SetPodCounts(metrics.PodCounts{}) }},
		{"Eviction", func() { r.Eviction("memory.available") }},
		{"SetTotalPlugins", func() { r.SetTotalPlugins([]metrics.PluginCount{{}}) }},
		{"ObserveProbe", func() { r.ObserveProbe(metrics.ProbeLabels{}, "successful", time.Second) }},
		{"ForgetProbe", func() { r.ForgetProbe(metrics.ProbeLabels{}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s on a nil Registry panicked: %v", tc.name, p)
				}
			}()
			tc.record()
		})
	}
}

func TestHandlerServesKubeletSeries(t *testing.T) {
	r := newRegistry(t, "node-1")
	r.ObservePodWorker("sync", 0)
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`kubelet_node_name{node="node-1"} 1`,
		`# TYPE kubelet_pod_worker_duration_seconds histogram`,
		`kubelet_pod_worker_duration_seconds_bucket{operation_type="sync",le="0.005"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
}

// The exposition passes the Prometheus linter, as the kubelet's families do.
func TestLint(t *testing.T) {
	r := newRegistry(t, "n")
	r.ObservePodWorker("sync", 0)
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	problems, err := testutil.NewPromLinter(rec.Body).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint %s: %s", p.Metric, p.Text)
	}
}

// TestTotalPlugins: the gauge shows the plugin manager's caches as last set; a socket gone from
// both caches has no series left.
func TestTotalPlugins(t *testing.T) {
	r := newRegistry(t, "node-1")
	r.SetTotalPlugins([]metrics.PluginCount{
		{SocketPath: "/reg/a.sock", State: "actual_state_of_world", Value: 1},
		{SocketPath: "/reg/a.sock", State: "desired_state_of_world", Value: 1},
		{SocketPath: "/reg/b.sock", State: "desired_state_of_world", Value: 1},
	})
	r.SetTotalPlugins([]metrics.PluginCount{{SocketPath: "/reg/b.sock", State: "desired_state_of_world", Value: 1}})
	want := `
# HELP plugin_manager_total_plugins [ALPHA] Number of plugins in Plugin Manager
# TYPE plugin_manager_total_plugins gauge
plugin_manager_total_plugins{socket_path="/reg/b.sock",state="desired_state_of_world"} 1
`
	if err := testutil.GatherAndCompare(r.Gatherer(), strings.NewReader(want), "plugin_manager_total_plugins"); err != nil {
		t.Error(err)
	}
}

// TestChildrenAppearAtFirstUse: the children the idle path keeps are created at their first use,
// as WithLabelValues creates a series, and the kept child records what follows.
func TestChildrenAppearAtFirstUse(t *testing.T) {
	r := newRegistry(t, "n")
	op := map[string]string{"operation_type": "list_podsandbox"}
	if _, ok, err := r.Value("kubelet_runtime_operations_total", op); ok || err != nil {
		t.Fatalf("series before the first operation: ok %t, %v; want none", ok, err)
	}
	for range 2 {
		r.ObserveRuntimeOperation("list_podsandbox", 0, nil)
	}
	if v, ok, err := r.Value("kubelet_runtime_operations_total", op); !ok || err != nil || v != 2 {
		t.Errorf("operations after two = %v (ok %t, %v), want 2", v, ok, err)
	}
	if _, ok, _ := r.Value("kubelet_runtime_operations_errors_total", op); ok {
		t.Error("an error series without an error")
	}
}

// TestRelistCountsDoNotKeepTheirOwnerAlive checks that the registry does not keep the
// RunningCounts it was last handed, nor the PLEG they are a field of, alive: a kubelet gone
// while its registry is still served or read must be collectable.
func TestRelistCountsDoNotKeepTheirOwnerAlive(t *testing.T) {
	r := newRegistry(t, "n")
	// owner stands for the PLEG: the counts are one of its fields.
	type owner struct {
		name   string
		counts metrics.RunningCounts
	}
	t0 := time.Unix(1000, 0)
	o := &owner{name: "pleg", counts: metrics.RunningCounts{Pods: 1, Generation: 1}}
	r.ObserveRelist(t0, t0, &o.counts)
	r.ObserveRelist(t0.Add(time.Second), t0.Add(time.Second), &o.counts)
	gone := weak.Make(o)
	o = nil
	for range 3 {
		if runtime.GC(); gone.Value() == nil {
			break
		}
	}
	if gone.Value() != nil {
		t.Errorf("the owner of the counts last handed to the registry is still reachable after a GC")
	}
	runtime.KeepAlive(r)
}

// TestRelistSameCountsAllocatesNothing checks that handing the same counts again costs no
// allocation: a fleet node relists its unchanged runtime every second.
func TestRelistSameCountsAllocatesNothing(t *testing.T) {
	r := newRegistry(t, "n")
	t0 := time.Unix(1000, 0)
	counts := &metrics.RunningCounts{Pods: 1, Containers: map[string]int{"running": 1}, Generation: 1}
	r.ObserveRelist(t0, t0, counts)
	if allocs := testing.AllocsPerRun(100, func() { r.ObserveRelist(t0, t0, counts) }); allocs != 0 {
		t.Errorf("ObserveRelist of the same counts allocates %v times, want 0", allocs)
	}
}
