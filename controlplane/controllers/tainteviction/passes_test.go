package tainteviction_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/controllers/internal/ctrltest"
	"github.com/minikubelet/minikubelet/controlplane/controllers/tainteviction"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

type collect struct{ evs []trace.Event }

func (c *collect) Emit(ev trace.Event) { c.evs = append(c.evs, ev) }

// cluster is what a step between two passes changes: the API server, and the UID of the pod
// "p" created last.
type cluster struct {
	ctx context.Context
	t   *testing.T
	c   kubernetes.Interface
	uid string
}

func (cl *cluster) createNode(name string, taints ...v1.Taint) {
	cl.t.Helper()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.NodeSpec{Taints: taints}}
	if _, err := cl.c.CoreV1().Nodes().Create(cl.ctx, node, metav1.CreateOptions{}); err != nil {
		cl.t.Fatal(err)
	}
}

func (cl *cluster) deleteNode(name string) {
	cl.t.Helper()
	if err := cl.c.CoreV1().Nodes().Delete(cl.ctx, name, metav1.DeleteOptions{}); err != nil {
		cl.t.Fatal(err)
	}
}

// createPod creates the pod "p" on node ("" is not bound), without tolerations of its own.
func (cl *cluster) createPod(node string) {
	cl.t.Helper()
	cl.uid = createPod(cl.ctx, cl.t, cl.c, node, nil)
}

// deletePod deletes the pod "p" with the grace given.
func (cl *cluster) deletePod(grace int64) {
	cl.t.Helper()
	if err := cl.c.CoreV1().Pods("default").Delete(cl.ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(grace)}); err != nil {
		cl.t.Fatal(err)
	}
}

// A pod "p" on node a, tainted unreachable, has its eviction scheduled by a first pass; then the
// pod or the nodes change, each step followed by a pass.
//
// handleNodeUpdate cancels the evictions of a node's pods when its NoExecute taints are removed,
// but only forgets a node that was deleted: its pods' evictions still fire. A node added without
// NoExecute taints goes through NodeUpdated(nil, node), which always queues it, and
// handleNodeUpdate then cancels the eviction of every pod assigned to it: a tainted node deleted
// and created again untainted, or a pod created again under its name on a node created later,
// keeps no eviction. A pod that starts terminating sends no pod update the controller acts on, so
// its eviction fires too.
//
// A pass reads only the tainted nodes' pods, so it looks a missing pod up by name, as
// handlePodUpdate does, and decides on the node the pod is on now: handlePodUpdate returns for a
// pod on a node without NoExecute taints or on no node, and the timed worker deletes by namespace
// and name, so a pod created again under the name is evicted in its place.
func TestChangeBetweenPasses(t *testing.T) {
	unreachable := v1.Taint{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}
	tests := []struct {
		name string
		// nodeB creates node b, untainted, before the first pass.
		nodeB bool
		// steps run one before each pass after the first.
		steps []func(cl *cluster)
		// fed, when set, are the nodes a feed of changed nodes names at each of those passes: the
		// case runs once reading every node and once with the feed.
		fed [][]string
		// wantCancels are the cancel messages of the passes after the first.
		wantCancels []string
		// evicted is whether an eviction, when due, deletes the pod created last: it is then
		// marked for deletion with the DisruptionTarget condition, or, unbound, removed at once.
		evicted, unbound bool
	}{
		{
			name:        "taints removed",
			steps:       []func(*cluster){func(cl *cluster) { setTaints(cl.ctx, cl.t, cl.c) }},
			wantCancels: []string{"no NoExecute taints"},
		},
		{
			name: "a NoSchedule taint left",
			steps: []func(*cluster){func(cl *cluster) {
				setTaints(cl.ctx, cl.t, cl.c, v1.Taint{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoSchedule})
			}},
			wantCancels: []string{"no NoExecute taints"},
		},
		{name: "nothing changed", steps: []func(*cluster){func(*cluster) {}}, evicted: true},
		{name: "node deleted", steps: []func(*cluster){func(cl *cluster) { cl.deleteNode("a") }}, evicted: true},
		{name: "pod terminating", steps: []func(*cluster){func(cl *cluster) { cl.deletePod(3600) }}, evicted: true},
		{
			name: "gone", nodeB: true,
			steps:       []func(*cluster){func(cl *cluster) { cl.deletePod(0); cl.uid = "" }},
			wantCancels: []string{"pod gone"},
		},
		{
			name: "created again on an untainted node", nodeB: true,
			steps:   []func(*cluster){func(cl *cluster) { cl.deletePod(0); cl.createPod("b") }},
			evicted: true,
		},
		{
			name: "created again, not bound", nodeB: true,
			steps:   []func(*cluster){func(cl *cluster) { cl.deletePod(0); cl.createPod("") }},
			evicted: true, unbound: true,
		},
		{
			// On the tainted node again it is the same key on the same node: it stays scheduled.
			name: "created again on the tainted node", nodeB: true,
			steps:   []func(*cluster){func(cl *cluster) { cl.deletePod(0); cl.createPod("a") }},
			evicted: true,
		},
		{
			name: "node deleted, then created again untainted",
			steps: []func(*cluster){
				func(cl *cluster) { cl.deleteNode("a") },
				func(cl *cluster) { cl.createNode("a") },
			},
			fed:         [][]string{{"a"}, {"a"}},
			wantCancels: []string{"no NoExecute taints"},
		},
		{
			name:        "node deleted and created again untainted between two passes",
			steps:       []func(*cluster){func(cl *cluster) { cl.deleteNode("a"); cl.createNode("a") }},
			fed:         [][]string{{"a"}},
			wantCancels: []string{"no NoExecute taints"},
		},
		{
			name: "pod created again on a node created untainted later",
			steps: []func(*cluster){
				func(cl *cluster) { cl.deletePod(0); cl.createPod("b") },
				func(cl *cluster) { cl.createNode("b") },
			},
			fed:         [][]string{nil, {"b"}},
			wantCancels: []string{"no NoExecute taints"},
		},
	}
	for _, tt := range tests {
		runs := map[string]bool{tt.name: false}
		if tt.fed != nil {
			runs = map[string]bool{tt.name + ", every node": false, tt.name + ", feed": true}
		}
		for name, withFeed := range runs {
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				clk := vclock.New(vclock.Epoch)
				cl := &cluster{ctx: ctx, t: t, c: ctrltest.NewClient(t, clk)}
				cl.createNode("a", unreachable)
				if tt.nodeB {
					cl.createNode("b")
				}
				cl.createPod("a")
				tr := &collect{}
				opts := tainteviction.Options{Clock: clk, Lister: controllers.Client{Clientset: cl.c}, Writer: controllers.Client{Clientset: cl.c}, Tracer: tr}
				feed := &ctrltest.Feed{All: true}
				if withFeed {
					opts.Changes = feed
				}
				te, err := tainteviction.New(opts)
				if err != nil {
					t.Fatal(err)
				}
				if err := te.Sync(ctx); err != nil {
					t.Fatal(err)
				}
				if _, ok := te.NextWake(); !ok {
					t.Fatal("first pass scheduled no eviction")
				}
				tr.evs = nil
				for i, step := range tt.steps {
					step(cl)
					if tt.fed != nil {
						feed.Changed = tt.fed[i]
					}
					if err := te.Sync(ctx); err != nil {
						t.Fatal(err)
					}
				}
				if diff := cmp.Diff(tt.wantCancels, cancels(tr)); diff != "" {
					t.Errorf("cancel messages (-want +got):\n%s", diff)
				}
				got := runUntilEvicted(t, te, clk, tr)
				if want := map[bool]string{true: cl.uid}[tt.evicted]; got != want {
					t.Errorf("evicted pod UID %q, want %q (the pod created last is %q)", got, want, cl.uid)
				}
				if !tt.evicted {
					return
				}
				p, err := cl.c.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
				if tt.unbound {
					if !apierrors.IsNotFound(err) {
						t.Errorf("after the eviction of an unbound pod: Get() = %v, want NotFound", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				var reason string
				for _, cond := range p.Status.Conditions {
					if cond.Type == v1.DisruptionTarget {
						reason = cond.Reason
					}
				}
				if p.DeletionTimestamp == nil || reason != "DeletionByTaintManager" {
					t.Errorf("after the eviction: deletion mark %v, DisruptionTarget reason %q; want a mark and DeletionByTaintManager", p.DeletionTimestamp, reason)
				}
			})
		}
	}
}

// cancels returns the messages of the evict-cancel events traced.
func cancels(tr *collect) []string {
	var out []string
	for _, ev := range tr.evs {
		if ev.Event == trace.KindEvictCancel {
			out = append(out, ev.Message)
		}
	}
	return out
}

// runUntilEvicted runs the passes at each wake up to an hour after the epoch and returns the UID
// the first evict event names, "" when none does.
func runUntilEvicted(t *testing.T, te *tainteviction.Controller, clk *vclock.Clock, tr *collect) string {
	t.Helper()
	ctx := context.Background()
	for {
		for _, ev := range tr.evs {
			if ev.Event == trace.KindEvict {
				return ev.UID
			}
		}
		next, ok := te.NextWake()
		if !ok || next.Sub(vclock.Epoch) > time.Hour {
			return ""
		}
		clk.Set(next)
		if err := te.Sync(ctx); err != nil {
			t.Fatalf("Sync() = %v", err)
		}
	}
}
