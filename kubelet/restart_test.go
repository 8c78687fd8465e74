package kubelet

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/world"
)

// TestRestartRegistersPluginsAndReadsTheCheckpoint: a kubelet restart keeps only what the world
// keeps. The new process reads the device checkpoint back (the pod's devices stay allocated, the
// resource has a stopped endpoint), its watcher's first traversal finds the socket still in the
// registry, and the plugin registers again, as on a kubelet restart.
func TestRestartRegistersPluginsAndReadsTheCheckpoint(t *testing.T) {
	plugins := world.NewPlugins("/var/lib/kubelet/plugins_registry")
	e := newEnv(t, envOptions{standalone: true, plugins: plugins})
	e.settle()
	sock := plugins.Create("gpu.sock", world.PluginSpec{Type: registerapi.DevicePlugin, Name: "example.com/gpu", Versions: []string{"v1beta1"}, Devices: 2})
	if err := e.k.Plugins.SocketCreated(sock); err != nil {
		t.Fatal(err)
	}
	e.runFor(2 * time.Second) // the plugin manager's next pass registers the plugin
	pod := staticPod("gpu", "uid-gpu", v1.RestartPolicyAlways)
	pod.Spec.Containers[0].Resources.Limits = v1.ResourceList{"example.com/gpu": resource.MustParse("1")}
	e.setFile(pod)
	if !e.run(30*time.Second, func() bool { return e.phase(pod.UID) == v1.PodRunning }) {
		t.Fatalf("%s not Running after %v", pod.Name, e.now())
	}

	mark := e.rec.Len()
	e.restart(plugins)
	e.runFor(5 * time.Second)
	var got []string
	for _, ev := range e.rec.EventsSince(mark) {
		switch ev.Component {
		case trace.DeviceManager, trace.PluginWatcher:
			got = append(got, string(ev.Component)+" "+string(ev.Event)+" "+ev.Message)
		case trace.PluginManager:
			if ev.Event == trace.KindRegistered {
				got = append(got, string(ev.Component)+" "+string(ev.Event)+" "+ev.Message[:strings.Index(ev.Message, " type=")])
			}
		}
	}
	want := []string{
		"devicemanager restored pods=1 resources=example.com/gpu",
		"pluginwatcher add socket=gpu.sock id=id-2",
		"devicemanager registered resource=example.com/gpu endpoint=/var/lib/kubelet/plugins_registry/gpu.sock",
		"devicemanager devices resource=example.com/gpu healthy=2 unhealthy=0",
		"pluginmanager registered socket=/var/lib/kubelet/plugins_registry/gpu.sock",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plugin pipeline after the restart (-want +got):\n%s", diff)
	}
	// The restored allocation holds one of the two devices: a second pod asking for two is
	// refused, one asking for one is admitted.
	ok, _, msg := e.k.Plugins.Devices.Admit(e.ctx, gpuPod("two", 2))
	if ok || !strings.Contains(msg, "Requested: 2, Available: 1") {
		t.Errorf("Admit(two devices) after the restart = %v %q, want a refusal for lack of devices", ok, msg)
	}
	if ok, _, msg := e.k.Plugins.Devices.Admit(e.ctx, gpuPod("one", 1)); !ok {
		t.Errorf("Admit(one device) after the restart refused: %s", msg)
	}
}

func gpuPod(name string, n int64) *v1.Pod {
	pod := staticPod(name, types.UID("uid-"+name), v1.RestartPolicyAlways)
	pod.Spec.Containers[0].Resources.Limits = v1.ResourceList{"example.com/gpu": *resource.NewQuantity(n, resource.DecimalSI)}
	return pod
}

// TestRestartReadsTheAllocationCheckpoint: the allocation manager writes allocated_pods_state in
// the root directory when the process stops, and a restarted kubelet reads it back
// before it admits anything: the pod's allocation is the one written, whatever its spec asks now.
// A checkpoint that cannot be read stops the new kubelet with the file's name.
func TestRestartReadsTheAllocationCheckpoint(t *testing.T) {
	root := t.TempDir()
	e := newEnv(t, envOptions{standalone: true})
	cp := AllocationsOnDisk(root)
	e.opts.World.Allocations = cp
	e.restart(nil) // the kubelet of the env, over the checkpoint
	e.settle()
	pod := staticPod("web", "uid-web", v1.RestartPolicyAlways)
	pod.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}
	e.setFile(pod)
	if !e.run(30*time.Second, func() bool { return e.phase(pod.UID) == v1.PodRunning }) {
		t.Fatalf("%s not Running after %v", pod.Name, e.now())
	}
	// Written when the process stops (Run: also once a second while it changes).
	if _, err := os.Stat(cp.Path); err == nil {
		t.Errorf("allocated_pods_state written before SaveCheckpoints")
	}
	e.k.SaveCheckpoints(e.ctx)
	data, err := os.ReadFile(filepath.Join(root, "allocated_pods_state"))
	if err != nil || !strings.Contains(string(data), `\"uid-web\":{\"ContainerResources\":{\"`+pod.Spec.Containers[0].Name+`\":{\"requests\":{\"cpu\":\"500m\"}}}`) {
		t.Fatalf("allocated_pods_state = %s, %v, want web's 500m", data, err)
	}

	e.restart(nil)
	wider := pod.DeepCopy()
	wider.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("1")
	got, updated := e.k.Sync.Allocation.UpdatePodFromAllocation(wider)
	if cpu := got.Spec.Containers[0].Resources.Requests[v1.ResourceCPU]; !updated || cpu.String() != "500m" {
		t.Errorf("after the restart, the allocation of web asking for 1 CPU = %v (updated %v), want the 500m written", cpu.String(), updated)
	}

	if err := os.WriteFile(cp.Path, []byte(`{"data":"{}","checksum":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e.opts.World.Runtime = e.k.Runtime
	if _, err := New(e.opts); err == nil || !strings.Contains(err.Error(), cp.Path) {
		t.Errorf("New() over a corrupt allocation checkpoint = %v, want an error naming %s", err, cp.Path)
	}
}

// TestRestartDropsTheOldWorkers: the runtime outlives a kubelet restart, but what it holds of the
// old process must not keep that process alive. Its shared trace keys are the new process's, so
// the old pod workers (and the whole old sync side they reach) can be collected.
func TestRestartDropsTheOldWorkers(t *testing.T) {
	e := newEnv(t, envOptions{standalone: true, noFileSource: true, syncFrequency: 10 * time.Second})
	pod := staticPod("web", "uid-web", v1.RestartPolicyAlways)
	e.handPods(pod)
	if !e.run(time.Minute, func() bool { return e.phase(pod.UID) == v1.PodRunning }) {
		t.Fatalf("pod not Running after a minute")
	}
	old := weak.Make(e.k.Workers)
	e.restart(nil)
	e.runFor(5 * time.Second)
	for range 3 {
		runtime.GC()
	}
	if old.Value() != nil {
		t.Errorf("the old process's pod workers are still reachable after the restart")
	}
	runtime.KeepAlive(e)
}

// TestRestartRecordsEventsWithTheNewProcess: the container runtime outlives a kubelet restart,
// but the Kubernetes events kuberuntime records (Pulled, Created, Started) come from the kubelet
// process that asks for the step: after a restart, its new broadcaster and correlator, not the
// old process's.
func TestRestartRecordsEventsWithTheNewProcess(t *testing.T) {
	e := newEnv(t, envOptions{standalone: true})
	e.settle()
	first := staticPod("first", "uid-first", v1.RestartPolicyAlways)
	e.setFile(first)
	if !e.run(30*time.Second, func() bool { return e.phase(first.UID) == v1.PodRunning }) {
		t.Fatalf("%s not Running after %v", first.Name, e.now())
	}
	old := e.events
	before := len(old.list())
	e.events = &eventLog{}
	e.opts.World.Events = e.events
	e.restart(nil)
	second := staticPod("second", "uid-second", v1.RestartPolicyAlways)
	e.setFile(first, second)
	if !e.run(30*time.Second, func() bool { return e.phase(second.UID) == v1.PodRunning }) {
		t.Fatalf("%s not Running after %v", second.Name, e.now())
	}
	if got := old.list()[before:]; len(got) != 0 {
		t.Errorf("the old process's recorder got %q after the restart, want nothing", got)
	}
	got := e.events.list()
	for _, want := range []string{"Normal Created Container created", "Normal Started Container started"} {
		if !slices.Contains(got, want) {
			t.Errorf("the new process's recorder got %q, want %q among them", got, want)
		}
	}
}
