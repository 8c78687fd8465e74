package kubelet

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
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
// resync is work, not idleness. A node with no pod, idle from its start, is checked too: nothing
// of its start has driven the periodic work's code before it goes idle.
func TestIdleNodeAllocatesNothing(t *testing.T) {
	for _, pods := range []int{50, 0} {
		t.Run(fmt.Sprintf("%d pods", pods), func(t *testing.T) { idleNode(t, pods) })
	}
}

func idleNode(t *testing.T, npods int) {
	e := newEnv(t, envOptions{standalone: true, discard: true, syncFrequency: time.Hour})
	pods := make([]*v1.Pod, npods)
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
	if npods > 0 {
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
	}
	// A first minute is not measured: it grows every core's buffers to their steady size (the
	// volume manager's first passes among them) and creates the metric series at their first
	// use, as the kubelet's vectors do (housekeeping's pod counts, the relist's runtime
	// operations), a few hundred allocations once in a node's life.
	for end := e.clk.Now().Add(time.Minute); e.clk.Now().Before(end); {
		wakeOnce(t, e)
	}
	// Then half an hour of wake-ups, counted in all rather than on average (AllocsPerRun rounds
	// down, and housekeeping runs every other second). Half an hour, not a minute: an
	// allocation that comes at a random call of the periodic work, not at every one, slips
	// through a minute. The Go runtime fills a call site's type assertion cache at a random one
	// of its calls, about one in a thousand: on the relist's and housekeeping's metric lookups
	// that came some 17 minutes into an empty node's life, which a warm-up of a minute does not
	// reach (metrics.children now keeps the children those lookups found).
	if stacks := allocsOf(idleWindow, func() { idleWindow(t, e, 30*time.Minute) }); len(stacks) > 0 {
		t.Errorf("half an hour of an idle node's wake-ups allocated, want nothing:\n%s", strings.Join(stacks, "\n"))
	}
	if !running() {
		t.Error("pods not Running at the end")
	}
}

// wakeOnce advances the clock to the kubelet's next wake-up and settles it.
func wakeOnce(t *testing.T, e *env) {
	next, _ := e.k.Loop.NextWake()
	e.clk.Set(next)
	if err := e.k.Loop.Settle(e.ctx); err != nil {
		t.Fatalf("Settle() = %v", err)
	}
}

// idleWindow is the measured window, a function of its own so that the memory profiler's
// stacks name it.
//
//go:noinline
func idleWindow(t *testing.T, e *env, d time.Duration) {
	for end := e.clk.Now().Add(d); e.clk.Now().Before(end); {
		wakeOnce(t, e)
	}
}

// allocsOf runs f with every allocation profiled and returns the stacks through fn that
// allocated meanwhile, one line each. The process-wide allocation count would also count the
// runtime's own goroutines (a collection's mark workers, the scavenger's timers), which allocate
// at their own moments; the profiler says who allocated.
func allocsOf(fn any, f func()) []string {
	name := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	before := profiledThrough(name)
	rate := runtime.MemProfileRate
	runtime.MemProfileRate = 1 // at 1 every allocation is profiled, whatever was sampled before
	f()
	runtime.MemProfileRate = rate
	var out []string
	for stack, n := range profiledThrough(name) {
		if n > before[stack] {
			out = append(out, fmt.Sprintf("%d objects: %s", n-before[stack], stack))
		}
	}
	slices.Sort(out)
	return out
}

// profiledThrough returns the objects the memory profile counts, by stack, of the stacks
// through the function name.
func profiledThrough(name string) map[string]int64 {
	// The profile is published by the collections after the allocations.
	runtime.GC()
	runtime.GC()
	var records []runtime.MemProfileRecord
	n, ok := runtime.MemProfile(nil, true)
	for !ok {
		records = make([]runtime.MemProfileRecord, n+50)
		n, ok = runtime.MemProfile(records, true)
	}
	out := map[string]int64{}
	for _, r := range records[:n] {
		var funcs []string
		through := false
		frames := runtime.CallersFrames(r.Stack())
		for {
			fr, more := frames.Next()
			funcs = append(funcs, fr.Function)
			through = through || fr.Function == name
			if !more {
				break
			}
		}
		if through {
			out[strings.Join(funcs, " < ")] += r.AllocObjects
		}
	}
	return out
}

func stepInput(t *testing.T, e *env, in syncloop.Input) {
	if err := e.k.Loop.Step(e.ctx, in); err != nil {
		t.Fatalf("Step(%T) = %v", in, err)
	}
}
