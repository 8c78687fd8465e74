package syncloop_test

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/pleg"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/podmanager"
	"github.com/minikubelet/minikubelet/syncloop"
	"github.com/minikubelet/minikubelet/vclock"
	"github.com/minikubelet/minikubelet/workqueue"
)

// Example drives a standalone sync loop on a virtual clock, as the scenario engine does: hand it
// a config update with Step, then Advance at every NextWake.
func Example() {
	ctx := context.Background()
	clk := vclock.New(vclock.Epoch)
	rt := fakeruntime.New(fakeruntime.Options{Clock: clk, Latencies: fakeruntime.DefaultLatencies})
	cache := pleg.NewCache()
	loop, err := syncloop.New(syncloop.Options{
		NodeName:   "node-1",
		Clock:      clk,
		PodManager: podmanager.New(podmanager.Options{}),
		WorkQueue:  workqueue.New(clk),
		Runtime:    rt,
		PLEG:       pleg.New(pleg.Options{Runtime: rt, Cache: cache, Clock: clk}),
		Cache:      cache,
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-node-1", Namespace: "default", UID: "uid-web",
			Annotations: map[string]string{kubecontainer.ConfigSourceAnnotationKey: podconfig.FileSource}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "nginx:1.27"}}},
	}
	if err := loop.Step(ctx, syncloop.ConfigUpdate{Update: podconfig.Update{Op: podconfig.ADD, Source: podconfig.FileSource, Pods: []*v1.Pod{pod}}}); err != nil {
		fmt.Println(err)
		return
	}
	for clk.Since(vclock.Epoch) < 10*time.Second {
		if err := loop.Advance(ctx); err != nil {
			fmt.Println(err)
		}
		if next := loop.NextWake(); next.After(clk.Now()) {
			clk.Set(next)
		}
	}
	status, _ := loop.StatusManager().GetPodStatus(pod.UID)
	fmt.Println(status.Phase, *status.ContainerStatuses[0].Started)
	// Output: Running true
}
