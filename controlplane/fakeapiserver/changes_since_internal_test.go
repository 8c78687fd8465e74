package fakeapiserver

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

func newChangesClient(t *testing.T, historySize int) (*Server, kubernetes.Interface) {
	t.Helper()
	srv, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard, HistorySize: historySize})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	c, err := kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: srv.Transport(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// PodChangesSince and NodeChangesSince hand every change of their kind after rv, oldest first,
// each at its own resource version, with a deletion carrying the object's last state, and return
// the newest resource version they handed.
func TestChangesSinceOrder(t *testing.T) {
	ctx := context.Background()
	srv, c := newChangesClient(t, 0)
	pods, nodes := c.CoreV1().Pods("default"), c.CoreV1().Nodes()
	start := srv.ResourceVersion()
	pod := func(name, node string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
	}
	if _, err := pods.Create(ctx, pod("a", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := nodes.Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := pods.Create(ctx, pod("b", "n1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := pods.Bind(ctx, &v1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default"},
		Target: v1.ObjectReference{Kind: "Node", Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b.Labels = map[string]string{"last": "state"}
	if _, err := pods.Update(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n1, err := nodes.Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n1.Labels = map[string]string{"last": "state"}
	if _, err := nodes.Update(ctx, n1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	if err := pods.Delete(ctx, "b", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if err := nodes.Delete(ctx, "n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	describe := func(typ watch.EventType, meta metav1.Object, node string) string {
		s := fmt.Sprintf("%s %s node=%q last=%q", typ, meta.GetName(), node, meta.GetLabels()["last"])
		if meta.GetDeletionTimestamp() != nil {
			s += " deleting"
		}
		return s
	}
	var got []string
	var last uint64
	rvs := []uint64{}
	next, err := srv.PodChangesSince(start, func(ev PodEvent) {
		got = append(got, describe(ev.Type, ev.Pod, ev.Pod.Spec.NodeName))
		rvs = append(rvs, ev.ResourceVersion)
		last = ev.ResourceVersion
	})
	if err != nil {
		t.Fatalf("PodChangesSince(%d) = %v", start, err)
	}
	want := []string{
		`ADDED a node="" last=""`,
		`ADDED b node="n1" last=""`,
		`MODIFIED a node="n1" last=""`,
		`MODIFIED b node="n1" last="state"`,
		// A bound pod's deletion, even with no grace, is first its deletionTimestamp.
		`MODIFIED b node="n1" last="state" deleting`,
		`DELETED b node="n1" last="state" deleting`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PodChangesSince(%d) (-want +got):\n%s", start, diff)
	}
	for i := 1; i < len(rvs); i++ {
		if rvs[i] <= rvs[i-1] {
			t.Errorf("resource versions %v are not increasing", rvs)
		}
	}
	if next != last {
		t.Errorf("PodChangesSince(%d) returned %d, want the last change's %d", start, next, last)
	}
	// Resumed from the returned version, nothing is handed again.
	if _, err := srv.PodChangesSince(next, func(ev PodEvent) { t.Errorf("change handed again: %s %s", ev.Type, ev.Pod.Name) }); err != nil {
		t.Errorf("PodChangesSince(%d) = %v", next, err)
	}

	got = nil
	if _, err := srv.NodeChangesSince(start, func(typ watch.EventType, node *v1.Node, _ uint64) {
		got = append(got, describe(typ, node, ""))
	}); err != nil {
		t.Fatalf("NodeChangesSince(%d) = %v", start, err)
	}
	want = []string{`ADDED n1 node="" last=""`, `MODIFIED n1 node="" last="state"`, `DELETED n1 node="" last="state"`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NodeChangesSince(%d) (-want +got):\n%s", start, diff)
	}
}

// A version older than the kept history is the watch's 410 Gone, and nothing is handed.
func TestChangesSinceCompacted(t *testing.T) {
	ctx := context.Background()
	srv, c := newChangesClient(t, 2)
	start := srv.ResourceVersion()
	for i := range 4 {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "default"},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
		if _, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	gone := func(what string, rv uint64, err error) {
		t.Helper()
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			t.Errorf("%s(%d) = %v, want 410 Gone", what, start, err)
		}
		if rv != start {
			t.Errorf("%s(%d) returned %d, want the version asked for", what, start, rv)
		}
	}
	rv, err := srv.PodChangesSince(start, func(ev PodEvent) { t.Errorf("pod change handed from a compacted history: %s", ev.Pod.Name) })
	gone("PodChangesSince", rv, err)
	rv, err = srv.NodeChangesSince(start, func(_ watch.EventType, n *v1.Node, _ uint64) {
		t.Errorf("node change handed from a compacted history: %s", n.Name)
	})
	gone("NodeChangesSince", rv, err)
	if code := apierrors.ReasonForError(err); code != metav1.StatusReasonExpired && code != metav1.StatusReasonGone {
		t.Errorf("reason = %q, want Expired or Gone", code)
	}
}
