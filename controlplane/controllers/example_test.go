package controllers_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// Example drives the controllers' cores as replay does: on a virtual clock, against an API server
// answered in-process, one Sync per core in order.
func Example() {
	ctx := context.Background()
	clk := vclock.New(vclock.Epoch)
	srv, _ := fakeapiserver.New(fakeapiserver.Options{Clock: clk, Tracer: trace.Discard})
	client, _ := kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: srv.Transport(), QPS: -1})

	_, _ = client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}, metav1.CreateOptions{})
	_, _ = client.CoreV1().Pods("default").Create(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "nginx", Image: "nginx"}}}}, metav1.CreateOptions{})

	cores, err := controllers.New(controllers.Options{Names: []string{controllers.Scheduler}, Clock: clk,
		Client: controllers.Client{Clientset: client}, Tracer: trace.Discard})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range cores {
		_ = c.Sync(ctx)
	}
	pod, _ := client.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
	fmt.Println(pod.Spec.NodeName, pod.Status.Conditions[0].Type, pod.Status.Conditions[0].Status)
	// Output: node-1 PodScheduled True
}
