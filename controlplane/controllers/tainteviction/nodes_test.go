package tainteviction_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/controllers/internal/ctrltest"
	"github.com/minikubelet/minikubelet/controlplane/controllers/tainteviction"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// The node of a pod with an eviction scheduled changes between two passes. handleNodeUpdate
// cancels the evictions of a node's pods when its NoExecute taints are removed, but only forgets
// a node that was deleted: its pods' evictions still fire.
func TestScheduledPodNodeChanged(t *testing.T) {
	tests := []struct {
		name   string
		change func(ctx context.Context, t *testing.T, c kubernetes.Interface)
		want   []string // the cancel messages of the second pass
		// evictedOn is the node of the pod the eviction deletes when it falls due; "" is none.
		evictedOn string
	}{
		{name: "taints removed", change: func(ctx context.Context, t *testing.T, c kubernetes.Interface) {
			n, err := c.CoreV1().Nodes().Get(ctx, "a", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			n.Spec.Taints = nil
			if _, err := c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"no NoExecute taints"}},
		{name: "node deleted", change: func(ctx context.Context, t *testing.T, c kubernetes.Interface) {
			if err := c.CoreV1().Nodes().Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}, evictedOn: "a"},
		{name: "a NoSchedule taint stays", change: func(ctx context.Context, t *testing.T, c kubernetes.Interface) {
			n, err := c.CoreV1().Nodes().Get(ctx, "a", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			n.Spec.Taints = []v1.Taint{{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoSchedule}}
			if _, err := c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"no NoExecute taints"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			clk := vclock.New(vclock.Epoch)
			c := ctrltest.NewClient(t, clk)
			node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: v1.NodeSpec{Taints: []v1.Taint{{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}}}}
			if _, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
				Spec: v1.PodSpec{NodeName: "a", Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
			if _, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
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
			tt.change(ctx, t, c)
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
