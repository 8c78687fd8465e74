package fakeruntime

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/test/podtest"
)

func TestEffectsVisibleOnlyOnceDue(t *testing.T) {
	e := newEnv(t, DefaultLatencies)
	pod := podtest.New("slow")
	res, err := e.sync(pod)
	if err != nil {
		t.Fatalf("SyncPod() = %v", err)
	}
	if want := at(3 * time.Second); !res.Done.Equal(want) {
		t.Errorf("SyncPod() Done = %v, want 3s (0.5s sandbox + 2s pull + 0.5s start)", res.Done.Sub(at(0)))
	}
	type view struct {
		Sandboxes int
		Sandbox   kubecontainer.SandboxState
		App       kubecontainer.ContainerState
	}
	steps := []struct {
		at   time.Duration
		want view
	}{
		{at: 0, want: view{}},
		{at: 499 * time.Millisecond, want: view{}},
		{at: 500 * time.Millisecond, want: view{Sandboxes: 1, Sandbox: kubecontainer.SandboxReady}},
		{at: 2499 * time.Millisecond, want: view{Sandboxes: 1, Sandbox: kubecontainer.SandboxReady}},
		{at: 2500 * time.Millisecond, want: view{Sandboxes: 1, Sandbox: kubecontainer.SandboxReady, App: kubecontainer.ContainerStateCreated}},
		{at: 3 * time.Second, want: view{Sandboxes: 1, Sandbox: kubecontainer.SandboxReady, App: kubecontainer.ContainerStateRunning}},
	}
	for _, s := range steps {
		e.clk.Set(at(s.at))
		st := e.status(pod)
		var got view
		got.Sandboxes = len(st.Sandboxes)
		if len(st.Sandboxes) > 0 {
			got.Sandbox = st.Sandboxes[0].State
		}
		if c := st.FindContainerStatusByName("app"); c != nil {
			got.App = c.State
		}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("GetPodStatus() at %v mismatch (-want +got):\n%s", s.at, diff)
		}
	}
	if _, ok := e.rt.NextWake(); ok {
		t.Error("NextWake() after every effect = true, want false")
	}
	var got []string
	for _, ev := range e.events {
		got = append(got, fmt.Sprintf("%v %s", ev.T, ev.Event))
	}
	want := []string{"0s sync", "500ms sandbox", "500ms pull", "2.5s pulled", "2.5s created", "3s started"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trace mismatch (-want +got):\n%s", diff)
	}
}

func TestNextWakeAndAdvance(t *testing.T) {
	e := newEnv(t, Latencies{SandboxStart: time.Second})
	pod := podtest.New("wake", withExit("app", "10s", "2"))
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("SyncPod() = %v", err)
	}
	var wakes []time.Duration
	for {
		w, ok := e.rt.NextWake()
		if !ok {
			break
		}
		wakes = append(wakes, w.Sub(at(0)))
		e.clk.Set(w)
		e.rt.Advance()
	}
	want := []time.Duration{time.Second, 11 * time.Second}
	if diff := cmp.Diff(want, wakes); diff != "" {
		t.Errorf("wakes mismatch (-want +got):\n%s", diff)
	}
	last := e.events[len(e.events)-1]
	if last.Event != "exited" || last.ExitCode == nil || *last.ExitCode != 2 || last.Component != trace.Runtime || last.UID != "uid-wake" {
		t.Errorf("last event = %+v, want runtime exited code 2 for uid-wake", last)
	}
}

func TestRuntimeDown(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("down", withExit("app", "5s", "1"))
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("SyncPod() = %v", err)
	}
	e.rt.Down(at(10 * time.Second))
	e.clk.Set(at(6 * time.Second))
	if _, err := e.rt.GetPods(true); !errors.Is(err, ErrRuntimeDown) {
		t.Errorf("GetPods() while down error = %v, want ErrRuntimeDown", err)
	}
	if _, err := e.rt.GetPodStatus(pod.UID, pod.Name, pod.Namespace); !errors.Is(err, ErrRuntimeDown) {
		t.Errorf("GetPodStatus() while down error = %v, want ErrRuntimeDown", err)
	}
	if res, err := e.rt.SyncPod(pod, nil, e.bo); !errors.Is(err, ErrRuntimeDown) || !res.Done.Equal(at(6*time.Second)) {
		t.Errorf("SyncPod() while down = %v, %v, want now and ErrRuntimeDown", res.Done, err)
	}
	if _, err := e.rt.KillPod(pod, nil, nil); !errors.Is(err, ErrRuntimeDown) {
		t.Errorf("KillPod() while down error = %v, want ErrRuntimeDown", err)
	}
	if err := e.rt.RemovePod(pod.UID); !errors.Is(err, ErrRuntimeDown) {
		t.Errorf("RemovePod() while down error = %v, want ErrRuntimeDown", err)
	}
	e.clk.Set(at(10 * time.Second))
	pods, err := e.rt.GetPods(true)
	if err != nil || len(pods) != 1 {
		t.Fatalf("GetPods() after the outage = %v, %v, want one pod", pods, err)
	}
	// The container exited during the outage, at its own time.
	if c := pods[0].Containers[0]; c.State != kubecontainer.ContainerStateExited || !c.FinishedAt.Equal(at(5*time.Second)) {
		t.Errorf("container after the outage = %s finished %v, want exited at 5s", c.State, c.FinishedAt.Sub(at(0)))
	}
}

// run is a fixed script of calls; it returns the trace as text.
func run(t *testing.T) []string {
	e := newEnv(t, DefaultLatencies)
	for i := range 3 {
		pod := podtest.New(fmt.Sprintf("p%d", i), withExit("app", fmt.Sprintf("%ds", 5+i), "1"))
		pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: "side", Image: "nginx:1.27"})
		e.drive(pod, at(time.Duration(40+i)*time.Second))
	}
	pods, err := e.rt.GetPods(true)
	if err != nil {
		t.Fatalf("GetPods() = %v", err)
	}
	var out []string
	for _, p := range pods {
		for _, c := range p.Containers {
			out = append(out, fmt.Sprintf("%s %s %s %s", p.ID, c.ID, c.Name, c.State))
		}
	}
	for _, ev := range e.events {
		out = append(out, fmt.Sprintf("%v %s %s %s %s", ev.T, ev.Event, ev.Pod, ev.Container, ev.Message))
	}
	return out
}

func TestDeterministicIDsAndTrace(t *testing.T) {
	first, second := run(t), run(t)
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("two identical runs differ (-first +second):\n%s", diff)
	}
	if first[0] != "uid-p0 c-000001 app exited" {
		t.Errorf("first listed container = %q, want %q", first[0], "uid-p0 c-000001 app exited")
	}
}

func TestGetPodsListsSorted(t *testing.T) {
	e := newEnv(t, Latencies{})
	for _, name := range []string{"c", "a", "b"} {
		if _, err := e.sync(podtest.New(name, withExit("app", "1s", "0"), podtest.RestartPolicy(v1.RestartPolicyNever))); err != nil {
			t.Fatalf("SyncPod(%s) = %v", name, err)
		}
	}
	e.clk.Set(at(time.Second))
	all, err := e.rt.GetPods(true)
	if err != nil {
		t.Fatalf("GetPods(true) = %v", err)
	}
	var got []string
	for _, p := range all {
		got = append(got, string(p.ID)+" "+p.Containers[0].ID+" "+p.Sandboxes[0].ID)
	}
	want := []string{"uid-a c-000002 s-000002", "uid-b c-000003 s-000003", "uid-c c-000001 s-000001"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetPods(true) mismatch (-want +got):\n%s", diff)
	}
	if running, _ := e.rt.GetPods(false); len(running) != 3 {
		t.Errorf("GetPods(false) = %d pods, want 3 (ready sandboxes, exited containers left out)", len(running))
	} else if len(running[0].Containers) != 0 {
		t.Errorf("GetPods(false) containers = %v, want none running", running[0].Containers)
	}
}

func TestSetBehaviorAndContainerExit(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("script")
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("SyncPod() = %v", err)
	}
	e.clk.Set(at(100 * time.Second))
	e.rt.SetBehavior("default/script", "app", Behavior{RunFor: 3 * time.Second, ExitCode: 42})
	e.clk.Set(at(103 * time.Second))
	c := e.status(pod).FindContainerStatusByName("app")
	if c.State != kubecontainer.ContainerStateExited || c.ExitCode != 42 {
		t.Errorf("after SetBehavior app = %s code %d, want exited 42 three seconds after the call", c.State, c.ExitCode)
	}
	// The next run follows the behavior from its own start.
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("SyncPod() = %v", err)
	}
	e.clk.Set(at(105 * time.Second))
	if err := e.rt.ContainerExit("default/script", "app", 7); err != nil {
		t.Fatalf("ContainerExit() = %v", err)
	}
	c = e.status(pod).FindContainerStatusByName("app")
	if c.State != kubecontainer.ContainerStateExited || c.ExitCode != 7 || c.RestartCount != 1 {
		t.Errorf("after ContainerExit app = %+v, want exited 7 with restart count 1", c)
	}
	if _, ok := e.rt.NextWake(); ok {
		t.Error("NextWake() = true after the scripted exit was overtaken, want false")
	}
	if err := e.rt.ContainerExit("default/script", "app", 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("ContainerExit() with nothing running error = %v, want ErrNotFound", err)
	}
}

func TestRemove(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("rm", withExit("app", "1s", "1"))
	e.drive(pod, at(2*time.Second)) // two instances: exited at 1s, restarted, exited at 2s
	st := e.status(pod)
	if len(st.ContainerStatuses) != 2 {
		t.Fatalf("instances = %d, want 2", len(st.ContainerStatuses))
	}
	oldest := st.ContainerStatuses[1].ID
	if err := e.rt.RemoveContainer(oldest); err != nil {
		t.Errorf("RemoveContainer(%s) = %v", oldest, err)
	}
	if err := e.rt.RemoveContainer(oldest); !errors.Is(err, ErrNotFound) {
		t.Errorf("RemoveContainer(%s) again = %v, want ErrNotFound", oldest, err)
	}
	if got := len(e.status(pod).ContainerStatuses); got != 1 {
		t.Errorf("instances after RemoveContainer = %d, want 1", got)
	}
	if err := e.rt.RemovePod(pod.UID); !errors.Is(err, ErrContainerRunning) {
		t.Errorf("RemovePod() with a ready sandbox = %v, want ErrContainerRunning", err)
	}
	if _, err := e.rt.KillPod(pod, nil, nil); err != nil {
		t.Fatalf("KillPod() = %v", err)
	}
	if err := e.rt.RemovePod(pod.UID); err != nil {
		t.Errorf("RemovePod() after the kill = %v", err)
	}
	if pods, _ := e.rt.GetPods(true); len(pods) != 0 {
		t.Errorf("GetPods(true) after RemovePod = %d pods, want 0", len(pods))
	}
}

func TestBadAnnotationFailsTheStart(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("bad", withExit("app", "soon", ""))
	if _, err := e.sync(pod); !errors.Is(err, ErrBadAnnotation) {
		t.Errorf("SyncPod() error = %v, want ErrBadAnnotation", err)
	}
	if c := e.status(pod).FindContainerStatusByName("app"); c != nil {
		t.Errorf("app = %+v, want no container", c)
	}
}
