package tainteviction_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/controllers/internal/ctrltest"
	"github.com/minikubelet/minikubelet/controlplane/controllers/tainteviction"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

type collect struct{ evs []trace.Event }

func (c *collect) Emit(ev trace.Event) { c.evs = append(c.evs, ev) }

// A pod with an eviction scheduled on a tainted node is deleted between two passes, and maybe
// created again under the same name. The pass reads only the tainted node's pods, so it looks the
// missing pod up by name, as handlePodUpdate does, and decides on the node the pod is on now.
func TestScheduledPodDeletedBetweenPasses(t *testing.T) {
	tests := []struct {
		name string
		// recreate creates the pod again, on node recreateOn ("" is not bound).
		recreate   bool
		recreateOn string
		want       []string // the cancel messages of the second pass
		// evictsNew is whether the eviction, when due, deletes the pod created again.
		evictsNew bool
	}{
		{name: "gone", want: []string{"pod gone"}},
		// handlePodUpdate returns for a pod on a node without NoExecute taints, and the timed
		// worker deletes by namespace and name: the new pod is evicted.
		{name: "created again on an untainted node", recreate: true, recreateOn: "b", evictsNew: true},
		// handlePodUpdate returns for a pod on no node too.
		{name: "created again, not bound", recreate: true, evictsNew: true},
		// On the tainted node again it is the same key on the same node: it stays scheduled.
		{name: "created again on the tainted node", recreate: true, recreateOn: "a", evictsNew: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			clk := vclock.New(vclock.Epoch)
			c := ctrltest.NewClient(t, clk)
			for _, n := range []*v1.Node{
				{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: v1.NodeSpec{Taints: []v1.Taint{{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}}}},
				{ObjectMeta: metav1.ObjectMeta{Name: "b"}},
			} {
				if _, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			create := func(node string) string {
				pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
					Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
				got, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return string(got.UID)
			}
			create("a")
			tr := &collect{}
			te, err := tainteviction.New(tainteviction.Options{Clock: clk, Lister: controllers.Client{Clientset: c}, Writer: controllers.Client{Clientset: c}, Tracer: tr})
			if err != nil {
				t.Fatal(err)
			}
			if err := te.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if _, ok := te.NextWake(); !ok {
				t.Fatal("first pass scheduled no eviction")
			}
			zero := int64(0)
			if err := c.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
				t.Fatal(err)
			}
			var uid string
			if tt.recreate {
				uid = create(tt.recreateOn)
			}
			tr.evs = nil
			if err := te.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cancels(tr)); diff != "" {
				t.Errorf("cancel messages (-want +got):\n%s", diff)
			}
			got := runUntilEvicted(t, te, clk, tr)
			if want := map[bool]string{true: uid}[tt.evictsNew]; got != want {
				t.Errorf("evicted pod UID %q, want %q (the new pod's is %q)", got, want, uid)
			}
		})
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
