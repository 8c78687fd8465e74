package podworkers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// BenchmarkStepManyPods takes n pods through their whole lifecycle (create, run, kill, terminate,
// finish) with a trivial Syncer whose work lasts between 0.1s and 0.7s, stepping at every
// NextWake and at a PLEG relist once a second. Its cost per pod must not grow with n.
func BenchmarkStepManyPods(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			pods := make([]*v1.Pod, n)
			grace := int64(2)
			for i := range pods {
				pods[i] = &v1.Pod{
					ObjectMeta: metav1.ObjectMeta{UID: types.UID(fmt.Sprintf("uid-%05d", i)), Name: fmt.Sprintf("p%05d", i), Namespace: "default"},
					Spec:       v1.PodSpec{TerminationGracePeriodSeconds: &grace},
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				runLifecycle(b, pods)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/pod")
		})
	}
}

// runLifecycle creates every pod, lets them run, kills them all and runs until every worker has
// finished.
func runLifecycle(b *testing.B, pods []*v1.Pod) {
	clock := vclock.New(vclock.Epoch)
	calls := 0
	work := func(uid types.UID) podworkers.Result {
		calls++
		d := time.Duration(1+len(uid)%7+calls%7) * 100 * time.Millisecond
		return podworkers.Result{Done: clock.Now().Add(d)}
	}
	syncer := podworkers.SyncerFuncs{
		SyncPodFunc: func(_ context.Context, _ podworkers.SyncPodType, pod, _ *v1.Pod, _ *kubecontainer.PodStatus) (podworkers.Result, error) {
			return work(pod.UID), nil
		},
		SyncTerminatingPodFunc: func(_ context.Context, pod *v1.Pod, _ *kubecontainer.PodStatus, _ *int64, _ func(*v1.PodStatus)) (podworkers.Result, error) {
			return work(pod.UID), nil
		},
		SyncTerminatedPodFunc: func(_ context.Context, pod *v1.Pod, _ *kubecontainer.PodStatus) (podworkers.Result, error) {
			return work(pod.UID), nil
		},
	}
	w, err := podworkers.New(podworkers.Options{Syncer: syncer, Cache: relistedCache{clock}, Queue: discardQueue{}, Clock: clock, Tracer: trace.Discard})
	if err != nil {
		b.Fatalf("New() = %v", err)
	}
	ctx := context.Background()
	run := func() {
		// Step at every wake-up and at a relist once a second, until nothing is left to do
		// before the next relist.
		relist := clock.Now()
		for idle := 0; idle < 2; {
			w.Step(ctx)
			next, ok := w.NextWake()
			if !ok || next.After(relist) {
				next, relist = relist, relist.Add(time.Second)
				idle++
			} else {
				idle = 0
			}
			if next.After(clock.Now()) {
				clock.Set(next)
			}
		}
	}
	for _, pod := range pods {
		w.UpdatePod(podworkers.UpdateOptions{UpdateType: podworkers.SyncPodCreate, Pod: pod})
	}
	run()
	for _, pod := range pods {
		w.UpdatePod(podworkers.UpdateOptions{UpdateType: podworkers.SyncPodKill, Pod: pod})
	}
	run()
	for _, pod := range pods {
		if s, _ := w.State(pod.UID); s != podworkers.Finished {
			b.Fatalf("State(%s) = %v after the run, want finished", pod.UID, s)
		}
	}
	if want := 3 * len(pods); calls < want {
		b.Fatalf("%d sync calls, want at least %d", calls, want)
	}
}
