package housekeeping

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podworkers"
)

// podDirs is the volume manager's pod directories: dirs are the pods' directories there, and a
// cleanup removes those keep does not keep.
type podDirs struct {
	dirs  []types.UID
	calls int
}

func (d *podDirs) CleanupOrphanedPodDirs(keep func(types.UID) bool) {
	d.calls++
	left := d.dirs[:0]
	for _, uid := range d.dirs {
		if keep(uid) {
			left = append(left, uid)
		}
	}
	d.dirs = left
}

// TestCleanupOrphanedPodDirs checks cleanupOrphanedPodDirs' place in the pass: a pod's directory
// is kept while the pod manager has the pod (not its mirror pod's UID) or the runtime runs it,
// and removed at the first pass after neither does, a quiet pass included (a volume's teardown
// moves none of the numbers a quiet pass reads).
func TestCleanupOrphanedPodDirs(t *testing.T) {
	f := newQuietFixture(t)
	dirs := &podDirs{dirs: []types.UID{"1", "mirror", "running", "gone-later"}}
	var err error
	f.c, err = New(Options{Tracer: f.rec, Pods: f.pods, Workers: f.workers, Runtime: f.runtime, Status: f.status,
		CrashLoopBackOff: f.gc, Mirror: f.mirror, Prober: f.prober, Metrics: f.metrics, PodDirs: dirs})
	if err != nil {
		t.Fatal(err)
	}
	f.fixture.pods.mirrors = []*v1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "m", UID: "mirror"}}}
	f.fixture.runtime.running = append(f.fixture.runtime.running, &kubecontainer.Pod{ID: "running", Name: "r", Namespace: "ns"},
		&kubecontainer.Pod{ID: "gone-later", Name: "g", Namespace: "ns"})
	// Their workers terminate them: no orphan to kill, so the next pass is quiet.
	f.fixture.workers.states["running"], f.fixture.workers.states["gone-later"] = podworkers.Terminating, podworkers.Terminating
	f.runtime.state++
	if full, err := f.pass(t); err != nil || !full {
		t.Fatalf("first pass: full = %t, %v", full, err)
	}
	if diff := cmp.Diff([]types.UID{"1", "running", "gone-later"}, dirs.dirs); diff != "" {
		t.Errorf("directories after the first pass (-want +got):\n%s", diff)
	}
	if full, err := f.pass(t); err != nil || full {
		t.Fatalf("second pass: full = %t, %v, want a quiet pass", full, err)
	}
	// The pod's directory appears after a quiet pass (a restarted kubelet's reconstruction).
	dirs.dirs = append(dirs.dirs, "late")
	if full, err := f.pass(t); err != nil || full {
		t.Fatalf("third pass: full = %t, %v, want a quiet pass", full, err)
	}
	if diff := cmp.Diff([]types.UID{"1", "running", "gone-later"}, dirs.dirs); diff != "" {
		t.Errorf("directories after a quiet pass (-want +got):\n%s", diff)
	}
	f.fixture.runtime.running = f.fixture.runtime.running[:2]
	f.runtime.state++
	if _, err := f.pass(t); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]types.UID{"1", "running"}, dirs.dirs); diff != "" {
		t.Errorf("directories after the runtime stopped a pod (-want +got):\n%s", diff)
	}
	if dirs.calls != 4 {
		t.Errorf("cleanups = %d, want one a pass", dirs.calls)
	}
	if n := testing.AllocsPerRun(50, func() { _ = f.c.HandlePodCleanups(context.Background()) }); n != 0 {
		t.Errorf("quiet pass with a pod directory cleanup: %v allocations, want 0", n)
	}
}
