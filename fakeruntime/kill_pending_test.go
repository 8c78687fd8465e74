package fakeruntime

import (
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// TestKillDropsWorkASyncScheduled kills a pod while its SyncPod is still pulling the image: the
// sandbox, container creation and start that SyncPod scheduled must not happen afterwards, as a
// cancelled SyncPod makes no more CRI calls in the kubelet.
func TestKillDropsWorkASyncScheduled(t *testing.T) {
	e := newEnv(t, Latencies{SandboxStart: 500 * time.Millisecond, ImagePull: 2 * time.Second, ContainerStart: 500 * time.Millisecond})
	pod := podtest.New("web")
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("SyncPod() error = %v", err)
	}
	e.clk.Set(at(time.Second)) // sandbox ready, image still pulling
	res, err := e.rt.KillPod(pod, nil, nil)
	if err != nil {
		t.Fatalf("KillPod() error = %v", err)
	}
	e.clk.Set(res.Done.Add(time.Minute))
	e.rt.Advance()
	if got := e.times("created", "app"); len(got) != 0 {
		t.Errorf("container created at %v after the kill, want never", got)
	}
	if got := e.times("started", "app"); len(got) != 0 {
		t.Errorf("container started at %v after the kill, want never", got)
	}
	for _, c := range e.status(pod).ContainerStatuses {
		if c.State == kubecontainer.ContainerStateRunning {
			t.Errorf("container %s is running after the kill", c.ID)
		}
	}
	// A new SyncPod after the kill schedules afresh and is not dropped.
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("SyncPod() after the kill error = %v", err)
	}
	e.clk.Set(e.clk.Now().Add(10 * time.Second))
	e.rt.Advance()
	if got := e.times("started", "app"); len(got) != 1 {
		t.Errorf("container started %d times after a new SyncPod, want 1", len(got))
	}
}
