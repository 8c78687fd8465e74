package nodelifecycle_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/controllers/internal/ctrltest"
	"github.com/minikubelet/minikubelet/controlplane/controllers/nodelifecycle"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// failingLister fails the reads of one node's pods while failing is set.
type failingLister struct {
	controllers.Client
	node    string
	failing *bool
}

func (l failingLister) ListPodsOnNode(ctx context.Context, node string) ([]*v1.Pod, error) {
	if *l.failing && node == l.node {
		return nil, errors.New("index unavailable")
	}
	return l.Client.ListPodsOnNode(ctx, node)
}

type notReadyEvents struct{ pods []string }

func (r *notReadyEvents) Emit(ev trace.Event) {
	if ev.Event == trace.KindNotReady {
		r.pods = append(r.pods, ev.Pod)
	}
}

// Two nodes stop renewing at once and the read of the first one's pods fails: as
// monitorNodeHealth, the second node's pods are still marked not ready in that pass, and the
// first one's at the next pass, once the read works.
func TestFailedPodReadSkipsOnlyItsNodeAndRetries(t *testing.T) {
	ctx := context.Background()
	clk := vclock.New(vclock.Epoch)
	c := ctrltest.NewClient(t, clk)
	for _, n := range []string{"node-1", "node-2", "node-3"} {
		createNode(t, c, n, clk.Now())
	}
	for _, n := range []string{"node-1", "node-2"} {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-" + n, Namespace: "default"},
			Spec: v1.PodSpec{NodeName: n, Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
		created, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}
		if _, err := c.CoreV1().Pods("default").UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	failing := true
	rec := &notReadyEvents{}
	nl, err := nodelifecycle.New(nodelifecycle.Options{Clock: clk,
		Lister: failingLister{Client: controllers.Client{Clientset: c}, node: "node-1", failing: &failing},
		Writer: controllers.Client{Clientset: c}, Tracer: rec})
	if err != nil {
		t.Fatal(err)
	}
	// node-3 renews every 10s; node-1 and node-2 never do, and turn Unknown after the grace
	// period. Drive the controller at its wake-ups until a pass fails.
	nextRenew := vclock.Epoch.Add(10 * time.Second)
	for nl.Sync(ctx) == nil {
		if clk.Since(vclock.Epoch) > 5*time.Minute {
			t.Fatal("no pass failed within 5m, want node-1's pod read to fail once it is not ready")
		}
		next, ok := nl.NextWake()
		if !ok {
			t.Fatal("NextWake() = false after a pass")
		}
		if nextRenew.Before(next) {
			next = nextRenew
		}
		clk.Set(next)
		if !clk.Now().Before(nextRenew) {
			renew(t, c, "node-3", clk.Now())
			nextRenew = nextRenew.Add(10 * time.Second)
		}
	}
	if diff := cmp.Diff([]string{"default/p-node-2"}, rec.pods); diff != "" {
		t.Fatalf("pods marked not ready in the failing pass (-want +got):\n%s", diff)
	}
	failing = false
	rec.pods = nil
	// The next health check is a monitor period (5s) later; a tainting pass may come first.
	check := clk.Now().Add(5 * time.Second)
	for clk.Now().Before(check) {
		next, ok := nl.NextWake()
		if !ok {
			t.Fatal("NextWake() = false after a pass")
		}
		clk.Set(next)
		if err := nl.Sync(ctx); err != nil {
			t.Fatalf("Sync() = %v", err)
		}
	}
	if diff := cmp.Diff([]string{"default/p-node-1"}, rec.pods); diff != "" {
		t.Errorf("pods marked not ready in the next pass (-want +got):\n%s", diff)
	}
}
