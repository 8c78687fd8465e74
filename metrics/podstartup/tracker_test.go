package podstartup

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/sim/trace"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fakeMetrics keeps what the tracker recorded.
type fakeMetrics struct {
	sli, total   []time.Duration
	firstNetwork []time.Duration
}

func (m *fakeMetrics) ObservePodStartSLI(d time.Duration)   { m.sli = append(m.sli, d) }
func (m *fakeMetrics) ObservePodStartTotal(d time.Duration) { m.total = append(m.total, d) }
func (m *fakeMetrics) SetFirstNetworkPodStartSLI(d time.Duration) {
	m.firstNetwork = append(m.firstNetwork, d)
}

// pod is an API pod created at t0 whose one container is running when running is set.
func pod(uid string, running bool) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: types.UID(uid), CreationTimestamp: metav1.NewTime(t0)},
		Status: v1.PodStatus{Phase: v1.PodPending, ContainerStatuses: []v1.ContainerStatus{{Name: "app", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}}
	if running {
		p.Status.Phase = v1.PodRunning
		p.Status.StartTime = &metav1.Time{Time: t0.Add(time.Second)}
		p.Status.ContainerStatuses[0].State = v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(3 * time.Second))}}
	}
	return p
}

func TestTracker(t *testing.T) {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// step is one call on the tracker at a virtual time.
	type step func(tr *Tracker, clk *clocktesting.FakeClock)
	seen := func(running bool, when float64) step {
		return func(tr *Tracker, _ *clocktesting.FakeClock) { tr.ObservedPodOnWatch(pod("a", running), at(when)) }
	}
	pullStart := func(s float64) step {
		return func(tr *Tracker, _ *clocktesting.FakeClock) { tr.RecordImageStartedPulling("a", at(s)) }
	}
	pullEnd := func(s float64) step {
		return func(tr *Tracker, _ *clocktesting.FakeClock) { tr.RecordImageFinishedPulling("a", at(s)) }
	}
	written := func(running bool, when float64) step {
		return func(tr *Tracker, clk *clocktesting.FakeClock) {
			clk.SetTime(at(when))
			tr.RecordStatusUpdated(pod("a", running))
		}
	}
	tests := []struct {
		name       string
		steps      []step
		sli, total []time.Duration
	}{
		{"pull time is taken out of the SLI",
			[]step{seen(false, 0), pullStart(1), pullEnd(3), written(true, 5), seen(true, 5)},
			[]time.Duration{3 * time.Second}, []time.Duration{5 * time.Second}},
		{"the watch's time counts, not the write's",
			[]step{seen(false, 0), written(true, 4), seen(true, 6)},
			[]time.Duration{6 * time.Second}, []time.Duration{6 * time.Second}},
		{"measured once",
			[]step{seen(false, 0), written(true, 4), seen(true, 4), seen(true, 9)},
			[]time.Duration{4 * time.Second}, []time.Duration{4 * time.Second}},
		{"a pod first seen with a start time is never measured",
			[]step{seen(true, 0), written(true, 4), seen(true, 4)}, nil, nil},
		{"a write not showing every container running does not count",
			[]step{seen(false, 0), written(false, 2), seen(false, 2), written(true, 7), seen(true, 7)},
			[]time.Duration{7 * time.Second}, []time.Duration{7 * time.Second}},
		{"no write seen running, no measure",
			[]step{seen(false, 0), seen(true, 4)}, nil, nil},
		{"the first pull start and the last pull end count",
			[]step{seen(false, 0), pullStart(1), pullEnd(2), pullStart(2), pullEnd(4), written(true, 6), seen(true, 6)},
			[]time.Duration{3 * time.Second}, []time.Duration{6 * time.Second}},
		{"a present image ends no pull that never began",
			[]step{seen(false, 0), pullEnd(2), written(true, 3), seen(true, 3)},
			[]time.Duration{3 * time.Second}, []time.Duration{3 * time.Second}},
		{"a pull for a pod not followed is ignored",
			[]step{pullStart(0), pullEnd(2), seen(false, 2), written(true, 5), seen(true, 5)},
			[]time.Duration{5 * time.Second}, []time.Duration{5 * time.Second}},
		{"forgotten state is not measured",
			[]step{seen(false, 0), written(true, 4), func(tr *Tracker, _ *clocktesting.FakeClock) { tr.DeletePodStartupState("a") }, seen(true, 4)},
			nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(t0)
			m := &fakeMetrics{}
			tr, err := New(Options{Clock: clk, Metrics: m, Tracer: trace.Discard})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.steps {
				s(tr, clk)
			}
			if diff := cmp.Diff(tt.sli, m.sli); diff != "" {
				t.Errorf("SLI (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.total, m.total); diff != "" {
				t.Errorf("total (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFirstNetworkPodOnlyOnce(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	m := &fakeMetrics{}
	tr, err := New(Options{Clock: clk, Metrics: m, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	host, a, b := pod("host", false), pod("a", false), pod("b", false)
	host.Spec.HostNetwork = true
	for i, p := range []*v1.Pod{host, a, b} {
		tr.ObservedPodOnWatch(p, t0)
		clk.SetTime(t0.Add(time.Duration(i+1) * time.Second))
		running := pod(string(p.UID), true)
		running.Spec.HostNetwork = p.Spec.HostNetwork
		tr.RecordStatusUpdated(running)
		tr.ObservedPodOnWatch(running, clk.Now())
	}
	if diff := cmp.Diff([]time.Duration{2 * time.Second}, m.firstNetwork); diff != "" {
		t.Errorf("first network pod SLI (-want +got):\n%s", diff)
	}
	if len(m.sli) != 3 {
		t.Errorf("SLI recorded %d times, want 3", len(m.sli))
	}
}

func TestTerminalPodIsForgotten(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	m := &fakeMetrics{}
	tr, err := New(Options{Clock: clk, Metrics: m, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	tr.ObservedPodOnWatch(pod("a", false), t0)
	failed := pod("a", false)
	failed.Status.Phase = v1.PodFailed
	tr.ObservedPodOnWatch(failed, t0)
	tr.RecordStatusUpdated(pod("a", true))
	tr.ObservedPodOnWatch(pod("a", true), t0.Add(time.Second))
	if len(m.sli) != 0 {
		t.Errorf("a pod seen Failed was measured: %v", m.sli)
	}
}

func TestNewNeedsOptions(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	for name, o := range map[string]Options{
		"clock":   {Metrics: &fakeMetrics{}, Tracer: trace.Discard},
		"metrics": {Clock: clk, Tracer: trace.Discard},
		"tracer":  {Clock: clk, Metrics: &fakeMetrics{}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New without %s: no error", name)
		}
	}
}
