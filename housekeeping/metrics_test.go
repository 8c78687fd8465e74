package housekeeping

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/metrics"
	"github.com/minikubelet/minikubelet/podworkers"
)

type countsRecorder struct{ got []metrics.PodCounts }

func (r *countsRecorder) SetPodCounts(c metrics.PodCounts) { r.got = append(r.got, c) }

// TestPassCounts: desired and active pods split by static, mirror pods, a static pod the workers
// do not know restarted and counted as desired static, an orphaned runtime pod counted as
// terminating runtime_only.
func TestPassCounts(t *testing.T) {
	f := newFixture(t)
	rec := &countsRecorder{}
	f.c.opts.Metrics = rec
	regular := apiPod()
	done := apiPod()
	done.UID, done.Name, done.Status.Phase = "2", "done", v1.PodSucceeded
	static := apiPod()
	static.UID, static.Name = "3", "static"
	static.Annotations = map[string]string{kubecontainer.ConfigSourceAnnotationKey: "file"}
	mirror := apiPod()
	mirror.UID, mirror.Name = "4", "static-mirror"
	f.pods.pods, f.pods.mirrors = []*v1.Pod{regular, done, static}, []*v1.Pod{mirror}
	f.workers.states = map[types.UID]podworkers.State{"1": podworkers.Sync, "2": podworkers.Terminated}
	f.runtime.running = []*kubecontainer.Pod{{ID: "9", Name: "ghost", Namespace: "ns1"}}
	if err := f.c.HandlePodCleanups(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The fake workers report no config pod, so the two known workers count as runtime_only.
	want := []metrics.PodCounts{{
		DesiredRegular: 2, DesiredStatic: 1, ActiveRegular: 1, ActiveStatic: 1, Mirror: 1,
		Restarted: map[types.UID]bool{"3": true},
		Working: map[metrics.WorkingKey]int{
			{Lifecycle: "sync", Config: "runtime_only", Static: "unknown"}:        1,
			{Lifecycle: "terminated", Config: "runtime_only", Static: "unknown"}:  1,
			{Lifecycle: "sync", Config: "desired", Static: "true"}:                1,
			{Lifecycle: "terminating", Config: "runtime_only", Static: "unknown"}: 1,
		},
		OrphanedRuntimePods: 1,
	}}
	if diff := cmp.Diff(want, rec.got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}
