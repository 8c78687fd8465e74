package volumemanager

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
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

// podEvents records the FailedMount events by pod.
type podEvents struct{ got []string }

func (r *podEvents) Event(obj runtime.Object, _, reason, message string) {
	r.got = append(r.got, obj.(*v1.Pod).Name+" "+reason+" "+message)
}

// TestReconcileLooksAtTheProcessedPods checks that a pass whose populator only looked at the pods
// ReprocessPod asked for remounts those pods' volumes alone, in the order the pods were added (not
// the order they were asked for), as a walk of every pod would; and that once a remount failed,
// the next passes walk every pod, for the back-offs.
func TestReconcileLooksAtTheProcessedPods(t *testing.T) {
	for _, walkAll := range []bool{false, true} {
		t.Run(fmt.Sprintf("walkAll=%v", walkAll), func(t *testing.T) {
			w, m := mountedWorld(t, "a", "b", "c")
			rec := &podEvents{}
			m.opts.Recorder = rec
			delete(w.secrets, "ns/db") // every remount of creds fails, with an event naming the pod
			m.ReprocessPod("c")
			m.ReprocessPod("a")
			at, _ := m.NextWake()
			w.clk.Set(at)
			m.walkAll = walkAll // a full walk, as before the processed pods were kept
			m.Advance()
			msg := `FailedMount MountVolume.SetUp failed for volume "creds" : secret "db" not found`
			want := []string{"p-a " + msg, "p-c " + msg}
			if diff := cmp.Diff(want, rec.got); diff != "" {
				t.Errorf("events of the pass (-want +got):\n%s", diff)
			}
			if m.failing != 2 || m.walkAll || len(m.processed) != 0 {
				t.Errorf("after the pass: failing %d, walkAll %v, processed %d; want 2, false, 0", m.failing, m.walkAll, len(m.processed))
			}
			// The back-offs run out together: the next pass retries both, found by the walk.
			rec.got = nil
			at, _ = m.NextWake()
			w.clk.Set(at)
			m.Advance()
			if diff := cmp.Diff(want, rec.got); diff != "" {
				t.Errorf("events of the retry (-want +got):\n%s", diff)
			}
		})
	}
}
