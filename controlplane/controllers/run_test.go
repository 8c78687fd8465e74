package controllers_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestRunnerBindsThroughClientGo runs the controllers as `minikubelet apiserver` does, with
// client-go informers against the server over HTTP, and waits for the fact that a pod without a
// node was bound and its Scheduled event written.
func TestRunnerBindsThroughClientGo(t *testing.T) {
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: ts.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()

	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "default"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "x", Image: "nginx"}}}}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := client.CoreV1().Events("default").Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("reason", "Scheduled").String()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	r, err := controllers.NewRunner(controllers.RunnerOptions{Names: controllers.Names, Clientset: client, Clock: clock.RealClock{}, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v, want nil", err)
		}
	}()

	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("event watch ended before a Scheduled event")
		}
		e := ev.Object.(*v1.Event)
		if want := "Successfully assigned default/x to node-1"; e.Message != want || e.Source.Component != controllers.SchedulerSource {
			t.Errorf("Scheduled event = %q from %q, want %q from %q", e.Message, e.Source.Component, want, controllers.SchedulerSource)
		}
	case <-ctx.Done():
		t.Fatal("no Scheduled event within 30s")
	}
	got, err := client.CoreV1().Pods("default").Get(ctx, "x", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.NodeName != "node-1" {
		t.Errorf("spec.nodeName = %q, want node-1", got.Spec.NodeName)
	}
}

func TestParseNames(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"", nil, false},
		{"scheduler,nodelifecycle", []string{"nodelifecycle", "scheduler"}, false},
		{"podgc, podgc", []string{"podgc"}, false},
		{"kube-proxy", nil, true},
	}
	for _, tt := range tests {
		got, err := controllers.ParseNames(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseNames(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
		}
		if diff := cmp.Diff(tt.want, got); !tt.wantErr && diff != "" {
			t.Errorf("ParseNames(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}
