package tainteviction_test

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
