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

// A node added without NoExecute taints goes through NodeUpdated(nil, node), which always
// queues it, and handleNodeUpdate then cancels the eviction of every pod assigned to it: a
// tainted node deleted and created again untainted, or a pod created again under its name on a
// node created later, keeps no eviction. Both with and without a feed of changed nodes.
func TestNodeAddedUntaintedCancels(t *testing.T) {
	unreachable := []v1.Taint{{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}}
	createNode := func(ctx context.Context, t *testing.T, c kubernetes.Interface, name string, taints []v1.Taint) {
		t.Helper()
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.NodeSpec{Taints: taints}}
		if _, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deleteNode := func(ctx context.Context, t *testing.T, c kubernetes.Interface, name string) {
		t.Helper()
		if err := c.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		// steps run before the second and later passes, each with the nodes the feed names.
		steps []func(ctx context.Context, t *testing.T, c kubernetes.Interface)
		fed   [][]string
	}{
		{
			name: "node deleted, then created again untainted",
			steps: []func(ctx context.Context, t *testing.T, c kubernetes.Interface){
				func(ctx context.Context, t *testing.T, c kubernetes.Interface) { deleteNode(ctx, t, c, "a") },
				func(ctx context.Context, t *testing.T, c kubernetes.Interface) { createNode(ctx, t, c, "a", nil) },
			},
			fed: [][]string{{"a"}, {"a"}},
		},
		{
			name: "node deleted and created again untainted between two passes",
			steps: []func(ctx context.Context, t *testing.T, c kubernetes.Interface){
				func(ctx context.Context, t *testing.T, c kubernetes.Interface) {
					deleteNode(ctx, t, c, "a")
					createNode(ctx, t, c, "a", nil)
				},
			},
			fed: [][]string{{"a"}},
		},
		{
			name: "pod created again on a node created untainted later",
			steps: []func(ctx context.Context, t *testing.T, c kubernetes.Interface){
				func(ctx context.Context, t *testing.T, c kubernetes.Interface) {
					if err := c.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
						t.Fatal(err)
					}
					createPod(ctx, t, c, "b", nil)
				},
				func(ctx context.Context, t *testing.T, c kubernetes.Interface) { createNode(ctx, t, c, "b", nil) },
			},
			fed: [][]string{nil, {"b"}},
		},
	}
	for _, tt := range tests {
		for _, withFeed := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: ", every node", true: ", feed"}[withFeed], func(t *testing.T) {
				ctx := context.Background()
				clk := vclock.New(vclock.Epoch)
				c := ctrltest.NewClient(t, clk)
				createNode(ctx, t, c, "a", unreachable)
				createPod(ctx, t, c, "a", nil)
				tr := &collect{}
				opts := tainteviction.Options{Clock: clk, Lister: controllers.Client{Clientset: c}, Writer: controllers.Client{Clientset: c}, Tracer: tr}
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
				for i, step := range tt.steps {
					step(ctx, t, c)
					feed.Changed = tt.fed[i]
					if err := te.Sync(ctx); err != nil {
						t.Fatal(err)
					}
				}
				if diff := cmp.Diff([]string{"no NoExecute taints"}, cancels(tr)); diff != "" {
					t.Errorf("cancel messages (-want +got):\n%s", diff)
				}
				if got := runUntilEvicted(t, te, clk, tr); got != "" {
					t.Errorf("pod %s evicted; handleNodeUpdate of the added node cancels its eviction", got)
				}
			})
		}
	}
}
