package world

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/sources"
)

// TestRoutedWatchMatchesOwnWatch checks that a node's watch fed by the fleet's shared router
// hands its api source exactly what a watch reading the server's history on its own does: the
// same updates, in the same order, through creates on both nodes, a status write, a delete, a
// pod with no node, and an outage of one node's link.
func TestRoutedWatchMatchesOwnWatch(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	nop := trace.Func(func(trace.Event) {})
	c, err := NewCluster(clk, nop, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pods := c.Client().CoreV1().Pods("default")
	create := func(name, node string) { t.Helper(); createPod(t, pods, name, node) }
	type watchPair struct {
		own, routed       *APIWatch
		ownSrc, routedSrc *sources.API
		own2, routed2     []podconfig.Update
	}
	newSrc := func() *sources.API {
		s, err := sources.NewAPI(sources.APIOptions{Tracer: nop})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	links := map[string]*Link{"node-a": NewLink(c.Server().Transport(), clk), "node-b": nil}
	nodes := map[string]*watchPair{}
	for _, name := range []string{"node-a", "node-b"} {
		w := &watchPair{ownSrc: newSrc(), routedSrc: newSrc()}
		w.own = NewAPIWatch(c.Server(), name, links[name])
		w.routed = c.APIWatch(name, links[name])
		w.own2 = append(w.own2, w.own.List(w.ownSrc)...)
		w.routed2 = append(w.routed2, w.routed.List(w.routedSrc)...)
		nodes[name] = w
	}
	pump := func() {
		for _, name := range []string{"node-a", "node-b"} {
			w := nodes[name]
			wantPending := w.own.Pending()
			if got := w.routed.Pending(); got != wantPending && got {
				t.Errorf("%s: routed Pending() = true with nothing for the node", name)
			}
			w.own2 = append(w.own2, w.own.Pump(w.ownSrc)...)
			w.routed2 = append(w.routed2, w.routed.Pump(w.routedSrc)...)
			if w.routed.Pending() {
				t.Errorf("%s: routed Pending() = true after a Pump", name)
			}
		}
	}
	create("a1", "node-a")
	create("b1", "node-b")
	create("unbound", "")
	pump()
	p, err := pods.Get(ctx, "a1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = v1.PodRunning
	if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	links["node-a"].CutUntil(clk.Now().Add(time.Minute))
	create("a2", "node-a")
	pump() // node-a's watch is broken: nothing yet
	if err := pods.Delete(ctx, "b1", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	create("b2", "node-b")
	clk.Set(clk.Now().Add(time.Minute))
	pump() // node-a resumes from where it was
	for name, w := range nodes {
		if diff := cmp.Diff(summarize(w.own2), summarize(w.routed2)); diff != "" {
			t.Errorf("%s: routed watch's updates differ from its own watch's (-own +routed):\n%s", name, diff)
		}
		if len(w.routed2) < 2 {
			t.Errorf("%s: routed watch delivered %d updates, want the list and its changes", name, len(w.routed2))
		}
	}
}

// summarize is what an update says: its op and each pod's name, phase and deletion.
func summarize(us []podconfig.Update) [][]string {
	var out [][]string
	for _, u := range us {
		row := []string{fmt.Sprint(u.Op)}
		for _, p := range u.Pods {
			row = append(row, p.Name+"/"+string(p.Status.Phase)+"/"+p.ResourceVersion)
		}
		out = append(out, row)
	}
	return out
}

// TestRouterReachedNamesEachNodeOnce checks that the shared watch tells its driver which nodes
// it queued a pod change for: each once while its queue is not drained, none for a pod bound to a
// node without a watch, and the node again once its watch drained the queue and a change came.
func TestRouterReachedNamesEachNodeOnce(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	nop := trace.Func(func(trace.Event) {})
	c, err := NewCluster(clk, nop, 1)
	if err != nil {
		t.Fatal(err)
	}
	pods := c.Client().CoreV1().Pods("default")
	create := func(name, node string) { t.Helper(); createPod(t, pods, name, node) }
	if got := c.Reached(); got != nil {
		t.Fatalf("Reached() before any watch = %v, want nil", got)
	}
	src, err := sources.NewAPI(sources.APIOptions{Tracer: nop})
	if err != nil {
		t.Fatal(err)
	}
	watches := map[string]*APIWatch{}
	for _, name := range []string{"node-a", "node-b"} {
		watches[name] = c.APIWatch(name, nil)
		watches[name].List(src)
	}
	reached := func() []string { return append([]string(nil), c.Reached()...) }

	create("a1", "node-b")
	create("a2", "node-a")
	create("a3", "node-b")
	create("a4", "node-c") // no watch
	if diff := cmp.Diff([]string{"node-b", "node-a"}, reached()); diff != "" {
		t.Errorf("Reached() after creates (-want +got):\n%s", diff)
	}
	if got := reached(); len(got) != 0 {
		t.Errorf("Reached() again = %v, want none", got)
	}
	create("a5", "node-b") // node-b's queue was not drained: it was told already
	if got := reached(); len(got) != 0 {
		t.Errorf("Reached() with node-b's queue not drained = %v, want none", got)
	}
	watches["node-b"].Pump(src)
	create("a6", "node-b")
	if diff := cmp.Diff([]string{"node-b"}, reached()); diff != "" {
		t.Errorf("Reached() after node-b drained its queue (-want +got):\n%s", diff)
	}
}

// TestRoutedWatchAcrossCompaction checks the shared watch against a pod history that keeps
// only a few events: a node whose watch was not pumped while other nodes' writes filled the
// history still gets its next event (its watch had nothing to see meanwhile), and when the
// shared watch's own cursor is compacted every node's watch relists, so no event is lost.
func TestRoutedWatchAcrossCompaction(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	nop := trace.Func(func(trace.Event) {})
	server, err := fakeapiserver.New(fakeapiserver.Options{Clock: clk, Tracer: nop, HistorySize: 4})
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: server.Transport(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	create := func(node string) {
		t.Helper()
		n++
		createPod(t, client.CoreV1().Pods("default"), fmt.Sprintf("p%d", n), node)
	}
	router := NewPodRouter(server)
	srcs, watches := map[string]*sources.API{}, map[string]*APIWatch{}
	for _, node := range []string{"node-a", "node-b"} {
		if srcs[node], err = sources.NewAPI(sources.APIOptions{Tracer: nop}); err != nil {
			t.Fatal(err)
		}
		watches[node] = router.Watch(node, nil)
		watches[node].List(srcs[node])
	}
	ops := func(us []podconfig.Update) []string {
		var out []string
		for _, u := range us {
			row := fmt.Sprint(u.Op)
			for _, p := range u.Pods {
				row += " " + p.Name
			}
			out = append(out, row)
		}
		return out
	}

	// node-b is not pumped while node-a's pods fill the history, as an idle node is not settled.
	for range 6 {
		create("node-a")
		router.Reached()
		watches["node-a"].Pump(srcs["node-a"])
	}
	create("node-b")
	router.Reached()
	// The api source hands the kubelet the node's whole set at every change, as the
	// reflector's UndeltaStore does.
	if diff := cmp.Diff([]string{"SET p7"}, ops(watches["node-b"].Pump(srcs["node-b"]))); diff != "" {
		t.Errorf("idle node's watch after the history moved on (-want +got):\n%s", diff)
	}

	// Six writes between two looks of the shared watch: its cursor is compacted away.
	create("node-b")
	for range 5 {
		create("node-a")
	}
	if diff := cmp.Diff([]string{"node-a", "node-b"}, router.Reached()); diff != "" {
		t.Errorf("Reached() after the cursor was compacted (-want +got):\n%s", diff)
	}
	if got := ops(watches["node-b"].Pump(srcs["node-b"])); len(got) != 1 || got[0] != "SET p7 p8" {
		t.Errorf("node-b's watch after the cursor was compacted = %q, want its relist, with p7 and p8", got)
	}
	if got := ops(watches["node-b"].Pump(srcs["node-b"])); len(got) != 0 {
		t.Errorf("node-b's watch after its relist = %q, want nothing", got)
	}
}

// createPod creates a pod of one container named name in the default namespace, bound to node.
func createPod(t *testing.T, pods typedcorev1.PodInterface, name, node string) {
	t.Helper()
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "app", Image: "busybox"}}}}
	if _, err := pods.Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}
