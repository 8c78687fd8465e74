package volumemanager

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

// lookingStates records the pods a populator pass asks about; the pods in terminating have
// picked up their termination.
type lookingStates struct {
	*world
	asked       []types.UID
	terminating map[types.UID]bool
}

func (s *lookingStates) ShouldPodContainersBeTerminating(uid types.UID) bool {
	s.asked = append(s.asked, uid)
	return s.terminating[uid] || s.world.ShouldPodContainersBeTerminating(uid)
}

// TestPopulateLooksAtWhatChanged is the table of the populator's signals: after a pass, a pass
// that only ReprocessPod asked for looks at the pods asked for alone, and remounts theirs; a
// change of the pods or of what the workers answer (PodsChanged), or a pod asked for that the
// desired state does not have, makes the pass look at every pod.
func TestPopulateLooksAtWhatChanged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(w *world, m *Manager)
		// wantAsked is the pods the pass asks about; wantRemount those whose volumes it marks.
		wantAsked, wantRemount []types.UID
	}{
		{name: "nothing", change: func(*world, *Manager) {}},
		{name: "a pod synced", change: func(_ *world, m *Manager) { m.ReprocessPod("b") },
			wantAsked: []types.UID{"b"}, wantRemount: []types.UID{"b"}},
		{name: "a pod synced twice", change: func(_ *world, m *Manager) { m.ReprocessPod("b"); m.ReprocessPod("b") },
			wantAsked: []types.UID{"b"}, wantRemount: []types.UID{"b"}},
		{name: "a terminating pod synced", change: func(_ *world, m *Manager) {
			m.opts.States.(*lookingStates).terminating["b"] = true
			m.ReprocessPod("b")
		}, wantAsked: []types.UID{"b"}},
		{name: "the pods changed", change: func(w *world, m *Manager) {
			w.pods = append(w.pods, secretPod("d"))
			m.PodsChanged()
		}, wantAsked: []types.UID{"a", "b", "c", "d"}},
		{name: "a pod the desired state does not have synced", change: func(w *world, m *Manager) {
			w.pods = append(w.pods, secretPod("d"))
			m.ReprocessPod("d")
		}, wantAsked: []types.UID{"a", "b", "c", "d"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, m := mountedWorld(t, "a", "b", "c")
			states := &lookingStates{world: w, terminating: map[types.UID]bool{}}
			m.opts.States = states
			tc.change(w, m)
			states.asked = nil
			m.populate(w.clk.Now())
			if diff := cmp.Diff(tc.wantAsked, states.asked); diff != "" {
				t.Errorf("pods the pass asked about (-want +got):\n%s", diff)
			}
			var remount []types.UID
			for _, uid := range m.order {
				for _, v := range m.desired[uid].volumes {
					if v.remount {
						remount = append(remount, uid)
						break
					}
				}
			}
			if diff := cmp.Diff(tc.wantRemount, remount); diff != "" {
				t.Errorf("pods marked for remount (-want +got):\n%s", diff)
			}
			if p, ok := m.desired["d"]; len(tc.wantAsked) == 4 && (!ok || len(p.volumes) != 2) {
				t.Errorf("the new pod's desired volumes = %v, want its two", p)
			}
		})
	}
}
