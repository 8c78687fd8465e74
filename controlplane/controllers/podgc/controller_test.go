package podgc_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/controllers/internal/ctrltest"
	"github.com/minikubelet/minikubelet/controlplane/controllers/podgc"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

func TestCollect(t *testing.T) {
	tests := []struct {
		name      string
		node      bool // whether node n exists
		phase     v1.PodPhase
		threshold int
		at        time.Duration
		wantGone  bool
		// outOfService makes node n not Ready with the out-of-service taint, and p terminating.
		outOfService bool
	}{
		{"orphaned, within the quarantine", false, v1.PodRunning, 0, 30 * time.Second, false, false},
		{"orphaned, after the quarantine", false, v1.PodRunning, 0, 45 * time.Second, true, false},
		{"bound to a node that exists", true, v1.PodRunning, 0, 5 * time.Minute, false, false},
		{"terminated, under the threshold", true, v1.PodSucceeded, 0, time.Minute, false, false},
		{"terminated, over the threshold", true, v1.PodSucceeded, 1, 0, true, false},
		{"terminating on an out-of-service node", true, v1.PodRunning, 0, 0, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			clk := vclock.New(vclock.Epoch)
			c := ctrltest.NewClient(t, clk)
			if tt.node {
				n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
				if tt.outOfService {
					n.Spec.Taints = []v1.Taint{{Key: v1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: v1.TaintEffectNoExecute}}
				}
				if _, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			var names []string
			for _, name := range []string{"p", "q"} {
				if tt.threshold == 0 && name == "q" {
					continue
				}
				pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
					Spec: v1.PodSpec{NodeName: "n", Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
				created, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				created.Status.Phase = tt.phase
				if _, err := c.CoreV1().Pods("default").UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				names = append(names, name)
				if tt.outOfService {
					if err := c.CoreV1().Pods("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				clk.Set(clk.Now().Add(time.Second)) // p is the older
			}
			start := clk.Now()
			threshold := tt.threshold
			gc, err := podgc.New(podgc.Options{Clock: clk, Lister: controllers.Client{Clientset: c}, Writer: controllers.Client{Clientset: c},
				Tracer: trace.Discard, TerminatedPodThreshold: threshold})
			if err != nil {
				t.Fatal(err)
			}
			for {
				if err := gc.Sync(ctx); err != nil {
					t.Fatalf("Sync() = %v", err)
				}
				next, ok := gc.NextWake()
				if !ok {
					t.Fatal("NextWake() = false after a pass, want the next pass")
				}
				if next.After(start.Add(tt.at)) {
					break
				}
				clk.Set(next)
			}
			list, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var left []string
			for _, p := range list.Items {
				left = append(left, p.Name)
			}
			want := names
			if tt.wantGone {
				want = names[1:] // the oldest goes first
			}
			if len(want) == 0 {
				want = nil
			}
			if diff := cmp.Diff(want, left); diff != "" {
				t.Errorf("pods left at %v (-want +got):\n%s", tt.at, diff)
			}
		})
	}
}
