package status

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

// TestOnChange checks that a cached status that changes, and one forgotten, are reported, and that
// an identical status is not.
func TestOnChange(t *testing.T) {
	pod := apiPod("web", "uid-web")
	other := apiPod("db", "uid-db")
	e := newEnv(t, nil, pod, other)
	e.pods.add(pod)
	e.pods.add(other)
	var got []string
	e.m.OnChange(func(uid types.UID) {
		phase, _ := e.m.GetPodPhase(uid)
		got = append(got, string(uid)+" "+string(phase))
	})
	running := runningStatus(pod, e.clock.Now())
	e.m.SetPodStatus(pod, running)
	e.m.SetPodStatus(pod, running) // unchanged: not cached again
	e.m.SetPodStatus(other, runningStatus(other, e.clock.Now()))
	e.m.TerminatePod(other)
	e.m.RemoveOrphanedStatuses(map[types.UID]bool{"uid-db": true})
	want := []string{"uid-web Running", "uid-db Running", "uid-db Failed", "uid-web "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OnChange calls (-want +got):\n%s", diff)
	}
}
