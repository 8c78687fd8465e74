package replay

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// nodeForScan is nodeFor as a scan of every node: the named node; else the first node, in the
// scenario's order, that has seen the step's pod, or the node the API server binds it to; else
// the first node.
func nodeForScan(ctx context.Context, e *engine, st *Step) *node {
	if len(e.nodes) == 1 {
		return e.nodes[0]
	}
	for _, n := range e.nodes {
		if st.Node != "" && n.name == st.Node {
			return n
		}
	}
	key := st.podKey()
	if key == "" {
		return e.nodes[0]
	}
	for _, n := range e.nodes {
		if _, ok := n.uids[key]; ok {
			return n
		}
	}
	if e.client != nil {
		if ns, name, ok := strings.Cut(key, "/"); ok {
			if pod, err := e.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
				for _, n := range e.nodes {
					if n.name == pod.Spec.NodeName {
						return n
					}
				}
			}
		}
	}
	return e.nodes[0]
}

// seenByTwo is a fleet where each of two pods is bound to one node, deleted, and made again on
// the other, so that both nodes have seen it: the steps that name it answer with the first node
// in the scenario's order, whichever saw it first.
const seenByTwo = `name: seen-by-two
nodes: [node-1, node-2]
sources: [api]
steps:
- at: 0s
  apiCreatePod:
    pod:
      metadata: {name: first-on-1, namespace: default}
      spec: {nodeName: node-1, containers: [{name: app, image: busybox:1.36}]}
- at: 0s
  apiCreatePod:
    pod:
      metadata: {name: first-on-2, namespace: default}
      spec: {nodeName: node-2, containers: [{name: app, image: busybox:1.36}]}
- at: 10s
  apiDeletePod: {namespace: default, name: first-on-1, gracePeriodSeconds: 1}
- at: 10s
  apiDeletePod: {namespace: default, name: first-on-2, gracePeriodSeconds: 1}
- at: 40s
  apiCreatePod:
    pod:
      metadata: {name: first-on-1, namespace: default}
      spec: {nodeName: node-2, containers: [{name: app, image: busybox:1.36}]}
- at: 40s
  apiCreatePod:
    pod:
      metadata: {name: first-on-2, namespace: default}
      spec: {nodeName: node-1, containers: [{name: app, image: busybox:1.36}]}
- at: 60s
  expectNoEvent: {component: runtime, event: backoff, pod: default/first-on-1}
- at: 60s
  expectNoEvent: {component: runtime, event: backoff, pod: default/first-on-2}
`

// TestNodeForSameAsScan replays every scenario of the library, a fleet whose steps touch single
// nodes, a fleet of three nodes for two minutes, and a fleet whose pods two nodes have seen, and
// checks each step's node against a scan of every node.
func TestNodeForSameAsScan(t *testing.T) {
	replays := libraryAndWakeFleet(t)
	// Three nodes for two minutes: more nodes answer no differently, and the package's tests
	// replay the library and its fleets often enough already.
	replays = append(replays, replay{s: hourOfAFleet(t, 3, 10), until: 2 * time.Minute})
	s, err := Parse("seen-by-two.yaml", []byte(seenByTwo), LoadOptions{})
	if err != nil {
		t.Fatalf("Parse(seen-by-two.yaml) error = %v", err)
	}
	replays = append(replays, replay{s: s})
	// asked counts the steps of fleets that named a pod and no node, and seen those of them
	// seenBy answered: a scan that finds no node agrees with an index that is never kept, so
	// only seen shows the index in use. twice counts seen-by-two's checks of its pods.
	asked, seen, twice := 0, 0, 0
	for _, r := range replays {
		t.Run(r.s.Name, func(t *testing.T) {
			e, err := newEngine(r.s, RunOptions{})
			if err != nil {
				t.Fatalf("newEngine() error = %v", err)
			}
			e.checkNodeFor = func(ctx context.Context, st *Step, got *node, fromSeenBy bool) {
				if len(e.nodes) > 1 && st.Node == "" && st.podKey() != "" {
					asked++
				}
				if fromSeenBy {
					seen++
				}
				want := nodeForScan(ctx, e, st)
				if got != want {
					t.Errorf("step at %v: nodeFor = %s, a scan of every node finds %s", st.At.Duration, got.name, want.name)
				}
				// Both nodes of seen-by-two have seen its pods when it checks them: the
				// answer is the first in the scenario's order, from seenBy.
				if r.s.Name == "seen-by-two" && st.At.Duration == time.Minute {
					twice++
					for _, n := range e.nodes {
						if _, ok := n.uids[st.podKey()]; !ok {
							t.Errorf("step at %v: %s has not seen %s", st.At.Duration, n.name, st.podKey())
						}
					}
					if got.name != "node-1" || !fromSeenBy {
						t.Errorf("step at %v for %s: nodeFor = %s (from seenBy: %t), want node-1 from seenBy",
							st.At.Duration, st.podKey(), got.name, fromSeenBy)
					}
				}
			}
			if err := e.run(context.Background(), r.until); err != nil {
				t.Fatalf("run() error = %v", err)
			}
		})
	}
	if twice != 2 {
		t.Errorf("seen-by-two checked its pods seen by two nodes %d times, want 2", twice)
	}
	if asked == 0 || seen == 0 {
		t.Errorf("steps of fleets that named a pod and no node: %d, answered from seenBy: %d; want some of each", asked, seen)
	}
}

// TestSeenByFirstNode checks that seenBy names, for each pod, the first node in the scenario's
// order that has seen it, whatever the order the nodes see it in.
func TestSeenByFirstNode(t *testing.T) {
	tests := []struct {
		name string
		// seen are the nodes (by index) that see the pod "default/p", in order.
		seen []int
		want int
	}{
		{name: "one node", seen: []int{2}, want: 2},
		{name: "a later node first", seen: []int{2, 0}, want: 0},
		{name: "an earlier node first", seen: []int{0, 2}, want: 0},
		{name: "seen again", seen: []int{1, 1, 2, 1}, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &engine{seenBy: map[string]int{}}
			for i := range 3 {
				e.nodes = append(e.nodes, &node{index: i, uids: map[string]types.UID{}})
			}
			for _, i := range tt.seen {
				n := e.nodes[i]
				e.noteSeen(n, "default/p")
				n.uids["default/p"] = "u"
			}
			if got := e.seenBy["default/p"]; got != tt.want {
				t.Errorf("seenBy = node %d, want node %d", got, tt.want)
			}
		})
	}
}
