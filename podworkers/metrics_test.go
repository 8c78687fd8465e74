package podworkers_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

type observation struct {
	Op string
	D  time.Duration
}

type recordingMetrics struct{ obs []observation }

func (m *recordingMetrics) ObservePodWorker(op string, d time.Duration) {
	m.obs = append(m.obs, observation{op, d})
}

// TestWorkerDurationMetric: every iteration is observed once it ends, labelled by its update
// type or "terminated", with its duration on the workers' clock from the moment the worker took
// the update: a 3s SyncPod, a 2s kill, and a SyncTerminatedPod that waited 1s for a newer cache.
func TestWorkerDurationMetric(t *testing.T) {
	clock := vclock.New(vclock.Epoch)
	rec := &recordingMetrics{}
	syncer := podworkers.SyncerFuncs{
		SyncPodFunc: func(context.Context, podworkers.SyncPodType, *v1.Pod, *v1.Pod, *kubecontainer.PodStatus) (podworkers.Result, error) {
			return podworkers.Result{Done: clock.Now().Add(3 * time.Second)}, nil
		},
		SyncTerminatingPodFunc: func(context.Context, *v1.Pod, *kubecontainer.PodStatus, *int64, func(*v1.PodStatus)) (podworkers.Result, error) {
			return podworkers.Result{Done: clock.Now().Add(2 * time.Second)}, nil
		},
		SyncTerminatedPodFunc: func(context.Context, *v1.Pod, *kubecontainer.PodStatus) (podworkers.Result, error) {
			return podworkers.Result{}, nil
		},
	}
	w, err := podworkers.New(podworkers.Options{
		Syncer: syncer, Cache: relistedCache{clock}, Queue: discardQueue{}, Clock: clock,
		Rand: rand.New(rand.NewPCG(1, 2)), Tracer: trace.Discard, Metrics: rec,
	})
	if err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "uid-1", Name: "web", Namespace: "default"}}
	w.UpdatePod(podworkers.UpdateOptions{UpdateType: podworkers.SyncPodCreate, Pod: pod})
	w.Step(context.Background())
	clock.Advance(4 * time.Second)
	w.Step(context.Background())
	w.UpdatePod(podworkers.UpdateOptions{UpdateType: podworkers.SyncPodKill, Pod: pod})
	for range 6 {
		clock.Advance(time.Second)
		w.Step(context.Background())
	}
	want := []observation{{"create", 3 * time.Second}, {"kill", 2 * time.Second}, {"terminated", time.Second}}
	if diff := cmp.Diff(want, rec.obs); diff != "" {
		t.Errorf("observations (-want +got):\n%s", diff)
	}
}
