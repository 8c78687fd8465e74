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
		// recreateOn is the node the pod is created again on; "" is not at all.
		recreateOn string
		want       []string // the cancel messages of the second pass
		// evictedOn is the node of the pod the eviction deletes when it falls due; "" is none.
		evictedOn string
	}{
		{name: "gone", want: []string{"pod gone"}},
		// handlePodUpdate returns for a pod on a node without NoExecute taints, and the timed
		// worker deletes by namespace and name: the new pod is evicted.
		{name: "created again on an untainted node", recreateOn: "b", evictedOn: "b"},
		// On the tainted node again it is the same key on the same node: it stays scheduled.
		{name: "created again on the tainted node", recreateOn: "a", evictedOn: "a"},
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
			create := func(node string) {
				pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
					Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
				if _, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
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
			if tt.recreateOn != "" {
				create(tt.recreateOn)
			}
			tr.evs = nil
			if err := te.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ev := range tr.evs {
				if ev.Event == trace.KindEvictCancel {
					got = append(got, ev.Message)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("cancel messages (-want +got):\n%s", diff)
			}
			if got := runUntilEvicted(t, te, clk, c); got != tt.evictedOn {
				t.Errorf("evicted the pod on node %q, want %q", got, tt.evictedOn)
			}
		})
	}
}

// runUntilEvicted runs the passes at each wake up to an hour after the epoch and returns the node
// of the pod default/p once a pass has deleted it, "" when none does.
func runUntilEvicted(t *testing.T, te *tainteviction.Controller, clk *vclock.Clock, c kubernetes.Interface) string {
	t.Helper()
	ctx := context.Background()
	for {
		p, err := c.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		if err == nil && p.DeletionTimestamp != nil {
			return p.Spec.NodeName
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
