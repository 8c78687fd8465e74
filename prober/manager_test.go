package prober

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/test/podtest"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/prober/results"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// fakeStatus is the status manager's cache as the workers read it.
type fakeStatus map[types.UID]v1.PodStatus

func (f fakeStatus) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	s, ok := f[uid]
	return s, ok
}

// events records the Kubernetes events the manager sends.
type eventLog []string

func (e *eventLog) Event(_ runtime.Object, eventType, reason, message string) {
	*e = append(*e, eventType+" "+reason+": "+message)
}

// harness is a Manager on a virtual clock whose kubelet started long ago (no initial delay).
type harness struct {
	t      *testing.T
	clk    *vclock.Clock
	status fakeStatus
	m      *Manager
	script *Script
	events eventLog
	// log is every update Advance returned, as "<seconds>s <type> <result>".
	log []string
}

func newHarness(t *testing.T, started time.Duration) *harness {
	t.Helper()
	h := &harness{t: t, clk: vclock.New(vclock.Epoch), status: fakeStatus{}, script: NewScript()}
	m, err := New(Options{Clock: h.clk, Tracer: trace.Discard, Status: h.status, Rand: rand.New(rand.NewPCG(1, 2)), Recorder: &h.events, Script: h.script})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	h.m = m
	h.clk.Advance(started)
	return h
}

func (h *harness) at() time.Duration { return h.clk.Since(vclock.Epoch) }

// runUntil advances the clock from wake-up to wake-up up to until, collecting the updates.
func (h *harness) runUntil(until time.Duration) {
	for {
		next, ok := h.m.NextWake()
		if !ok || next.Sub(vclock.Epoch) > until {
			h.clk.Set(vclock.Epoch.Add(until))
			return
		}
		if next.After(h.clk.Now()) {
			h.clk.Set(next)
		}
		for _, u := range h.m.Advance(context.Background()) {
			h.log = append(h.log, fmt.Sprintf("%vs %s %s", h.at().Seconds(), u.Probe.Name(), u.Result))
		}
	}
}

// running records the container as running since started, with its started flag.
func (h *harness) running(pod *v1.Pod, id string, started time.Duration, startedFlag bool) {
	h.status[pod.UID] = v1.PodStatus{Phase: v1.PodRunning, PodIP: "10.0.0.2", ContainerStatuses: []v1.ContainerStatus{{
		Name: pod.Spec.Containers[0].Name, ContainerID: "fake://" + id, Started: &startedFlag,
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(vclock.Epoch.Add(started))}},
	}}}
}

func podWith(c v1.Container) *v1.Pod {
	return podtest.New("p", podtest.Namespace("ns"), podtest.Containers(c))
}

func httpProbe(period, initialDelay, failure, success int32) *v1.Probe {
	return &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/"}},
		PeriodSeconds: period, InitialDelaySeconds: initialDelay, FailureThreshold: failure, SuccessThreshold: success}
}

func TestReadinessThresholds(t *testing.T) {
	tests := []struct {
		name   string
		rule   Rule
		probe  *v1.Probe
		until  time.Duration
		want   []string
		events int
	}{
		{
			name: "success at the first tick after the start", probe: httpProbe(5, 0, 3, 1), until: 20 * time.Second,
			// Worker ticks at 100s, 105s...; the container runs from 101s, seen at 105s.
			want: []string{"105s readiness Failure", "105s readiness Success"},
		},
		{
			name: "successThreshold 2 needs two ticks", probe: httpProbe(5, 0, 3, 2), until: 20 * time.Second,
			want: []string{"105s readiness Failure", "110s readiness Success"},
		},
		{
			name: "failures below the threshold change nothing", rule: Rule{Outcome: OutcomeFailure, Times: 2},
			probe: httpProbe(5, 0, 3, 1), until: 20 * time.Second,
			want: []string{"105s readiness Failure", "115s readiness Success"}, events: 2,
		},
		{
			name: "unknown counts as a failure without an event", rule: Rule{Outcome: OutcomeUnknown, Times: 2},
			probe: httpProbe(5, 0, 3, 1), until: 20 * time.Second,
			want: []string{"105s readiness Failure", "115s readiness Success"},
		},
		{
			name: "an error is discarded with an event", rule: Rule{Outcome: OutcomeError, Times: 2},
			probe: httpProbe(5, 0, 1, 1), until: 20 * time.Second,
			want: []string{"105s readiness Failure", "115s readiness Success"}, events: 2,
		},
		{
			name: "initialDelaySeconds counts from the container's start", probe: httpProbe(5, 12, 3, 1), until: 20 * time.Second,
			// 105s: 4s since the start; 110s: 9s; 115s: 14s.
			want: []string{"105s readiness Failure", "115s readiness Success"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, 100*time.Second)
			pod := podWith(v1.Container{Name: "c", ReadinessProbe: tt.probe})
			h.script.Set("ns/p", "c", Readiness, tt.rule, h.clk.Now())
			if tt.rule == (Rule{}) {
				h.script = nil
			}
			h.m.AddPod(context.Background(), pod)
			h.runUntil(100 * time.Second) // the first doProbe finds no container
			h.running(pod, "c1", 101*time.Second, true)
			h.runUntil(100*time.Second + tt.until)
			if diff := cmp.Diff(tt.want, h.log); diff != "" {
				t.Errorf("updates (-want +got):\n%s", diff)
			}
			if len(h.events) != tt.events {
				t.Errorf("events = %q, want %d", h.events, tt.events)
			}
		})
	}
}

func TestStartupGatesLivenessAndReadiness(t *testing.T) {
	h := newHarness(t, 100*time.Second)
	pod := podWith(v1.Container{Name: "c", StartupProbe: httpProbe(10, 0, 30, 1), LivenessProbe: httpProbe(10, 0, 1, 1), ReadinessProbe: httpProbe(10, 0, 1, 1)})
	h.script.Set("ns/p", "c", Startup, Rule{Outcome: OutcomeFailure, Times: 2}, h.clk.Now())
	h.script.Set("ns/p", "c", Liveness, Rule{Outcome: OutcomeFailure}, h.clk.Now())
	h.m.AddPod(context.Background(), pod)
	h.runUntil(100 * time.Second) // the first doProbe finds no container
	h.running(pod, "c1", 101*time.Second, false)
	h.runUntil(135 * time.Second)
	// The failing liveness probe never ran: the container had not started.
	want := []string{"110s startup Unknown", "110s readiness Failure", "110s liveness Success", "130s startup Success"}
	if diff := cmp.Diff(want, h.log); diff != "" {
		t.Errorf("updates (-want +got):\n%s", diff)
	}
	var s v1.PodStatus = h.status[pod.UID]
	h.m.UpdateContainerStatuses(pod, s.ContainerStatuses, s.InitContainerStatuses)
	if !*s.ContainerStatuses[0].Started || s.ContainerStatuses[0].Ready {
		t.Errorf("after startup success: started %v ready %v, want true false", *s.ContainerStatuses[0].Started, s.ContainerStatuses[0].Ready)
	}
}

func TestLivenessFailureHoldsUntilNewContainer(t *testing.T) {
	h := newHarness(t, 100*time.Second)
	pod := podWith(v1.Container{Name: "c", LivenessProbe: httpProbe(5, 0, 2, 1)})
	h.script.Set("ns/p", "c", Liveness, Rule{Outcome: OutcomeFailure}, h.clk.Now())
	h.m.AddPod(context.Background(), pod)
	h.runUntil(100 * time.Second) // the first doProbe finds no container
	h.running(pod, "c1", 101*time.Second, true)
	h.runUntil(130 * time.Second)
	if !h.m.LivenessFailed("c1") {
		t.Error("LivenessFailed(c1) = false, want true")
	}
	// On hold: two failures (105s, 110s), then no probe until a new instance appears.
	if len(h.events) != 2 {
		t.Errorf("events = %q, want 2 Unhealthy", h.events)
	}
	h.running(pod, "c2", 131*time.Second, true)
	h.runUntil(146 * time.Second)
	want := []string{"105s liveness Success", "110s liveness Failure", "135s liveness Success", "140s liveness Failure"}
	if diff := cmp.Diff(want, h.log); diff != "" {
		t.Errorf("updates (-want +got):\n%s", diff)
	}
	if _, ok := h.m.Result(Liveness, "c1"); ok {
		t.Error("the old instance's result is still cached")
	}
}

func TestManualTriggerResetsTicker(t *testing.T) {
	h := newHarness(t, 100*time.Second)
	pod := podWith(v1.Container{Name: "c", ReadinessProbe: httpProbe(10, 0, 1, 2)})
	h.m.AddPod(context.Background(), pod)
	h.runUntil(100 * time.Second) // the first doProbe finds no container
	h.running(pod, "c1", 101*time.Second, true)
	h.clk.Set(vclock.Epoch.Add(103 * time.Second))
	var s v1.PodStatus = h.status[pod.UID]
	h.m.UpdateContainerStatuses(pod, s.ContainerStatuses, s.InitContainerStatuses) // started, no Success: triggers the worker
	if s.ContainerStatuses[0].Ready {
		t.Fatal("ready before any probe")
	}
	h.runUntil(120 * time.Second)
	// 103s: the manual run (Failure seeded, one success); the ticker restarts: 113s.
	want := []string{"103s readiness Failure", "113s readiness Success"}
	if diff := cmp.Diff(want, h.log); diff != "" {
		t.Errorf("updates (-want +got):\n%s", diff)
	}
}

func TestInitialDelayOnlyWhileKubeletIsYoung(t *testing.T) {
	for _, tt := range []struct {
		age       time.Duration
		wantDelay bool
	}{{0, true}, {9 * time.Second, true}, {10 * time.Second, false}} {
		clk := vclock.New(vclock.Epoch)
		m, err := New(Options{Clock: clk, Tracer: trace.Discard, Status: fakeStatus{}, Rand: rand.New(rand.NewPCG(7, 7))})
		if err != nil {
			t.Fatal(err)
		}
		clk.Advance(tt.age)
		m.AddPod(context.Background(), podWith(v1.Container{Name: "c", LivenessProbe: httpProbe(10, 0, 3, 1)}))
		next, _ := m.NextWake()
		if got := next.After(clk.Now()); got != tt.wantDelay {
			t.Errorf("kubelet age %v: first probe at %v after now = %v, want %v", tt.age, next.Sub(clk.Now()), got, tt.wantDelay)
		}
		if next.Sub(clk.Now()) >= 10*time.Second {
			t.Errorf("kubelet age %v: delay %v, want under the period", tt.age, next.Sub(clk.Now()))
		}
	}
}

func TestUpdatePodStatus(t *testing.T) {
	running := v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(vclock.Epoch.Add(50 * time.Second))}}
	tests := []struct {
		name        string
		c           v1.Container
		seed        func(m *Manager)
		state       v1.ContainerState
		wantStarted bool
		wantReady   bool
	}{
		{name: "no probes: running is started and ready", c: v1.Container{Name: "c"}, state: running, wantStarted: true, wantReady: true},
		{name: "not running", c: v1.Container{Name: "c"}, state: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}}},
		{name: "startup worker without a result", c: v1.Container{Name: "c", StartupProbe: httpProbe(10, 0, 3, 1)}, state: running},
		{name: "startup Unknown", c: v1.Container{Name: "c", StartupProbe: httpProbe(10, 0, 3, 1)}, state: running,
			seed: func(m *Manager) { m.caches[Startup].Set("c1", results.Unknown) }},
		{name: "readiness worker without Success", c: v1.Container{Name: "c", ReadinessProbe: httpProbe(10, 0, 3, 1)}, state: running, wantStarted: true},
		{name: "readiness Success", c: v1.Container{Name: "c", ReadinessProbe: httpProbe(10, 0, 3, 1)}, state: running, wantStarted: true, wantReady: true,
			seed: func(m *Manager) { m.caches[Readiness].Set("c1", results.Success) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, 100*time.Second)
			pod := podWith(tt.c)
			h.m.AddPod(context.Background(), pod)
			if tt.seed != nil {
				tt.seed(h.m)
			}
			s := v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "c", ContainerID: "fake://c1", State: tt.state}}}
			h.m.UpdateContainerStatuses(pod, s.ContainerStatuses, s.InitContainerStatuses)
			cs := s.ContainerStatuses[0]
			if *cs.Started != tt.wantStarted || cs.Ready != tt.wantReady {
				t.Errorf("started %v ready %v, want %v %v", *cs.Started, cs.Ready, tt.wantStarted, tt.wantReady)
			}
		})
	}
}

func TestStopLivenessAndStartupKeepsReadiness(t *testing.T) {
	h := newHarness(t, 100*time.Second)
	pod := podWith(v1.Container{Name: "c", StartupProbe: httpProbe(10, 0, 3, 1), LivenessProbe: httpProbe(10, 0, 3, 1), ReadinessProbe: httpProbe(10, 0, 3, 1)})
	h.m.AddPod(context.Background(), pod)
	h.m.StopLivenessAndStartup(pod)
	if len(h.m.workers) != 1 {
		t.Fatalf("workers after StopLivenessAndStartup = %d, want the readiness worker alone", len(h.m.workers))
	}
	if _, ok := h.m.workers[workerKey{pod.UID, "c", Readiness}]; !ok {
		t.Error("the readiness worker was stopped")
	}
	h.m.CleanupPods(map[types.UID]bool{})
	if len(h.m.workers) != 0 {
		t.Errorf("workers after CleanupPods of no pod = %d, want 0", len(h.m.workers))
	}
}

func TestBadAnnotationMakesProbesError(t *testing.T) {
	h := newHarness(t, 100*time.Second)
	h.script = nil
	pod := podWith(v1.Container{Name: "c", ReadinessProbe: httpProbe(5, 0, 1, 1)})
	pod.Annotations = map[string]string{"minikubelet.io/readiness-probe.c": "fail-for=20s"}
	h.m.AddPod(context.Background(), pod)
	h.runUntil(100 * time.Second) // the first doProbe finds no container
	h.running(pod, "c1", 101*time.Second, true)
	h.runUntil(106 * time.Second)
	if len(h.events) != 1 || !strings.Contains(h.events[0], "Readiness probe errored and resulted in unknown state: pod ns/p: annotation minikubelet.io/readiness-probe.c") {
		t.Errorf("events = %q, want one errored Unhealthy naming the pod and the annotation", h.events)
	}
}
