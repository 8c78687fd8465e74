package fakeruntime

import (
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// TestGetPodsCacheFollowsChanges checks that a listing is reused only while nothing changed: an
// effect falling due and a runtime call must both make the next listing fresh.
func TestGetPodsCacheFollowsChanges(t *testing.T) {
	e := newEnv(t, Latencies{ContainerStart: time.Second})
	pod := newPod("web")
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("SyncPod() error = %v", err)
	}
	state := func() kubecontainer.ContainerState {
		pods, err := e.rt.GetPods(true)
		if err != nil || len(pods) != 1 || len(pods[0].Containers) != 1 {
			t.Fatalf("GetPods(true) = %v, %v, want one pod with one container", pods, err)
		}
		return pods[0].Containers[0].State
	}
	if got := state(); got != kubecontainer.ContainerStateCreated {
		t.Errorf("state before the start = %s, want created", got)
	}
	first, _ := e.rt.GetPods(true)
	again, _ := e.rt.GetPods(true)
	if first[0] != again[0] {
		t.Errorf("GetPods(true) twice with no change made a new listing, want the cached one")
	}
	e.clk.Set(at(2 * time.Second)) // the start falls due
	if got := state(); got != kubecontainer.ContainerStateRunning {
		t.Errorf("state after the start = %s, want running", got)
	}
	if _, err := e.rt.KillPod(pod, nil, nil); err != nil {
		t.Fatalf("KillPod() error = %v", err)
	}
	e.clk.Set(at(time.Minute))
	if got := state(); got != kubecontainer.ContainerStateExited {
		t.Errorf("state after the kill = %s, want exited", got)
	}
	if running, _ := e.rt.GetPods(false); len(running) != 0 {
		t.Errorf("GetPods(false) after the kill = %v, want no running pod", running)
	}
}
