package fakeruntime

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// withResources gives the app container cpu and memory requests and limits ("" for none).
func withResources(cpuReq, cpuLim, memReq, memLim string) podtest.Option {
	return func(p *v1.Pod) { p.Spec.Containers[0].Resources = resources(cpuReq, cpuLim, memReq, memLim) }
}

func resources(cpuReq, cpuLim, memReq, memLim string) v1.ResourceRequirements {
	var r v1.ResourceRequirements
	set := func(l *v1.ResourceList, name v1.ResourceName, v string) {
		if v == "" {
			return
		}
		if *l == nil {
			*l = v1.ResourceList{}
		}
		(*l)[name] = resource.MustParse(v)
	}
	set(&r.Requests, v1.ResourceCPU, cpuReq)
	set(&r.Limits, v1.ResourceCPU, cpuLim)
	set(&r.Requests, v1.ResourceMemory, memReq)
	set(&r.Limits, v1.ResourceMemory, memLim)
	return r
}

// runningResources returns what the runtime reports the running app container has.
func runningResources(t *testing.T, e *env, pod *v1.Pod) kubecontainer.ContainerResources {
	t.Helper()
	cs := e.status(pod).FindContainerStatusByName("app")
	if cs == nil || cs.State != kubecontainer.ContainerStateRunning || cs.Resources == nil {
		t.Fatalf("app container status = %+v, want running with resources", cs)
	}
	return *cs.Resources
}

func quantities(r kubecontainer.ContainerResources) []string {
	str := func(q *resource.Quantity) string {
		if q == nil {
			return "none"
		}
		return q.String()
	}
	return []string{str(r.CPURequest), str(r.CPULimit), str(r.MemoryRequest), str(r.MemoryLimit)}
}

// TestResizeInPlace resizes a running container whose resize policy is NotRequired (the default):
// SyncPod updates it in place, memory before cpu, the container keeps running with the same ID,
// and the runtime reports the new resources once the updates are applied.
func TestResizeInPlace(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("web", withResources("100m", "200m", "64Mi", "128Mi"))
	e.drive(pod, at(time.Second))
	before := e.status(pod).FindContainerStatusByName("app")
	if got := quantities(runningResources(t, e, pod)); !cmp.Equal(got, []string{"100m", "200m", "64Mi", "128Mi"}) {
		t.Fatalf("resources at start = %v", got)
	}

	resized := pod.DeepCopy()
	resized.Spec.Containers[0].Resources = resources("300m", "400m", "32Mi", "64Mi")
	if !e.rt.IsPodResizeInProgress(resized, e.status(resized)) {
		t.Errorf("IsPodResizeInProgress() before the resize = false, want true")
	}
	res, err := e.sync(resized)
	if err != nil || !res.Resized {
		t.Fatalf("SyncPod(resized) = %+v, %v, want Resized and no error", res, err)
	}
	e.clk.Set(at(2 * time.Second))
	e.rt.Advance()

	after := e.status(resized).FindContainerStatusByName("app")
	if after.ID != before.ID || after.RestartCount != 0 {
		t.Errorf("container after resize = %s restarts %d, want the same instance %s", after.ID, after.RestartCount, before.ID)
	}
	if got := quantities(runningResources(t, e, resized)); !cmp.Equal(got, []string{"300m", "400m", "32Mi", "64Mi"}) {
		t.Errorf("resources after resize = %v, want 300m 400m 32Mi 64Mi", got)
	}
	if e.rt.IsPodResizeInProgress(resized, e.status(resized)) {
		t.Errorf("IsPodResizeInProgress() after the resize = true, want false")
	}
	var got []string
	for _, ev := range e.events {
		if ev.Event == trace.KindResize {
			got = append(got, ev.Reason+" "+ev.Message)
		}
		if ev.Event == trace.KindSync && ev.Func == "SyncPod" && ev.T == time.Second {
			if ev.Message != "resize=[app]" {
				t.Errorf("SyncPod actions = %q, want resize=[app]", ev.Message)
			}
		}
	}
	want := []string{"memory requests=32Mi limits=64Mi", "cpu requests=300m limits=400m"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resize events mismatch (-want +got):\n%s", diff)
	}
	// A second sync finds nothing to do.
	if res, err := e.sync(resized); err != nil || res.Resized {
		t.Errorf("SyncPod() after the resize = %+v, %v, want no resize", res, err)
	}
}

// TestResizeRestartContainer resizes memory of a container whose memory resize policy is
// RestartContainer: SyncPod kills it with the kubelet's message and starts it again with the new
// resources.
func TestResizeRestartContainer(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("db", withResources("100m", "", "64Mi", "64Mi"))
	pod.Spec.Containers[0].ResizePolicy = []v1.ContainerResizePolicy{
		{ResourceName: v1.ResourceCPU, RestartPolicy: v1.NotRequired},
		{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer},
	}
	e.drive(pod, at(time.Second))
	before := e.status(pod).FindContainerStatusByName("app")

	resized := pod.DeepCopy()
	resized.Spec.Containers[0].Resources = resources("100m", "", "128Mi", "128Mi")
	res, err := e.sync(resized)
	if err != nil || !res.Resized {
		t.Fatalf("SyncPod(resized) = %+v, %v, want Resized and no error", res, err)
	}
	e.drive(resized, at(time.Minute))
	after := e.status(resized).FindContainerStatusByName("app")
	if after.ID == before.ID || after.RestartCount != 1 {
		t.Errorf("container after resize = %s restarts %d, want a new instance with 1 restart", after.ID, after.RestartCount)
	}
	if got := quantities(runningResources(t, e, resized)); !cmp.Equal(got, []string{"100m", "none", "128Mi", "128Mi"}) {
		t.Errorf("resources after restart = %v", got)
	}
	var kill string
	for _, ev := range e.events {
		if ev.Event == trace.KindResize {
			t.Errorf("in-place update %q of a container whose policy restarts it", ev.Message)
		}
		if ev.Event == trace.KindKilling && ev.Container == "app" {
			kill = ev.Message
		}
	}
	if want := "Container app resize requires restart"; kill != want {
		t.Errorf("kill message = %q, want %q", kill, want)
	}
}

// TestResizeFails scripts UpdateContainerResources to fail once: SyncPod returns a ResizeError,
// the container keeps its resources, and the next sync resizes it.
func TestResizeFails(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("web", withResources("100m", "", "", ""))
	e.drive(pod, at(time.Second))
	if err := e.rt.FailRuntimeCall(CallUpdateContainerResources, 1); err != nil {
		t.Fatal(err)
	}
	resized := pod.DeepCopy()
	resized.Spec.Containers[0].Resources = resources("200m", "", "", "")
	res, err := e.sync(resized)
	var rerr *kubecontainer.ResizeError
	if !res.Resized || !errors.As(err, &rerr) || !errors.Is(err, kubecontainer.ErrResizePodInPlace) {
		t.Fatalf("SyncPod() = %+v, %v, want Resized and a ResizeError", res, err)
	}
	e.rt.Advance()
	if got := quantities(runningResources(t, e, resized)); got[0] != "100m" {
		t.Errorf("cpu request after a failed resize = %s, want 100m", got[0])
	}
	if _, err := e.sync(resized); err != nil {
		t.Fatalf("second SyncPod() = %v", err)
	}
	e.rt.Advance()
	if got := quantities(runningResources(t, e, resized)); got[0] != "200m" {
		t.Errorf("cpu request after the retry = %s, want 200m", got[0])
	}
}

// TestResizeStaticPodNotActuated: the kubelet never resizes a static pod in place.
func TestResizeStaticPodNotActuated(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("static", withResources("100m", "", "", ""), podtest.Source("file"))
	e.drive(pod, at(time.Second))
	resized := pod.DeepCopy()
	resized.Spec.Containers[0].Resources = resources("200m", "", "", "")
	if res, err := e.sync(resized); err != nil || res.Resized {
		t.Errorf("SyncPod(static resized) = %+v, %v, want no resize", res, err)
	}
}

// TestAmountsOfSpec holds the allocation-free reading of a container's spec to the one it
// replaces, amountsOf(ResourcesOf(...)), on requests and limits of every shape.
func TestAmountsOfSpec(t *testing.T) {
	for _, tt := range []struct {
		name     string
		requests map[v1.ResourceName]string
		limits   map[v1.ResourceName]string
	}{
		{name: "none"},
		{name: "cpu request only", requests: map[v1.ResourceName]string{v1.ResourceCPU: "250m"}},
		{name: "memory limit only", limits: map[v1.ResourceName]string{v1.ResourceMemory: "1.5Gi"}},
		{name: "all four", requests: map[v1.ResourceName]string{v1.ResourceCPU: "100m", v1.ResourceMemory: "64Mi"},
			limits: map[v1.ResourceName]string{v1.ResourceCPU: "2", v1.ResourceMemory: "128M"}},
		{name: "fractions and large values", requests: map[v1.ResourceName]string{v1.ResourceCPU: "0.0015", v1.ResourceMemory: "1e3"},
			limits: map[v1.ResourceName]string{v1.ResourceCPU: "1000000", v1.ResourceMemory: "10Ti"}},
		{name: "other resources only", requests: map[v1.ResourceName]string{"example.com/gpu": "1", v1.ResourceEphemeralStorage: "1Gi"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := v1.ResourceRequirements{}
			if tt.requests != nil {
				r.Requests = podtest.List(tt.requests)
			}
			if tt.limits != nil {
				r.Limits = podtest.List(tt.limits)
			}
			want := amountsOf(kubecontainer.ResourcesOf(r))
			if got := amountsOfSpec(&r); got != want {
				t.Errorf("amountsOfSpec() = %+v, want %+v", got, want)
			}
		})
	}
}
