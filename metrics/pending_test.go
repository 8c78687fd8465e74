package metrics_test

import (
	"errors"
	"io"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/metrics"
)

// exposition is the registry's /metrics text.
func exposition(t *testing.T, r *metrics.Registry) string {
	t.Helper()
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, err := io.ReadAll(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// relistCall is one relist's recording: its times and its two listings' durations and error.
type relistCall struct {
	interval, duration time.Duration
	failed             bool // the listing failed: no counts
	listing            time.Duration
	listErr            error
	other              string // another runtime operation recorded after the relist, if not empty
}

// TestPendingRelistsGatherAsRecordedAtOnce: the relists' and periodic syncs' observations, kept
// until a gather, read the same as when each reached its collector at once. The reference
// registry is gathered after every call, so nothing waits in it; the values vary in runs and
// back, so that a sum added in another order, a run handed over twice or a count lost would show.
func TestPendingRelistsGatherAsRecordedAtOnce(t *testing.T) {
	ms := time.Millisecond
	calls := []relistCall{
		{interval: time.Second}, {interval: time.Second}, {interval: time.Second, duration: 100 * ms, listing: 100 * ms},
		{interval: time.Second, duration: 200 * ms, listing: 300 * ms, other: "create_container"},
		{interval: 700 * ms, duration: 100 * ms, listing: 100 * ms},
		{interval: 700 * ms, duration: 100 * ms, listing: 100 * ms, failed: true, listErr: errors.New("unavailable")},
		{interval: 1300 * ms, duration: 300 * ms, listing: 200 * ms},
		{interval: time.Second}, {interval: time.Second, other: "start_container"}, {interval: time.Second},
		{interval: 3 * time.Second, duration: 20 * ms, listing: 20 * ms},
	}
	// series is one series' count (or value) and sum, added up here in the order recorded.
	type series struct {
		name string
		op   string // the operation_type label, if any
	}
	for _, gatherAt := range []int{-1, 0, 3, 5, 7} {
		kept, atOnce := newRegistry(t, "n"), newRegistry(t, "n")
		t0 := time.Unix(1000, 0)
		counts := &metrics.RunningCounts{Pods: 1, Containers: map[string]int{"running": 1}, Generation: 1}
		want := map[series]float64{}
		const sandboxes, containers, syncs = "list_podsandbox", "list_containers", "sync"
		add := func(name, op string, v float64) {
			want[series{name + "_count", op}]++
			want[series{name + "_sum", op}] += v
		}
		var lastOK time.Time // the start of the last relist whose listing succeeded
		for i, c := range calls {
			if i > 0 {
				// The interval runs from the last relist that listed.
				add("kubelet_pleg_relist_interval_seconds", "", t0.Add(c.interval).Sub(lastOK).Seconds())
			}
			add("kubelet_pleg_relist_duration_seconds", "", c.duration.Seconds())
			add("kubelet_runtime_operations_duration_seconds", sandboxes, c.listing.Seconds())
			want[series{"kubelet_runtime_operations_total", sandboxes}]++
			if c.listErr == nil {
				add("kubelet_runtime_operations_duration_seconds", containers, (c.listing / 2).Seconds())
				want[series{"kubelet_runtime_operations_total", containers}]++
			} else {
				want[series{"kubelet_runtime_operations_errors_total", sandboxes}]++
			}
			add("kubelet_pod_worker_duration_seconds", syncs, c.duration.Seconds())
			t0 = t0.Add(c.interval)
			if !c.failed {
				want[series{"kubelet_pleg_last_seen_seconds", ""}] = float64(t0.Unix())
				lastOK = t0
			}
			for _, r := range []*metrics.Registry{kept, atOnce} {
				if c.listErr != nil {
					r.ObserveRuntimeOperation("list_podsandbox", c.listing, c.listErr)
				} else {
					r.ObserveRuntimeOperation("list_podsandbox", c.listing, nil)
					r.ObserveRuntimeOperation("list_containers", c.listing/2, nil)
				}
				cs := counts
				if c.failed {
					cs = nil
				}
				r.ObserveRelist(t0, t0.Add(c.duration), cs)
				if c.other != "" {
					r.ObserveRuntimeOperation(c.other, c.listing, nil)
					r.ObservePodWorker("update", c.listing)
				}
				r.ObservePodWorker("sync", c.duration)
			}
			exposition(t, atOnce)
			if i == gatherAt {
				if diff := cmp.Diff(exposition(t, atOnce), exposition(t, kept)); diff != "" {
					t.Errorf("gathered after call %d: /metrics differs (-at once +kept):\n%s", i, diff)
				}
			}
		}
		if diff := cmp.Diff(exposition(t, atOnce), exposition(t, kept)); diff != "" {
			t.Errorf("gathered at %d and at the end: /metrics differs (-at once +kept):\n%s", gatherAt, diff)
		}
		for s, v := range want {
			var labels map[string]string
			if s.op != "" {
				labels = map[string]string{"operation_type": s.op}
			}
			if got, ok, err := kept.Value(s.name, labels); !ok || err != nil || got != v {
				t.Errorf("gathered at %d: Value(%s %s) = %v (ok %t, %v), want %v", gatherAt, s.name, s.op, got, ok, err, v)
			}
		}
	}
}

// TestPendingGatheredBesideRelists: a gather on another goroutine (the kubelet server's, in run)
// while the node's goroutine relists loses and doubles nothing.
func TestPendingGatheredBesideRelists(t *testing.T) {
	r := newRegistry(t, "n")
	const relists = 2000
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				if _, err := r.Gatherer().Gather(); err != nil {
					t.Errorf("Gather: %v", err)
					return
				}
			}
		}
	})
	t0 := time.Unix(1000, 0)
	counts := &metrics.RunningCounts{Pods: 1, Generation: 1}
	for i := range relists {
		r.ObserveRuntimeOperation("list_podsandbox", 0, nil)
		r.ObserveRelist(t0.Add(time.Duration(i)*time.Second), t0.Add(time.Duration(i)*time.Second), counts)
	}
	close(stop)
	wg.Wait()
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"kubelet_runtime_operations_total", map[string]string{"operation_type": "list_podsandbox"}, relists},
		{"kubelet_pleg_relist_duration_seconds_count", nil, relists},
		{"kubelet_pleg_relist_interval_seconds_count", nil, relists - 1},
		{"kubelet_pleg_relist_interval_seconds_sum", nil, relists - 1},
		{"kubelet_pleg_last_seen_seconds", nil, float64(t0.Unix() + relists - 1)},
	} {
		if got, ok, err := r.Value(c.name, c.labels); !ok || err != nil || got != c.want {
			t.Errorf("Value(%s) = %v (ok %t, %v), want %v", c.name, got, ok, err, c.want)
		}
	}
}
