package kubelet

import (
	"net/http"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/test/podtest"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/api/apidefaults"
	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// apiPodFixture is the kubelet tests' simplePod: pod1/ns1, UID "1", one container, no grace,
// defaulted as the API server stores it (the kubelet needs enableServiceLinks to make the
// container's environment).
func apiPodFixture() *v1.Pod {
	pod := podtest.New("pod1", podtest.Namespace("ns1"), podtest.UID("1"), podtest.Source("api"), podtest.Node(testNode),
		podtest.Containers(podtest.Container("container-1", podtest.DefaultImage)))
	apidefaults.SetPodDefaults(pod)
	return pod
}

func TestOrphanedRuntimePodIsKilledWithGraceOne(t *testing.T) {
	e := newEnv(t, envOptions{standalone: true, latencies: fakeruntime.Latencies{ContainerStop: 30 * time.Second}})
	e.setFile() // the only source has been seen: housekeeping runs
	orphan := apiPodFixture()
	if _, err := e.k.Runtime.SyncPod(orphan, nil, nil); err != nil {
		t.Fatalf("runtime SyncPod() = %v", err)
	}
	gone := func() bool {
		pods, err := e.k.Runtime.GetPods(false)
		_, known := e.k.Workers.State(orphan.UID)
		return err == nil && len(pods) == 0 && !known
	}
	if !e.run(10*time.Second, gone) {
		t.Fatalf("orphaned runtime pod still running or known after %v", e.now())
	}
	for _, ev := range e.trace() {
		if ev.Component == trace.Runtime && ev.Event == "killing" {
			// SyncTerminatingRuntimePod passes a grace of 1, which killContainer raises to
			// StopContainer's 2s minimum; the trace shows the stop timeout.
			if ev.Delay != 2*time.Second {
				t.Errorf("orphan stopped with timeout %v, want 2s (grace 1 raised to the minimum)", ev.Delay)
			}
			return
		}
	}
	t.Error("no kill of the orphaned runtime pod in the trace")
}

func TestHousekeepingWaitsForSources(t *testing.T) {
	// The http source's server answers 404 until it serves: until then the source has sent no
	// SET and not every source has been seen.
	e := newEnv(t, envOptions{standalone: true, httpSource: true})
	pod := staticPod("web", "uid-web", v1.RestartPolicyAlways)
	e.setFile(pod)
	if !e.run(10*time.Second, func() bool { return e.phase(pod.UID) == v1.PodRunning }) {
		t.Fatalf("%s not Running after %v", pod.Name, e.now())
	}
	e.setFile() // removed before every source was seen: the kill is skipped
	e.runFor(5 * time.Second)
	if s, _ := e.k.Workers.State(pod.UID); s != podworkers.Sync {
		t.Errorf("worker state of %s with sources not ready = %v, want sync", pod.UID, s)
	}
	var skips, cleanups int
	for _, ev := range e.trace() {
		if ev.Component == trace.Housekeeping && ev.Event == "skip" {
			skips++
		}
		if ev.Func == "FailedToDeletePod" || ev.Reason == "FailedToDeletePod" {
			cleanups++
		}
	}
	if skips == 0 {
		t.Error("no housekeeping skip traced while sources were not ready")
	}
	if cleanups != 1 {
		t.Errorf("traced %d refused deletes, want 1", cleanups)
	}

	e.manifests.Serve(http.StatusOK, "") // an empty answer is an empty SET: the source is seen
	if !e.run(30*time.Second, func() bool { _, known := e.k.Workers.State(pod.UID); return !known }) {
		t.Fatalf("worker of %s not forgotten after sources became ready", pod.UID)
	}
	pods, err := e.k.Runtime.GetPods(false)
	if err != nil {
		t.Fatalf("GetPods() = %v", err)
	}
	if len(pods) != 0 {
		t.Errorf("runtime still runs %d pods, want 0", len(pods))
	}
}
