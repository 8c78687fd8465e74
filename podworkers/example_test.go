package podworkers_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// relistedCache is a pod cache whose PLEG relisted at every instant strictly before now.
type relistedCache struct{ clock *vclock.Clock }

func (c relistedCache) GetNewerThan(uid types.UID, minTime time.Time) (*kubecontainer.PodStatus, error, bool) {
	if !c.clock.Now().After(minTime) {
		return nil, nil, false
	}
	return &kubecontainer.PodStatus{UID: uid}, nil, true
}

type discardQueue struct{}

func (discardQueue) Enqueue(types.UID, time.Duration) {}

func Example() {
	clock := vclock.New(vclock.Epoch)
	start := clock.Now()
	at := func() string { return clock.Since(start).String() }
	syncer := podworkers.SyncerFuncs{
		SyncPodFunc: func(_ context.Context, t podworkers.SyncPodType, pod, _ *v1.Pod, _ *kubecontainer.PodStatus) (podworkers.Result, error) {
			fmt.Println(at(), "SyncPod", t, pod.Name)
			// Pulling the image and starting the container takes 3s.
			return podworkers.Result{Done: clock.Now().Add(3 * time.Second)}, nil
		},
		SyncTerminatingPodFunc: func(_ context.Context, pod *v1.Pod, _ *kubecontainer.PodStatus, grace *int64, _ func(*v1.PodStatus)) (podworkers.Result, error) {
			fmt.Println(at(), "SyncTerminatingPod", pod.Name, "grace", *grace)
			return podworkers.Result{Done: clock.Now().Add(time.Duration(*grace) * time.Second)}, nil
		},
		SyncTerminatedPodFunc: func(_ context.Context, pod *v1.Pod, _ *kubecontainer.PodStatus) (podworkers.Result, error) {
			fmt.Println(at(), "SyncTerminatedPod", pod.Name)
			return podworkers.Result{}, nil
		},
	}
	w, err := podworkers.New(podworkers.Options{
		Syncer: syncer,
		Cache:  relistedCache{clock},
		Queue:  discardQueue{},
		Clock:  clock,
		Rand:   rand.New(rand.NewPCG(1, 2)),
		Tracer: trace.Discard,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	grace := int64(5)
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: "uid-1", Name: "web", Namespace: "default"},
		Spec:       v1.PodSpec{TerminationGracePeriodSeconds: &grace},
	}

	w.UpdatePod(podworkers.UpdateOptions{UpdateType: podworkers.SyncPodCreate, Pod: pod})
	w.Step(context.Background())
	clock.Advance(time.Second)
	w.UpdatePod(podworkers.UpdateOptions{UpdateType: podworkers.SyncPodKill, Pod: pod})
	// The kill at 1s cancels the sync context, which v1.35.0's sync functions do not watch: the
	// SyncPod runs to its end at 3s. Each later sync waits for a relist newer than the end of the
	// previous one; this example relists and steps once a second.
	for range 10 {
		w.Step(context.Background())
		clock.Advance(time.Second)
	}
	state, _ := w.State("uid-1")
	fmt.Println(at(), "state", state)
	// Output:
	// 0s SyncPod create web
	// 4s SyncTerminatingPod web grace 5
	// 10s SyncTerminatedPod web
	// 11s state finished
}
