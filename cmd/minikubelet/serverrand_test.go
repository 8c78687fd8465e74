package main

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestRestartedServerDrawsNewUIDs reproduces a restart of the standalone API server: the first pod
// created after the restart must not get the UID the first pod got before it.
func TestRestartedServerDrawsNewUIDs(t *testing.T) {
	firstUID := func() string {
		srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: trace.Discard, Rand: serverRand()})
		if err != nil {
			t.Fatal(err)
		}
		client, err := kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: srv.Transport(), QPS: -1})
		if err != nil {
			t.Fatal(err)
		}
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "nginx:1.27"}}}}
		created, err := client.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create pod: %v", err)
		}
		return string(created.UID)
	}
	if a, b := firstUID(), firstUID(); a == b {
		t.Errorf("first UID after a restart = %s, the same as before it", b)
	}
}
