package kubelet

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/syncloop"
)

// TestRestartLeavesFinishedPodsUnallocated: a restarted kubelet lets a finished pod through
// without admission or allocation (HandlePodAdditions skips it), so a finished pod whose spec
// differs from its checkpointed allocation queues no resize, records no ResizeStarted and keeps
// the allocation the checkpoint holds. A running pod in the same state is queued and allocated.
func TestRestartLeavesFinishedPodsUnallocated(t *testing.T) {
	e := newEnv(t, envOptions{standalone: true, noFileSource: true})
	e.opts.World.Allocations = AllocationsOnDisk(t.TempDir())
	e.restart(nil) // the kubelet of the env, over the checkpoint
	var pods []*v1.Pod
	for _, name := range []string{"done", "failed", "live"} {
		p := staticPod(name, types.UID("uid-"+name), v1.RestartPolicyNever)
		p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}
		pods = append(pods, p)
	}
	e.apiPods(pods...)
	if !e.run(time.Minute, func() bool { return e.phase("uid-live") == v1.PodRunning }) {
		t.Fatalf("pods not Running after a minute")
	}
	e.restart(nil) // writes the three allocations at 500m

	// What the API shows after the restart: each pod resized to 1 CPU, two of them finished.
	var shown []*v1.Pod
	for i, phase := range []v1.PodPhase{v1.PodSucceeded, v1.PodFailed, v1.PodRunning} {
		p := pods[i].DeepCopy()
		p.Generation = 2
		p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("1")
		p.Status.Phase = phase
		shown = append(shown, p)
	}
	mark := len(e.events.list())
	e.apiPods(shown...)
	e.runFor(time.Minute) // past the first retry, 30s after the start

	// Only the live pod's resize was allocated (the events do not name their pod: the
	// allocations below tell which).
	var started []string
	for _, ev := range e.events.list()[mark:] {
		if strings.HasPrefix(ev, "Normal ResizeStarted ") {
			started = append(started, ev)
		}
	}
	if len(started) != 1 {
		t.Errorf("ResizeStarted after the restart = %q, want one, the live pod's", started)
	}
	if e.k.Sync.Allocation.HasPendingResizes() {
		t.Errorf("a resize is still queued after the retry")
	}
	for _, p := range shown {
		got, _ := e.k.Sync.Allocation.UpdatePodFromAllocation(p)
		want := "500m"
		if p.Status.Phase == v1.PodRunning {
			want = "1"
		}
		if diff := cmp.Diff(want, got.Spec.Containers[0].Resources.Requests.Cpu().String()); diff != "" {
			t.Errorf("%s (%s): allocated cpu after the restart (-want +got):\n%s", p.Name, p.Status.Phase, diff)
		}
	}
}

// apiPods hands the sync loop pods as one SET of the api source would, statuses included.
func (e *env) apiPods(pods ...*v1.Pod) {
	e.t.Helper()
	for _, u := range e.k.PodConfig.Merge(podconfig.APISource, podconfig.Update{Op: podconfig.SET, Source: podconfig.APISource, Pods: pods}) {
		if err := e.k.Loop.Step(e.ctx, syncloop.ConfigUpdate{Update: u}); err != nil {
			e.t.Errorf("Step(%s %s) = %v", u.Op, u.Source, err)
		}
	}
}
