package fakeruntime

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/test/podtest"
)

func TestKillPodGrace(t *testing.T) {
	int64p := func(v int64) *int64 { return &v }
	tests := []struct {
		name         string
		grace        int64 // spec terminationGracePeriodSeconds
		deletion     *int64
		override     *int64
		behavior     *Behavior
		stop         time.Duration
		stopBehavior *StopBehavior
		wantDone     time.Duration
		wantCode     int
		wantGrace    time.Duration
	}{
		{name: "clean stop within grace", grace: 30, stop: 500 * time.Millisecond, wantDone: 500 * time.Millisecond, wantCode: 0, wantGrace: 30 * time.Second},
		{name: "ignores SIGTERM", grace: 30, stop: 500 * time.Millisecond, behavior: &Behavior{IgnoreSIGTERM: true}, wantDone: 30 * time.Second, wantCode: 137, wantGrace: 30 * time.Second},
		{name: "stop slower than grace", grace: 3, stop: 5 * time.Second, wantDone: 3 * time.Second, wantCode: 137, wantGrace: 3 * time.Second},
		{name: "deletion grace wins over spec", grace: 30, deletion: int64p(5), stop: time.Minute, wantDone: 5 * time.Second, wantCode: 137, wantGrace: 5 * time.Second},
		{name: "minimum of 2s", grace: 0, stop: time.Minute, wantDone: 2 * time.Second, wantCode: 137, wantGrace: 2 * time.Second},
		{name: "override floored at 2s", grace: 30, override: int64p(1), stop: time.Minute, wantDone: 2 * time.Second, wantCode: 137, wantGrace: 2 * time.Second},
		{name: "own stop time", grace: 30, stop: time.Minute, stopBehavior: &StopBehavior{After: 7 * time.Second}, wantDone: 7 * time.Second, wantCode: 0, wantGrace: 30 * time.Second},
		{name: "own stop time beyond grace", grace: 5, stop: 0, stopBehavior: &StopBehavior{After: 7 * time.Second}, wantDone: 5 * time.Second, wantCode: 137, wantGrace: 5 * time.Second},
		{name: "stop behaviour ignores SIGTERM", grace: 30, stop: 0, stopBehavior: &StopBehavior{IgnoreSIGTERM: true}, wantDone: 30 * time.Second, wantCode: 137, wantGrace: 30 * time.Second},
		{name: "natural exit before the deadline", grace: 30, stop: time.Minute, behavior: &Behavior{RunFor: 4 * time.Second, ExitCode: 3, IgnoreSIGTERM: true}, wantDone: 4 * time.Second, wantCode: 3, wantGrace: 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Latencies{ContainerStop: tt.stop})
			pod := podtest.New("kill", podtest.TerminationGracePeriod(tt.grace))
			pod.DeletionGracePeriodSeconds = tt.deletion
			if _, err := e.sync(pod); err != nil {
				t.Fatalf("SyncPod() = %v", err)
			}
			if tt.behavior != nil {
				e.rt.SetBehavior("default/kill", "app", *tt.behavior)
			}
			if tt.stopBehavior != nil {
				e.rt.SetStopBehavior("default/kill", "app", *tt.stopBehavior)
			}
			res, err := e.rt.KillPod(pod, nil, tt.override)
			if err != nil {
				t.Fatalf("KillPod() = %v", err)
			}
			if !res.Done.Equal(at(tt.wantDone)) {
				t.Errorf("KillPod() Done = %v, want %v", res.Done.Sub(at(0)), tt.wantDone)
			}
			if c := e.status(pod).FindContainerStatusByName("app"); c.State != kubecontainer.ContainerStateRunning {
				t.Errorf("app before Done = %s, want running", c.State)
			}
			e.clk.Set(res.Done)
			st := e.status(pod)
			c := st.FindContainerStatusByName("app")
			if c.State != kubecontainer.ContainerStateExited || c.ExitCode != tt.wantCode || !c.FinishedAt.Equal(res.Done) {
				t.Errorf("app at Done = %s code %d finished %v, want exited code %d at Done", c.State, c.ExitCode, c.FinishedAt.Sub(at(0)), tt.wantCode)
			}
			if st.Sandboxes[0].State != kubecontainer.SandboxNotReady {
				t.Errorf("sandbox at Done = %s, want notready", st.Sandboxes[0].State)
			}
			if got := killingGrace(e.events); got != tt.wantGrace {
				t.Errorf("traced grace = %v, want %v", got, tt.wantGrace)
			}
		})
	}
}

func killingGrace(events []trace.Event) time.Duration {
	for _, ev := range events {
		if ev.Event == "killing" {
			return ev.Delay
		}
	}
	return -1
}

func TestKillRuntimeOnlyPod(t *testing.T) {
	e := newEnv(t, Latencies{ContainerStop: time.Minute})
	pod := podtest.New("orphan")
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("SyncPod() = %v", err)
	}
	pods, err := e.rt.GetPods(false)
	if err != nil || len(pods) != 1 {
		t.Fatalf("GetPods(false) = %v, %v, want one pod", pods, err)
	}
	one := int64(1)
	res, err := e.rt.KillPod(nil, pods[0], &one)
	// The kubelet gives StopContainer at least 2s, even under an override of 1.
	if err != nil || !res.Done.Equal(at(2*time.Second)) {
		t.Errorf("KillPod(nil, running, 1) = %v, %v, want Done at 2s", res.Done.Sub(at(0)), err)
	}
	e.clk.Set(res.Done)
	if pods, _ := e.rt.GetPods(false); len(pods) != 0 {
		t.Errorf("GetPods(false) after the kill = %d pods, want none running", len(pods))
	}
	var got []string
	for _, ev := range e.events {
		if ev.Pod != "default/orphan" {
			t.Errorf("event %q for pod %q, want default/orphan", ev.Event, ev.Pod)
		}
		got = append(got, string(ev.Event))
	}
	want := []string{"sync", "sandbox", "pull", "pulled", "created", "started", "killing", "exited", "sandbox"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

func TestContainerGracePeriod(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	probe := &v1.Probe{TerminationGracePeriodSeconds: i64(5)}
	c := &v1.Container{Name: "app", LivenessProbe: probe, StartupProbe: probe}
	pod := podtest.New("g", podtest.TerminationGracePeriod(30))
	deleted := podtest.New("g", podtest.TerminationGracePeriod(30))
	deleted.DeletionGracePeriodSeconds = i64(10)
	tests := []struct {
		name   string
		pod    *v1.Pod
		reason string
		want   int64
	}{
		{"pod grace", pod, "", 30},
		{"liveness probe grace", pod, reasonLivenessProbe, 5},
		{"startup probe grace", pod, reasonStartupProbe, 5},
		{"deletion grace wins over the probe's", deleted, reasonLivenessProbe, 10},
		{"no pod", nil, "", 2},
	}
	for _, tt := range tests {
		if got := containerGracePeriod(tt.pod, c, tt.reason); got != tt.want {
			t.Errorf("%s: containerGracePeriod() = %d, want %d", tt.name, got, tt.want)
		}
	}
}
