package prober

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestVersion checks that Version moves with every worker started or stopped, which decides
// what housekeeping's CleanupPods does, and stays when AddPod finds its workers there, when a
// clean-up or a stop finds nothing to stop, and when the workers probe.
func TestVersion(t *testing.T) {
	h := newHarness(t, 100*time.Second)
	pod := podWith(v1.Container{Name: "c", LivenessProbe: httpProbe(10, 0, 3, 1), ReadinessProbe: httpProbe(10, 0, 3, 1)})
	h.running(pod, "c1", 0, true)
	ctx := context.Background()
	for _, st := range []struct {
		name string
		do   func()
		want bool
	}{
		{"AddPod starts the workers", func() { h.m.AddPod(ctx, pod) }, true},
		{"AddPod again", func() { h.m.AddPod(ctx, pod) }, false},
		{"the workers probe", func() { h.runUntil(130 * time.Second) }, false},
		{"CleanupPods keeps the pod", func() { h.m.CleanupPods(map[types.UID]bool{pod.UID: true}) }, false},
		{"StopLivenessAndStartup stops liveness", func() { h.m.StopLivenessAndStartup(pod) }, true},
		{"StopLivenessAndStartup again", func() { h.m.StopLivenessAndStartup(pod) }, false},
		{"CleanupPods stops readiness", func() { h.m.CleanupPods(map[types.UID]bool{}) }, true},
		{"CleanupPods with no worker", func() { h.m.CleanupPods(map[types.UID]bool{}) }, false},
	} {
		v := h.m.Version()
		st.do()
		if moved := h.m.Version() != v; moved != st.want {
			t.Errorf("%s: Version moved = %v, want %v", st.name, moved, st.want)
		}
	}
}
