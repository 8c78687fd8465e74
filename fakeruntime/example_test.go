package fakeruntime_test

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

func ExampleRuntime_SyncPod() {
	clk := vclock.New(vclock.Epoch)
	rt, err := fakeruntime.New(fakeruntime.Options{
		Clock:     clk,
		Latencies: fakeruntime.DefaultLatencies,
		Tracer: trace.Func(func(e trace.Event) {
			fmt.Println(strings.TrimSpace(fmt.Sprint(clk.Since(vclock.Epoch), " ", e.Event, " ", e.Container)))
		}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	crashLoop, err := kubecontainer.NewBackoff(clk, kubecontainer.InitialBackoff, kubecontainer.MaxContainerBackoff)
	if err != nil {
		fmt.Println(err)
		return
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1",
			Annotations: map[string]string{fakeruntime.AnnotationExitAfter + "nginx": "10s"}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
	}
	res, _ := rt.SyncPod(pod, nil, crashLoop)
	fmt.Println("done after", res.Done.Sub(vclock.Epoch))
	for {
		next, ok := rt.NextWake()
		if !ok {
			break
		}
		clk.Set(next)
		rt.Advance()
	}
	// Output:
	// 0s sync
	// done after 3s
	// 500ms sandbox
	// 500ms pull nginx
	// 2.5s pulled nginx
	// 2.5s created nginx
	// 3s started nginx
	// 13s exited nginx
}
