package status

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestVersion checks, one step at a time, that Version moves with every status cached or
// forgotten and every pod that gets resize conditions, which housekeeping reads through
// GetPodPhase and RemoveOrphanedStatuses, and stays for an unchanged status, an orphan clean-up
// that forgets nothing and a resize condition changed in place, so that housekeeping can skip.
func TestVersion(t *testing.T) {
	pod := apiPod("web", "uid-web")
	other := apiPod("db", "uid-db")
	e := newEnv(t, nil, pod, other)
	e.pods.add(pod)
	e.pods.add(other)
	both := map[types.UID]bool{"uid-web": true, "uid-db": true}
	running := runningStatus(pod, e.clock.Now())
	for _, st := range []struct {
		name string
		do   func()
		want bool
	}{
		{"a new status", func() { e.m.SetPodStatus(pod, running) }, true},
		{"the same status", func() { e.m.SetPodStatus(pod, running) }, false},
		{"a new phase", func() {
			s := running.DeepCopy()
			s.Phase = v1.PodSucceeded
			e.m.SetPodStatus(pod, *s)
		}, true},
		{"another pod's status", func() { e.m.SetPodStatus(other, runningStatus(other, e.clock.Now())) }, true},
		{"an orphan clean-up that keeps both", func() { e.m.RemoveOrphanedStatuses(both) }, false},
		{"a pod gets a resize condition", func() { e.m.SetPodResizePendingCondition("uid-db", v1.PodReasonDeferred, "later", 1) }, true},
		{"the condition changes", func() { e.m.SetPodResizePendingCondition("uid-db", v1.PodReasonInfeasible, "never", 2) }, false},
		{"its other condition", func() { e.m.SetPodResizeInProgressCondition("uid-db", "", "", 2) }, false},
		{"an orphan clean-up that forgets one", func() { e.m.RemoveOrphanedStatuses(map[types.UID]bool{"uid-web": true}) }, true},
		{"terminate", func() { e.m.TerminatePod(pod) }, true},
	} {
		v := e.m.Version()
		st.do()
		if moved := e.m.Version() != v; moved != st.want {
			t.Errorf("%s: Version moved = %v, want %v", st.name, moved, st.want)
		}
	}
}
