package kubelet_test

import (
	"context"
	"fmt"

	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/kubelet/config"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/sim/world"
)

// ExampleNew builds a standalone kubelet over a static pod directory in memory and steps it on a
// virtual clock, as replay does, until its static pod runs.
func ExampleNew() {
	clk := vclock.New(vclock.Epoch)
	files := world.NewStaticPods("/etc/kubernetes/manifests")
	files.Write("web.yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: app, image: nginx:1.27}]}\n"))
	cfg := config.Default()
	cfg.Sources.StaticPodPath = files.Dir()
	k, err := kubelet.New(kubelet.Options{NodeName: "node-1", Config: cfg, Clock: clk, Tracer: trace.Discard,
		World: kubelet.World{StaticPods: files}})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for range 10 {
		for k.Settle(ctx) {
		}
		next, _ := k.NextWake()
		clk.Set(next)
	}
	for _, pod := range k.Pods.GetPods() {
		status, _ := k.Status.GetPodStatus(pod.UID)
		fmt.Println(pod.Name, status.Phase)
	}
	// Output:
	// web-node-1 Running
}
