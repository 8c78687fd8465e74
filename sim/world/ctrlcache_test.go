package world

import (
	"context"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestControllersCacheAnswersAsAList checks that the controllers' cache answers every read as a
// list of the API server made at that moment would: every pod and node, each node's pods and the
// pods bound to none, through creates, a binding, a status write, deletions and a node that
// comes and goes, read after each step; with a history long enough to follow, and with one so
// short that every catch-up finds it compacted and lists again.
func TestControllersCacheAnswersAsAList(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		historySize int
	}{
		{"history", 0},
		{"compacted", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := vclock.New(vclock.Epoch)
			c := &Cluster{clk: clk, tracer: trace.Discard}
			var err error
			if c.server, err = fakeapiserver.New(fakeapiserver.Options{Clock: clk, Tracer: trace.Discard,
				Rand: rand.New(rand.NewSource(1)), HistorySize: tc.historySize}); err != nil {
				t.Fatal(err)
			}
			if c.client, err = c.clientThrough(c.server.Transport()); err != nil {
				t.Fatal(err)
			}
			c.direct = c.server.Direct(userAgent)
			cache := newControllersCache(c)
			pods := c.client.CoreV1().Pods("default")
			nodes := c.client.CoreV1().Nodes()
			createNode := func(name string) {
				if _, err := nodes.Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			steps := []struct {
				name string
				do   func()
			}{
				{"nothing yet", func() {}},
				{"nodes", func() { createNode("node-a"); createNode("node-b") }},
				{"pods", func() {
					createPod(t, pods, "p1", "node-a")
					createPod(t, pods, "p2", "node-b")
					createPod(t, pods, "p3", "")
					createPod(t, pods, "p0", "node-a")
				}},
				{"binding", func() {
					if err := pods.Bind(ctx, &v1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p3", Namespace: "default"},
						Target: v1.ObjectReference{Kind: "Node", Name: "node-b"}}, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
				}},
				{"status", func() {
					p, err := pods.Get(ctx, "p1", metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					p.Status.Phase = v1.PodRunning
					if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
						t.Fatal(err)
					}
				}},
				{"pod deleted", func() {
					zero := int64(0)
					if err := pods.Delete(ctx, "p2", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
						t.Fatal(err)
					}
				}},
				{"node comes and goes", func() {
					createNode("node-c")
					if err := nodes.Delete(ctx, "node-a", metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				}},
			}
			for _, step := range steps {
				step.do()
				list, err := c.direct.ListPods(ctx, "", metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				want := map[string][]*v1.Pod{}
				var all []*v1.Pod
				for i := range list.Items {
					p := &list.Items[i]
					all = append(all, p)
					want[p.Spec.NodeName] = append(want[p.Spec.NodeName], p)
				}
				got, err := podLister{cache}.List(labels.Everything())
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(all, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s: every pod (-list +cache):\n%s", step.name, diff)
				}
				for _, p := range all {
					if got, err := (podLister{cache}).Pods(p.Namespace).Get(p.Name); err != nil || !cmp.Equal(got, p) {
						t.Errorf("%s: get pod %s: %v, %v; want it as listed", step.name, p.Name, got, err)
					}
				}
				for _, node := range []string{"", "node-a", "node-b", "node-c"} {
					read := cache.PodsOnNode
					if node == "" {
						read = func(string) ([]*v1.Pod, error) { return cache.UnboundPods() }
					}
					got, err := read(node)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(want[node], got, cmpopts.EquateEmpty()); diff != "" {
						t.Errorf("%s: pods of node %q (-list +cache):\n%s", step.name, node, diff)
					}
				}
				nodeList, err := c.direct.ListNodes(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				var wantNodes []*v1.Node
				for i := range nodeList.Items {
					wantNodes = append(wantNodes, &nodeList.Items[i])
				}
				gotNodes, err := nodeLister{cache}.List(labels.Everything())
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range wantNodes {
					if got, err := (nodeLister{cache}).Get(n.Name); err != nil || !cmp.Equal(got, n) {
						t.Errorf("%s: get node %s: %v, %v; want it as listed", step.name, n.Name, got, err)
					}
				}
				if diff := cmp.Diff(wantNodes, gotNodes, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s: nodes (-list +cache):\n%s", step.name, diff)
				}
			}
		})
	}
}
