package podmanager

import (
	"testing"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestVersion checks that Version moves with every pod and mirror pod stored, replaced or
// removed, which is all housekeeping reads of the pod manager, and stays while it is only read.
func TestVersion(t *testing.T) {
	m := newManager(t, trace.Discard)
	mirror, static, normal := fixtures()
	for _, st := range []struct {
		name string
		do   func()
		want bool
	}{
		{"add a pod", func() { m.AddPod(normal) }, true},
		{"replace it", func() { m.UpdatePod(normal) }, true},
		{"add a static pod", func() { m.AddPod(static) }, true},
		{"add its mirror pod", func() { m.AddPod(mirror) }, true},
		{"read", func() { m.GetPodsAndMirrorPods(); m.GetPodAndMirrorPod(static); m.TranslatePodUID(mirror.UID) }, false},
		{"remove the mirror pod", func() { m.RemovePod(mirror) }, true},
		{"remove the pod", func() { m.RemovePod(normal) }, true},
		{"set the pods", func() { m.SetPods(nil) }, true},
	} {
		v := m.Version()
		st.do()
		if moved := m.Version() != v; moved != st.want {
			t.Errorf("%s: Version moved = %v, want %v", st.name, moved, st.want)
		}
	}
}
