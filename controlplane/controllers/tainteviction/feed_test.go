package tainteviction_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

// uidTrace records each event with the pod's UID named by the pod it belongs to ("first" or
// "second"), since UIDs differ between two runs of a scenario.
type uidTrace struct {
	names  map[string]string
	events []string
}

func (r *uidTrace) Emit(ev trace.Event) {
	uid := ev.UID
	if name, ok := r.names[uid]; ok {
		uid = name
	}
	r.events = append(r.events, string(ev.Event)+" "+ev.Pod+" "+uid+" "+ev.Delay.String()+" "+ev.Message)
}

// With a feed of changed nodes the controller tells a node whose NoExecute taints were removed
// (its pods' evictions are cancelled) from one that was deleted (forgotten, the evictions stay),
// and handles a pod created again under its name as it does reading every node: the trace is
// the same in both modes, and v1.35's.
func TestFeedDecidesAsEveryNode(t *testing.T) {
	unreachable := v1.Taint{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}
	recreate := func(ctx context.Context, t *testing.T, c kubernetes.Interface, node string, tolerationSeconds *int64) string {
		t.Helper()
		if err := c.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatal(err)
		}
		return createPod(ctx, t, c, node, tolerationSeconds)
	}
	tests := []struct {
		name string
		// change runs after the first pass and returns the UID of a pod it created, if any.
		change func(ctx context.Context, t *testing.T, c kubernetes.Interface) string
		// changed are the nodes the feed names for it.
		changed []string
		want    []string
	}{
		{
			name: "taints cleared: cancelled",
			change: func(ctx context.Context, t *testing.T, c kubernetes.Interface) string {
				setTaints(ctx, t, c)
				return ""
			},
			changed: []string{"a"},
			want: []string{
				"evict-at default/p first 5m0s ",
				"evict-cancel default/p  0s no NoExecute taints",
			},
		},
		{
			name: "node deleted: forgotten, the eviction stays",
			change: func(ctx context.Context, t *testing.T, c kubernetes.Interface) string {
				if err := c.CoreV1().Nodes().Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				return ""
			},
			changed: []string{"a"},
			want: []string{
				"evict-at default/p first 5m0s ",
				"evict default/p first 0s ",
			},
		},
		{
			name: "pod created again on an untainted node: the eviction deletes it",
			change: func(ctx context.Context, t *testing.T, c kubernetes.Interface) string {
				return recreate(ctx, t, c, "b", nil)
			},
			want: []string{
				"evict-at default/p first 5m0s ",
				"evict default/p second 0s ",
			},
		},
		{
			// processPodOnNode keeps a scheduled eviction when the new toleration counted from
			// when it was scheduled is before now plus the toleration, as it is here.
			name: "pod created again on the tainted node with a shorter toleration: processed, kept",
			change: func(ctx context.Context, t *testing.T, c kubernetes.Interface) string {
				return recreate(ctx, t, c, "a", ptr.To[int64](60))
			},
			want: []string{
				"evict-at default/p first 5m0s ",
				"evict default/p second 0s ",
			},
		},
		{
			name: "pod created again on the tainted node, tolerating for ever: cancelled",
			change: func(ctx context.Context, t *testing.T, c kubernetes.Interface) string {
				return recreate(ctx, t, c, "a", ptr.To[int64](-1))
			},
			want: []string{
				"evict-at default/p first 5m0s ",
				"evict-cancel default/p  0s tolerated for ever",
			},
		},
		{
			name: "node b deleted, node a cleared in the same pass",
			change: func(ctx context.Context, t *testing.T, c kubernetes.Interface) string {
				if err := c.CoreV1().Nodes().Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				setTaints(ctx, t, c)
				return ""
			},
			changed: []string{"a", "b"},
			want: []string{
				"evict-at default/p first 5m0s ",
				"evict-cancel default/p  0s no NoExecute taints",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var traces [2][]string
			for mode, withFeed := range []bool{false, true} {
				ctx := context.Background()
				clk := vclock.New(vclock.Epoch)
				c := ctrltest.NewClient(t, clk)
				for _, n := range []*v1.Node{
					{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: v1.NodeSpec{Taints: []v1.Taint{unreachable}}},
					{ObjectMeta: metav1.ObjectMeta{Name: "b"}},
				} {
					if _, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				rec := &uidTrace{names: map[string]string{createPod(ctx, t, c, "a", nil): "first"}}
				feed := &ctrltest.Feed{All: true}
				opts := tainteviction.Options{Clock: clk, Lister: controllers.Client{Clientset: c}, Writer: controllers.Client{Clientset: c}, Tracer: rec}
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
				if uid := tt.change(ctx, t, c); uid != "" {
					rec.names[uid] = "second"
				}
				feed.Changed = append(feed.Changed, tt.changed...)
				// A pass 5s later, as the controllers' loop runs them, then the passes at each
				// wake for an hour.
				clk.Advance(5 * time.Second)
				for {
					if err := te.Sync(ctx); err != nil {
						t.Fatalf("feed %v: Sync() = %v", withFeed, err)
					}
					next, ok := te.NextWake()
					if !ok || next.Sub(vclock.Epoch) > time.Hour {
						break
					}
					clk.Set(next)
				}
				traces[mode] = rec.events
			}
			if diff := cmp.Diff(tt.want, traces[0]); diff != "" {
				t.Errorf("every node: trace (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(traces[0], traces[1]); diff != "" {
				t.Errorf("changed nodes: trace differs from every node's (-every +changed):\n%s", diff)
			}
		})
	}
}

// createPod creates pod default/p on node, with tolerationSeconds for the unreachable taint
// when set (nil leaves the API server's 300s, -1 sets none), and returns its UID.
func createPod(ctx context.Context, t *testing.T, c kubernetes.Interface, node string, tolerationSeconds *int64) string {
	t.Helper()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
	if tolerationSeconds != nil {
		pod.Spec.Tolerations = []v1.Toleration{{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists,
			Effect: v1.TaintEffectNoExecute, TolerationSeconds: tolerationSeconds}}
		if *tolerationSeconds < 0 {
			pod.Spec.Tolerations[0].TolerationSeconds = nil
		}
	}
	got, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(got.UID)
}

// failPodsOnce fails the next read of a node's pods once fail is set.
type failPodsOnce struct {
	controllers.Client
	fail *bool
}

func (l failPodsOnce) ListPodsOnNode(ctx context.Context, node string) ([]*v1.Pod, error) {
	if *l.fail {
		*l.fail = false
		return nil, errors.New("cache unavailable")
	}
	return l.Client.ListPodsOnNode(ctx, node)
}

// A pass that fails after it took the feed's changes leaves the taints as the last complete pass
// saw them, and the next pass reads every node: the cleared node's pods still have their
// evictions cancelled.
func TestFailedPassKeepsChanges(t *testing.T) {
	ctx := context.Background()
	clk := vclock.New(vclock.Epoch)
	c := ctrltest.NewClient(t, clk)
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Spec: v1.NodeSpec{Taints: []v1.Taint{{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}}}}
	if _, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rec := &uidTrace{names: map[string]string{createPod(ctx, t, c, "a", nil): "first"}}
	feed := &ctrltest.Feed{All: true}
	fail := false
	te, err := tainteviction.New(tainteviction.Options{Clock: clk, Lister: failPodsOnce{Client: controllers.Client{Clientset: c}, fail: &fail},
		Writer: controllers.Client{Clientset: c}, Tracer: rec, Changes: feed})
	if err != nil {
		t.Fatal(err)
	}
	if err := te.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	setTaints(ctx, t, c)
	feed.Changed = []string{"a"}
	fail = true
	clk.Advance(5 * time.Second)
	if err := te.Sync(ctx); err == nil {
		t.Fatal("Sync() with a failed read of the pods = nil, want an error")
	}
	clk.Advance(5 * time.Second)
	if err := te.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"evict-at default/p first 5m0s ",
		"evict-cancel default/p  0s no NoExecute taints",
	}
	if diff := cmp.Diff(want, rec.events); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
}
