package syncloop_test

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/api/apidefaults"
	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/syncloop"
)

// Example drives a standalone kubelet's sync loop on a virtual clock, as the scenario engine
// does: hand it a config update with Step, then Settle at every NextWake.
func Example() {
	ctx := context.Background()
	clk := vclock.New(vclock.Epoch)
	n, err := kubelet.New(kubelet.Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Latencies: fakeruntime.DefaultLatencies})
	if err != nil {
		fmt.Println(err)
		return
	}

	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-node-1", Namespace: "default", UID: "uid-web",
			Annotations: map[string]string{kubecontainer.ConfigSourceAnnotationKey: podconfig.FileSource}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "nginx:1.27"}}},
	}
	apidefaults.SetPodDefaults(pod) // as a pod source defaults it
	if err := n.Loop.Step(ctx, syncloop.ConfigUpdate{Update: podconfig.Update{Op: podconfig.ADD, Source: podconfig.FileSource, Pods: []*v1.Pod{pod}}}); err != nil {
		fmt.Println(err)
		return
	}
	for clk.Since(vclock.Epoch) < 10*time.Second {
		if err := n.Loop.Settle(ctx); err != nil {
			fmt.Println(err)
		}
		next, _ := n.Loop.NextWake()
		clk.Set(next)
	}
	status, _ := n.Status.GetPodStatus(pod.UID)
	fmt.Println(status.Phase, *status.ContainerStatuses[0].Started)
	// Output: Running true
}
