package node

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minikubelet/minikubelet/fakeapiserver"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/syncloop"
	"github.com/minikubelet/minikubelet/trace"
	"github.com/minikubelet/minikubelet/vclock"
)

func staticPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-node-1", Namespace: "default", UID: "u1",
			Annotations: map[string]string{kubecontainer.ConfigSourceAnnotationKey: "file", kubecontainer.ConfigHashAnnotationKey: "u1"}},
		Spec: v1.PodSpec{NodeName: "node-1", RestartPolicy: v1.RestartPolicyAlways,
			Containers: []v1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
	}
}

// drive advances the node from wake-up to wake-up until done holds or limit passes.
func drive(t *testing.T, n *Node, clk *vclock.Clock, limit time.Duration, done func() bool) bool {
	t.Helper()
	ctx := context.Background()
	end := clk.Now().Add(limit)
	for clk.Now().Before(end) {
		_ = n.Loop.Advance(ctx)
		if done() {
			return true
		}
		if next := n.Loop.NextWake(); next.After(clk.Now()) {
			clk.Set(next)
		}
	}
	return false
}

func TestNewStandaloneRunsAStaticPod(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	n, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	pod := staticPod()
	if err := n.Loop.Step(context.Background(), syncloop.ConfigUpdate{Update: podconfig.Update{Op: podconfig.ADD, Source: "file", Pods: []*v1.Pod{pod}}}); err != nil {
		t.Fatalf("Step(ADD) error = %v", err)
	}
	running := func() bool {
		s, ok := n.Loop.StatusManager().GetPodStatus(pod.UID)
		return ok && s.Phase == v1.PodRunning
	}
	if !drive(t, n, clk, time.Minute, running) {
		t.Errorf("static pod not Running within a minute of virtual time")
	}
	if _, ok := n.Pods.GetPodByUID(pod.UID); !ok {
		t.Errorf("pod manager does not hold the static pod")
	}
}

func TestNewWithClientCreatesTheMirrorPod(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	srv := fakeapiserver.New(fakeapiserver.Options{Clock: clk, Tracer: trace.Discard})
	client, err := kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: srv.Transport(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	if err := n.Loop.Step(context.Background(), syncloop.ConfigUpdate{Update: podconfig.Update{Op: podconfig.ADD, Source: "file", Pods: []*v1.Pod{staticPod()}}}); err != nil {
		t.Fatalf("Step(ADD) error = %v", err)
	}
	mirrored := func() bool {
		p, err := client.CoreV1().Pods("default").Get(context.Background(), "web-node-1", metav1.GetOptions{})
		return err == nil && kubecontainer.IsMirrorPod(p)
	}
	if !drive(t, n, clk, time.Minute, mirrored) {
		t.Errorf("no mirror pod in the API server within a minute of virtual time")
	}
}

func TestNewNeedsAClock(t *testing.T) {
	if _, err := New(Options{NodeName: "node-1"}); err == nil {
		t.Error("New() without a clock succeeded, want an error")
	}
}
