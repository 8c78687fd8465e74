package fakeruntime

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// TestKillAfterWaitDiesWithTheKubelet checks that what a kill does after the kubelet process
// waited (for a failing postStart hook, for a preStop hook) is the process's: a restart
// (AttachKubelet) before then leaves the container running, with no Killing, no hook end and no
// stop, and its sandbox ready. A stop already sent is the runtime's to finish.
func TestKillAfterWaitDiesWithTheKubelet(t *testing.T) {
	five := 5 * time.Second
	exec := &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"hook"}}}
	tests := []struct {
		name        string
		hook        string
		restartAt   time.Duration
		wantRunning bool     // the container still runs at 60s
		wantEvents  []string // the runtime's trace words after the restart, for app
	}{
		{name: "postStart fails after the restart", hook: HookPostStart, restartAt: 2 * time.Second, wantRunning: true},
		{name: "preStop ends after the restart", hook: HookPreStop, restartAt: 12 * time.Second, wantRunning: true},
		{name: "preStop ended before the restart", hook: HookPreStop, restartAt: 15*time.Second + 500*time.Millisecond, wantEvents: []string{"exited"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Latencies{ContainerStop: time.Second})
			pod := podtest.New("web")
			grace := int64(30)
			pod.Spec.TerminationGracePeriodSeconds = &grace
			c := &pod.Spec.Containers[0]
			if tt.hook == HookPostStart {
				c.Lifecycle = &v1.Lifecycle{PostStart: exec}
			} else {
				c.Lifecycle = &v1.Lifecycle{PreStop: exec}
			}
			if err := e.rt.SetHook("default/web", "app", tt.hook, HookBehavior{Fail: tt.hook == HookPostStart, Duration: &five}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.sync(pod); tt.hook == HookPreStop && err != nil {
				t.Fatalf("SyncPod() = %v", err)
			}
			if tt.hook == HookPreStop {
				// The container runs from 0; the kill at 10s runs the hook to 15s, then stops it
				// in a second.
				e.clk.Set(at(10 * time.Second))
				e.rt.Advance()
				if _, err := e.rt.KillPod(pod, nil, nil); err != nil {
					t.Fatalf("KillPod() = %v", err)
				}
			}
			e.clk.Set(at(tt.restartAt))
			e.rt.Advance()
			e.rt.AttachKubelet(nil, nil, nil, nil)
			n := len(e.events)
			e.clk.Set(at(60 * time.Second))
			e.rt.Advance()
			var got []string
			for _, ev := range e.events[n:] {
				if ev.Container == "app" {
					got = append(got, string(ev.Event))
				}
			}
			if len(got) != len(tt.wantEvents) {
				t.Errorf("runtime events for app after the restart = %q, want %q", got, tt.wantEvents)
			} else {
				for i := range got {
					if got[i] != tt.wantEvents[i] {
						t.Errorf("runtime events for app after the restart = %q, want %q", got, tt.wantEvents)
						break
					}
				}
			}
			st := e.status(pod)
			if running := st.FindContainerStatusByName("app").State == kubecontainer.ContainerStateRunning; running != tt.wantRunning {
				t.Errorf("container running at 60s = %v, want %v", running, tt.wantRunning)
			}
			// StopPodSandbox comes after the wait for the containers, which the old process did
			// not live to end in any case.
			if st.Sandboxes[0].State != kubecontainer.SandboxReady {
				t.Errorf("sandbox state at 60s = %v, want ready: only the dead process would have stopped it", st.Sandboxes[0].State)
			}
		})
	}
}
