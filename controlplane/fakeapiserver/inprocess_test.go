package fakeapiserver

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

func TestInProcessNodePodEvents(t *testing.T) {
	ctx := context.Background()
	srv, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	client, err := kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: srv.Transport(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	pod := func(name, node string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
	}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod("before", "n1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods, rv := srv.NodePods("n1")
	if len(pods) != 1 || pods[0].Name != "before" {
		t.Fatalf("NodePods(n1) = %v, want the pod named before", pods)
	}
	for _, p := range []*v1.Pod{pod("mine", "n1"), pod("other", "n2")} {
		if _, err := client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A graceful delete of a bound pod sets deletionTimestamp: the watch sees MODIFIED.
	if err := client.CoreV1().Pods("default").Delete(ctx, "mine", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	evs, next, err := srv.PodEventsSince("n1", rv)
	if err != nil {
		t.Fatalf("PodEventsSince() error = %v", err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, string(e.Type)+" "+e.Pod.Name)
	}
	if diff := cmp.Diff([]string{string(watch.Added) + " mine", string(watch.Modified) + " mine"}, got); diff != "" {
		t.Errorf("PodEventsSince() mismatch (-want +got):\n%s", diff)
	}
	if next != srv.ResourceVersion() {
		t.Errorf("PodEventsSince() next = %d, want the latest version %d", next, srv.ResourceVersion())
	}
	if evs, _, _ := srv.PodEventsSince("n1", next); len(evs) != 0 {
		t.Errorf("PodEventsSince(next) = %v, want nothing new", evs)
	}

	// The routed read gives each wanted node what its own read gives it, from one pass.
	routed := map[string][]string{}
	rnext, err := srv.RoutePodEventsSince(rv, func(node string) bool { return node == "n1" || node == "n2" }, func(node string, e PodEvent) {
		routed[node] = append(routed[node], string(e.Type)+" "+e.Pod.Name)
	})
	if err != nil {
		t.Fatalf("RoutePodEventsSince() error = %v", err)
	}
	want := map[string][]string{"n1": got, "n2": {string(watch.Added) + " other"}}
	if diff := cmp.Diff(want, routed); diff != "" {
		t.Errorf("RoutePodEventsSince() mismatch (-want +got):\n%s", diff)
	}
	if rnext != next {
		t.Errorf("RoutePodEventsSince() next = %d, want %d", rnext, next)
	}
	if srv.PodHistoryExpired(rv) {
		t.Errorf("PodHistoryExpired(%d) = true for a version the history holds", rv)
	}
}
