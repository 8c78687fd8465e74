package fakeapiserver_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// Example serves the API with httptest and drives it with a client-go clientset: a pod bound to
// a node is deleted gracefully and removed only when the kubelet confirms.
func Example() {
	clock := vclock.New(vclock.Epoch)
	tracer := trace.Func(func(e trace.Event) { fmt.Println("trace:", e.Event, e.Pod, e.Func) })
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock, Tracer: tracer})
	if err != nil {
		fmt.Println(err)
		return
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	pods := kubernetes.NewForConfigOrDie(&rest.Config{Host: ts.URL}).CoreV1().Pods("default")
	ctx := context.Background()

	pod, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(pod.Name, pod.Status.Phase, pod.ResourceVersion)

	_ = pods.Delete(ctx, "web", metav1.DeleteOptions{})
	pod, _ = pods.Get(ctx, "web", metav1.GetOptions{})
	fmt.Println("deletionGracePeriodSeconds:", *pod.DeletionGracePeriodSeconds)

	_ = pods.Delete(ctx, "web", *metav1.NewDeleteOptions(0))
	_, err = pods.Get(ctx, "web", metav1.GetOptions{})
	fmt.Println(err)
	fmt.Println("resourceVersion:", srv.ResourceVersion())
	// Output:
	// trace: create default/web POST pods
	// web Pending 14
	// trace: deleting default/web DELETE pods
	// deletionGracePeriodSeconds: 30
	// trace: deleting default/web DELETE pods
	// trace: delete default/web DELETE pods
	// pods "web" not found
	// resourceVersion: 17
}

// ExampleServer_Serve runs the server on a loopback port until its context ends.
func ExampleServer_Serve() {
	l, err := fakeapiserver.Listen("")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()

	client := kubernetes.NewForConfigOrDie(&rest.Config{Host: "http://" + l.Addr().String()})
	info, err := client.Discovery().ServerVersion()
	cancel()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(info.GitVersion)
	fmt.Println(<-done)
	// Output:
	// v1.35.0-fakeapiserver
	// <nil>
}
