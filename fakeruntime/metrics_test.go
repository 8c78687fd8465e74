package fakeruntime

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/test/podtest"
)

type metricsLog struct{ lines []string }

func (m *metricsLog) ObserveRuntimeOperation(op string, d time.Duration, err error) {
	line := "op " + op + " " + d.String()
	if err != nil {
		line += " error"
	}
	m.lines = append(m.lines, line)
}

func (m *metricsLog) StartedPod(err error) { m.lines = append(m.lines, "pod") }

func (m *metricsLog) StartedContainer(containerType, code string) {
	m.lines = append(m.lines, "container "+containerType+" "+code)
}

// TestMetrics: a pod with an init container whose first pull fails: the sandbox, each pull, each
// start attempt with its error code, and the CRI calls with their latencies.
func TestMetrics(t *testing.T) {
	e := newEnv(t, Latencies{SandboxStart: time.Second, ImagePull: 2 * time.Second, ContainerStart: 500 * time.Millisecond})
	log := &metricsLog{}
	e.rt.metrics = log
	e.rt.FailImagePull("busybox:1.36", 1)
	pod := podtest.New("web", withInit("setup"))
	if _, err := e.rt.SyncPod(pod, nil, e.bo); err == nil {
		t.Fatal("first SyncPod succeeded; want the pull to fail")
	}
	e.clk.Advance(time.Minute)
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("second SyncPod: %v", err)
	}
	want := []string{
		"op run_podsandbox 1s", "pod",
		"op pull_image 2s error", "container init_container ErrImagePull",
		// The start is counted once it is known to have succeeded: after a postStart hook, if any.
		"op pull_image 2s", "op create_container 0s", "op start_container 500ms", "container init_container ",
	}
	if diff := cmp.Diff(want, log.lines); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

// TestListMetrics: a listing is two CRI calls, both errors while the runtime is down.
func TestListMetrics(t *testing.T) {
	e := newEnv(t, Latencies{})
	log := &metricsLog{}
	e.rt.metrics = log
	if _, err := e.rt.GetPods(true); err != nil {
		t.Fatal(err)
	}
	e.rt.Down(e.clk.Now().Add(time.Minute))
	if _, err := e.rt.GetPods(true); err == nil {
		t.Fatal("GetPods succeeded while down")
	}
	want := []string{"op list_podsandbox 0s", "op list_containers 0s", "op list_podsandbox 0s error"}
	if diff := cmp.Diff(want, log.lines); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

// TestStartErrorMetrics: each failed start counts with the kubelet's error code, whatever wraps it.
func TestStartErrorMetrics(t *testing.T) {
	e := newEnv(t, Latencies{})
	log := &metricsLog{}
	e.rt.metrics = log
	if err := e.rt.FailRuntimeCall(CallStartContainer, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sync(podtest.New("start")); err == nil {
		t.Fatal("SyncPod succeeded; want StartContainer to fail")
	}
	if err := e.rt.FailRuntimeCall(CallCreateContainer, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sync(podtest.New("create")); err == nil {
		t.Fatal("SyncPod succeeded; want CreateContainer to fail")
	}
	var codes []string
	for _, l := range log.lines {
		if len(l) > 10 && l[:10] == "container " {
			codes = append(codes, l)
		}
	}
	want := []string{"container container RunContainerError", "container container CreateContainerError"}
	if diff := cmp.Diff(want, codes); diff != "" {
		t.Errorf("start metrics (-want +got):\n%s", diff)
	}
}

// TestMetricsPostStartFailure: a start whose postStart hook fails counts as a failed start, with
// the kubelet's code PostStartHookError.
func TestMetricsPostStartFailure(t *testing.T) {
	e := newEnv(t, Latencies{})
	log := &metricsLog{}
	e.rt.metrics = log
	pod := podtest.New("web")
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
	if err := e.rt.SetHook(podkey.Build(pod.Namespace, pod.Name), pod.Spec.Containers[0].Name, HookPostStart, HookBehavior{Fail: true}); err != nil {
		t.Fatal(err)
	}
	_, _ = e.rt.SyncPod(pod, nil, e.bo)
	if !slices.Contains(log.lines, "container container PostStartHookError") {
		t.Errorf("metrics = %v, want a container start counted with PostStartHookError", log.lines)
	}
}
