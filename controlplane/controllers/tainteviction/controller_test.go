package tainteviction_test

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/controllers/internal/ctrltest"
	"github.com/minikubelet/minikubelet/controlplane/controllers/tainteviction"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

func TestEvictionTime(t *testing.T) {
	unreachable := v1.Toleration{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}
	tests := []struct {
		name        string
		tolerations []v1.Toleration
		// want is when the pod is evicted, counted from the taint; negative means never (within 1h).
		want time.Duration
	}{
		// The API server's DefaultTolerationSeconds gives a pod that tolerates neither the
		// unreachable nor the not-ready taint both, for 300s, as kube-apiserver does.
		{"no tolerations of its own: the API server's 300s", nil, 300 * time.Second},
		{"tolerationSeconds 0: at once", []v1.Toleration{{Key: unreachable.Key, Operator: unreachable.Operator, Effect: unreachable.Effect, TolerationSeconds: ptr.To[int64](0)}}, 0},
		{"tolerated for 300s", []v1.Toleration{{Key: unreachable.Key, Operator: unreachable.Operator, Effect: unreachable.Effect, TolerationSeconds: ptr.To[int64](300)}}, 300 * time.Second},
		{"the smallest tolerationSeconds", []v1.Toleration{
			{Operator: v1.TolerationOpExists, TolerationSeconds: ptr.To[int64](600)},
			{Key: unreachable.Key, Operator: unreachable.Operator, Effect: unreachable.Effect, TolerationSeconds: ptr.To[int64](30)},
		}, 600 * time.Second},
		{"for ever", []v1.Toleration{unreachable}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			clk := vclock.New(vclock.Epoch)
			c := ctrltest.NewClient(t, clk)
			node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: v1.NodeSpec{Taints: []v1.Taint{{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}}}}
			if _, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
				Spec: v1.PodSpec{NodeName: "n", Tolerations: tt.tolerations, Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
			if _, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			te, err := tainteviction.New(tainteviction.Options{Clock: clk, Lister: controllers.Client{Clientset: c}, Writer: controllers.Client{Clientset: c}, Tracer: trace.Discard})
			if err != nil {
				t.Fatal(err)
			}
			evicted := time.Duration(-1)
			for clk.Since(vclock.Epoch) <= time.Hour {
				if err := te.Sync(ctx); err != nil {
					t.Fatalf("Sync() = %v", err)
				}
				p, err := c.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if p.DeletionTimestamp != nil {
					evicted = clk.Since(vclock.Epoch)
					var reason string
					for _, cond := range p.Status.Conditions {
						if cond.Type == v1.DisruptionTarget {
							reason = cond.Reason
						}
					}
					if reason != "DeletionByTaintManager" {
						t.Errorf("DisruptionTarget reason = %q, want DeletionByTaintManager", reason)
					}
					break
				}
				next, ok := te.NextWake()
				if !ok {
					break
				}
				clk.Set(next)
			}
			if evicted != tt.want {
				t.Errorf("evicted after %v, want %v (-1: never)", evicted, tt.want)
			}
		})
	}
}

// The real controller processes a node's pods when its NoExecute taints change, and a pod when it
// comes to the node or its tolerations change; the deletion mark plays no part. So a pod that is
// already terminating is evicted like any other, and a pod whose eviction fired (and is now
// terminating) is evicted again only when something changes.
func TestEvictionsFollowNodeAndPodChanges(t *testing.T) {
	unreachable := v1.Taint{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}
	notReady := v1.Taint{Key: v1.TaintNodeNotReady, Effect: v1.TaintEffectNoExecute}
	tests := []struct {
		name string
		// terminating deletes the pod (with a long grace) before the node is tainted.
		terminating bool
		// tolerationSeconds is the pod's for both taints; nil leaves the API server's 300s.
		tolerationSeconds *int64
		// later changes something ten minutes in, after the first eviction.
		later func(ctx context.Context, t *testing.T, c kubernetes.Interface)
		// want is when the evictions happen, from the first pass.
		want []time.Duration
	}{
		{name: "once", want: []time.Duration{300 * time.Second}},
		{name: "already terminating", terminating: true, want: []time.Duration{300 * time.Second}},
		{name: "at once, once", tolerationSeconds: ptr.To[int64](0), want: []time.Duration{0}},
		{name: "the taints change: again", later: func(ctx context.Context, t *testing.T, c kubernetes.Interface) {
			setTaints(ctx, t, c, notReady)
		}, want: []time.Duration{300 * time.Second, 900 * time.Second}},
		{name: "the same taints written again: nothing", later: func(ctx context.Context, t *testing.T, c kubernetes.Interface) {
			setTaints(ctx, t, c, unreachable)
		}, want: []time.Duration{300 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			clk := vclock.New(vclock.Epoch)
			c := ctrltest.NewClient(t, clk)
			if _, err := c.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
				Spec: v1.PodSpec{NodeName: "a", Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
			if tt.tolerationSeconds != nil {
				pod.Spec.Tolerations = []v1.Toleration{
					{Key: unreachable.Key, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: tt.tolerationSeconds},
					{Key: notReady.Key, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: tt.tolerationSeconds},
				}
			}
			if _, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if tt.terminating {
				if err := c.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](7200)}); err != nil {
					t.Fatal(err)
				}
			}
			setTaints(ctx, t, c, unreachable)
			tr := &collect{}
			te, err := tainteviction.New(tainteviction.Options{Clock: clk, Lister: controllers.Client{Clientset: c}, Writer: controllers.Client{Clientset: c}, Tracer: tr})
			if err != nil {
				t.Fatal(err)
			}
			// A pass every 5s for 20 minutes, as the controllers' loop runs them, and the
			// change at 10 minutes.
			var got []time.Duration
			for clk.Since(vclock.Epoch) <= 20*time.Minute {
				if tt.later != nil && clk.Since(vclock.Epoch) == 10*time.Minute {
					tt.later(ctx, t, c)
				}
				tr.evs = nil
				if err := te.Sync(ctx); err != nil {
					t.Fatalf("Sync() = %v", err)
				}
				for _, ev := range tr.evs {
					if ev.Event == trace.KindEvict {
						got = append(got, clk.Since(vclock.Epoch))
					}
				}
				clk.Advance(5 * time.Second)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("evictions at %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("evictions at %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// setTaints replaces node a's taints.
func setTaints(ctx context.Context, t *testing.T, c kubernetes.Interface, taints ...v1.Taint) {
	t.Helper()
	n, err := c.CoreV1().Nodes().Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Spec.Taints = taints
	if _, err := c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
