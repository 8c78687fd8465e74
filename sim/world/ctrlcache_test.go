package world

import (
	"context"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestControllersCacheAnswersAsAList checks that the controllers' cache answers every read as a
// list of the API server made at that moment would: every pod and node, each node's pods and the
// pods bound to none, through creates, a binding, a status write, deletions and a node that
// comes and goes, read after each step; with a history long enough to follow (one list, then
// catch-ups), and with one so short that a catch-up after more than one change finds it
// compacted and lists again: each read relists exactly when the history lost a change the
// cache had not read, and the run has both kinds of read.
func TestControllersCacheAnswersAsAList(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		historySize int
	}{
		{"history", 0},
		// One change since the last read is still in it; two are not.
		{"compacted", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCluster(t, vclock.New(vclock.Epoch), tc.historySize)
			cache := newControllersCache(c)
			var relists, catchUps int
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
				lists := cache.podLists
				expired := cache.podsListed && c.server.PodHistoryExpired(cache.podRV)
				changed := cache.podsListed && c.server.ResourceVersion() != cache.podRV
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
				switch relisted := cache.podLists > lists; {
				case cache.podsListed && lists > 0 && relisted != expired:
					t.Errorf("%s: relisted = %v, want %v: history compacted past the cache's version", step.name, relisted, expired)
				case lists > 0 && relisted:
					relists++
				case lists > 0 && changed:
					catchUps++
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
			if catchUps == 0 {
				t.Errorf("no read caught up from the history")
			}
			if wantRelists := tc.historySize > 0; (relists > 0) != wantRelists {
				t.Errorf("%d relists after the first list, want some: %v", relists, wantRelists)
			}
		})
	}
}

// newTestCluster is NewCluster's cluster with an API server that keeps historySize watch events
// of each kind (0 is the server's default).
func newTestCluster(t *testing.T, clk *vclock.Clock, historySize int) *Cluster {
	t.Helper()
	c := &Cluster{clk: clk, tracer: trace.Discard}
	var err error
	if c.server, err = fakeapiserver.New(fakeapiserver.Options{Clock: clk, Tracer: trace.Discard,
		Rand: rand.New(rand.NewSource(1)), HistorySize: historySize}); err != nil {
		t.Fatal(err)
	}
	if c.client, err = c.clientThrough(c.server.Transport()); err != nil {
		t.Fatal(err)
	}
	c.direct = c.server.Direct(userAgent)
	return c
}

// A read of the cache sweeps expired objects first, as the list it stands in for did: an Event
// whose TTL passed between two reads goes at the second read, whichever kind it reads, with the
// resource version its expiry takes then.
func TestControllersCacheReadExpires(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		read func(cc *controllersCache) error
	}{
		{"pods of a node", func(cc *controllersCache) error { _, err := cc.PodsOnNode("node-a"); return err }},
		{"every pod", func(cc *controllersCache) error { _, err := podLister{cc}.List(labels.Everything()); return err }},
		{"nodes", func(cc *controllersCache) error { _, err := nodeLister{cc}.List(labels.Everything()); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := vclock.New(vclock.Epoch)
			c := newTestCluster(t, clk, 0)
			cache := newControllersCache(c)
			ev := &v1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "default"}, Reason: "Test", Type: v1.EventTypeNormal,
				InvolvedObject: v1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p"}}
			if _, err := c.client.CoreV1().Events("default").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := tc.read(cache); err != nil {
				t.Fatal(err)
			}
			before := c.server.ResourceVersion()
			clk.Set(clk.Now().Add(fakeapiserver.EventTTL + time.Second))
			if got := c.server.ResourceVersion(); got != before {
				t.Fatalf("resource version moved from %d to %d before the read", before, got)
			}
			if err := tc.read(cache); err != nil {
				t.Fatal(err)
			}
			if got := c.server.ResourceVersion(); got != before+1 {
				t.Errorf("resource version after the read = %d, want %d: the Event's expiry", got, before+1)
			}
			list, err := c.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 0 {
				t.Errorf("events after the read = %d, want 0", len(list.Items))
			}
		})
	}
}

// comparePods orders pods as their keys do, where a namespace's '-' sorts before the '/' that
// ends a shorter namespace's key.
func TestComparePodsAsKeys(t *testing.T) {
	var pods []*v1.Pod
	for _, ns := range []string{"a", "a-b", "a0", "ab", "b", ""} {
		for _, name := range []string{"x", "-x", "x-y"} {
			pods = append(pods, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		}
	}
	for _, a := range pods {
		for _, b := range pods {
			want := strings.Compare(podkey.Of(a), podkey.Of(b))
			if got := comparePods(a, b); got != want {
				t.Errorf("comparePods(%s, %s) = %d, want %d", podkey.Of(a), podkey.Of(b), got, want)
			}
		}
	}
}

// A node feed names, at each call, the nodes created, updated or deleted since its previous call,
// however many readers have caught the cache up in between, and says all at its first call and
// after the cache listed again (a history compacted past what it had read). Two feeds read at
// different steps each get their own changes.
func TestControllersCacheNodeFeed(t *testing.T) {
	ctx := context.Background()
	type read struct {
		names []string
		all   bool
	}
	for _, tc := range []struct {
		name        string
		historySize int
		// want are each step's reads of the feed read at every step, then of the feed read at
		// every other step (nil where it is not read).
		want [][2]*read
	}{
		{"history", 0, [][2]*read{
			{{all: true}, {all: true}},
			{{names: []string{"node-a", "node-b"}}, nil},
			{{names: []string{"node-a"}}, {names: []string{"node-a", "node-b"}}},
			{{}, nil},
			{{names: []string{"node-b", "node-c"}}, {names: []string{"node-b", "node-c"}}},
		}},
		// One change since the cache's last read is in the history; two are not.
		{"compacted", 1, [][2]*read{
			{{all: true}, {all: true}},
			{{all: true}, nil},
			{{names: []string{"node-a"}}, {all: true}},
			{{}, nil},
			{{all: true}, {all: true}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCluster(t, vclock.New(vclock.Epoch), tc.historySize)
			cache := newControllersCache(c)
			feeds := [2]controllers.NodeFeed{cache.NodeFeed(), cache.NodeFeed()}
			nodes := c.client.CoreV1().Nodes()
			create := func(name string) {
				if _, err := nodes.Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			steps := []func(){
				func() { create("node-z") },
				func() { create("node-b"); create("node-a") },
				func() {
					n, err := nodes.Get(ctx, "node-a", metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					n.Spec.Unschedulable = true
					if _, err := nodes.Update(ctx, n, metav1.UpdateOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				func() {},
				func() {
					if err := nodes.Delete(ctx, "node-b", metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
					create("node-c")
				},
			}
			for i, step := range steps {
				step()
				// Another reader catches the cache up first: the feeds still see the changes.
				if _, err := (nodeLister{cache}).List(labels.Everything()); err != nil {
					t.Fatal(err)
				}
				for f, want := range tc.want[i] {
					if want == nil {
						continue
					}
					names, all, err := feeds[f].ChangedNodes(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(*want, read{names, all}, cmp.AllowUnexported(read{}), cmpopts.EquateEmpty()); diff != "" {
						t.Errorf("step %d, feed %d: ChangedNodes() (-want +got):\n%s", i, f, diff)
					}
				}
			}
		})
	}
}

// A feed of the nodes' pods names the nodes a bound pod was created on, updated on, deleted from
// or bound to, never "" for the pods bound to none, and says all at its first call and after the
// cache listed the pods again.
func TestControllersCachePodNodeFeed(t *testing.T) {
	ctx := context.Background()
	type read struct {
		nodes []string
		all   bool
	}
	c := newTestCluster(t, vclock.New(vclock.Epoch), 0)
	cache := newControllersCache(c)
	feed := cache.PodNodeFeed()
	pods := c.client.CoreV1().Pods("default")
	steps := []struct {
		name string
		do   func()
		want read
	}{
		{"first", func() { createPod(t, pods, "p0", "node-a") }, read{all: true}},
		{"created", func() {
			createPod(t, pods, "p1", "node-b")
			createPod(t, pods, "p2", "")
			createPod(t, pods, "p3", "node-a")
		}, read{nodes: []string{"node-a", "node-b"}}},
		{"nothing", func() {}, read{}},
		{"bound", func() {
			if err := pods.Bind(ctx, &v1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p2", Namespace: "default"},
				Target: v1.ObjectReference{Kind: "Node", Name: "node-c"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}, read{nodes: []string{"node-c"}}},
		{"deleted", func() {
			zero := int64(0)
			if err := pods.Delete(ctx, "p1", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
				t.Fatal(err)
			}
		}, read{nodes: []string{"node-b"}}},
	}
	for _, step := range steps {
		step.do()
		// Another reader catches the cache up first: the feed still sees the changes.
		if _, err := cache.UnboundPods(); err != nil {
			t.Fatal(err)
		}
		nodes, all, err := feed.ChangedPodNodes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(step.want, read{nodes, all}, cmp.AllowUnexported(read{}), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: ChangedPodNodes() (-want +got):\n%s", step.name, diff)
		}
	}
}
