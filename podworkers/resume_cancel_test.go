package podworkers

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestKillBetweenResumeAndStep: the mirror calls returned and Resume ran (in run, a call into the
// loop), then a kill arrives before the loop's next pass steps the workers. In v1.35 the worker's
// context is cancelled, so the volume wait that follows the mirror calls ends at once; here the
// cancel must reach the sync's next look (canceled=true).
func TestKillBetweenResumeAndStep(t *testing.T) {
	h := newHarness(t)
	var log waitLog
	returned := false
	h.syncer.result = func(fn string, uid types.UID) (Result, error) {
		if fn == "SyncPod" && len(h.syncer.processed[uid]) == 1 {
			return blockedSync(h, &returned, &log), nil
		}
		return Result{}, nil
	}
	pod := newNamedPod("1", "ns", "web", false)
	h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod})
	h.w.Step(context.Background())
	returned = true
	h.w.Resume("1")
	h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodKill, Pod: pod, KillPodOptions: &KillPodOptions{PodStatusFunc: func(*v1.PodStatus) {}}})
	h.w.Step(context.Background())
	if diff := cmp.Diff(waitLog{"look at 0s canceled=true returned=true"}, log); diff != "" {
		t.Errorf("looks (-want +got):\n%s", diff)
	}
}
