package kubelet

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/syncloop"
)

// TestIdleNodeAllocatesNothing checks that a node whose pods all run, with no resync due, does its
// periodic work without allocating: the sync tick with no pod due, housekeeping with nothing to
// clean, the PLEG relist with no change, the pod workers with nothing to do. Every second of
// every node of a fleet is mostly that. The pods' resync is pushed past the test (an hour): a
// resync is work, not idleness.
func TestIdleNodeAllocatesNothing(t *testing.T) {
	e := newEnv(t, envOptions{standalone: true, discard: true, syncFrequency: time.Hour})
	pods := make([]*v1.Pod, 50)
	for i := range pods {
		pods[i] = staticPod(fmt.Sprintf("p%02d", i), types.UID(fmt.Sprintf("uid-%02d", i)), v1.RestartPolicyAlways)
	}
	e.setFile(pods...)
	running := func() bool {
		for _, p := range pods {
			if e.phase(p.UID) != v1.PodRunning {
				return false
			}
		}
		return true
	}
	if !e.run(time.Minute, running) {
		t.Fatalf("pods not Running after a minute")
	}
	e.runFor(10 * time.Second) // past the first housekeeping passes and status writes

	for _, tc := range []struct {
		name string
		step func()
	}{
		{"sync tick with no pod due", func() { stepInput(t, e, syncloop.SyncTick{}) }},
		{"housekeeping with nothing to clean", func() { stepInput(t, e, syncloop.HousekeepingTick{}) }},
	} {
		if n := testing.AllocsPerRun(60, tc.step); n != 0 {
			t.Errorf("%s: %v allocations, want 0", tc.name, n)
		}
	}
	// A minute of wake-ups, counted in all rather than on average (AllocsPerRun rounds down,
	// and housekeeping runs every other second).
	wake := func() {
		next, _ := e.k.Loop.NextWake()
		e.clk.Set(next)
		if err := e.k.Loop.Settle(e.ctx); err != nil {
			t.Fatalf("Settle() = %v", err)
		}
	}
	// A first minute grows every core's buffers to their steady size (the volume manager's
	// first passes among them); the minute after it is the one measured.
	for end := e.clk.Now().Add(time.Minute); e.clk.Now().Before(end); {
		wake()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for end := e.clk.Now().Add(time.Minute); e.clk.Now().Before(end); {
		wake()
	}
	runtime.ReadMemStats(&after)
	if n := after.Mallocs - before.Mallocs; n != 0 {
		t.Errorf("a minute of an idle node's wake-ups: %d allocations, want 0", n)
	}
	if !running() {
		t.Error("pods not Running at the end")
	}
}

func stepInput(t *testing.T, e *env, in syncloop.Input) {
	if err := e.k.Loop.Step(e.ctx, in); err != nil {
		t.Fatalf("Step(%T) = %v", in, err)
	}
}
