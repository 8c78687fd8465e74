package tainteviction_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/controllers/internal/ctrltest"
	"github.com/minikubelet/minikubelet/controlplane/controllers/tainteviction"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// A pod with an eviction scheduled, or its node, changes between two passes. handleNodeUpdate
// cancels the evictions of a node's pods when its NoExecute taints are removed, but only forgets
// a node that was deleted: its pods' evictions still fire. A pod that starts terminating sends
// no pod update the controller acts on, so its eviction fires too.
func TestScheduledPodNodeChanged(t *testing.T) {
	setTaints := func(taints ...v1.Taint) func(ctx context.Context, t *testing.T, c kubernetes.Interface) {
		return func(ctx context.Context, t *testing.T, c kubernetes.Interface) {
			n, err := c.CoreV1().Nodes().Get(ctx, "a", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			n.Spec.Taints = taints
			if _, err := c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name   string
		change func(ctx context.Context, t *testing.T, c kubernetes.Interface)
		want   []string // the cancel messages of the second pass
		// evicted is whether the eviction deletes the pod when it falls due.
		evicted bool
	}{
		{name: "taints removed", change: setTaints(), want: []string{"no NoExecute taints"}},
		{name: "a NoSchedule taint left", change: setTaints(v1.Taint{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoSchedule}),
			want: []string{"no NoExecute taints"}},
		{name: "nothing changed", change: func(context.Context, *testing.T, kubernetes.Interface) {}, evicted: true},
		{name: "node deleted", change: func(ctx context.Context, t *testing.T, c kubernetes.Interface) {
			if err := c.CoreV1().Nodes().Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}, evicted: true},
		{name: "pod terminating", change: func(ctx context.Context, t *testing.T, c kubernetes.Interface) {
			if err := c.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](3600)}); err != nil {
				t.Fatal(err)
			}
		}, evicted: true},
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
			created, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
			if err != nil {
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
			if diff := cmp.Diff(tt.want, cancels(tr)); diff != "" {
				t.Errorf("cancel messages (-want +got):\n%s", diff)
			}
			got := runUntilEvicted(t, te, clk, tr)
			if want := map[bool]string{true: string(created.UID)}[tt.evicted]; got != want {
				t.Errorf("evicted pod UID %q, want %q", got, want)
			}
			if !tt.evicted {
				return
			}
			p, err := c.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
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
