package nodelifecycle_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/controllers/internal/ctrltest"
	"github.com/minikubelet/minikubelet/controlplane/controllers/nodelifecycle"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// createNode creates a Ready node whose lease was renewed now.
func createNode(t *testing.T, c kubernetes.Interface, name string, now time.Time) {
	t.Helper()
	n := createBareNode(t, c, name)
	ts := metav1.NewTime(now)
	n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: ts, LastTransitionTime: ts}}
	if _, err := c.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	renew(t, c, name, now)
}

// createBareNode creates a node whose kubelet never posted a status nor a lease.
func createBareNode(t *testing.T, c kubernetes.Interface, name string) *v1.Node {
	t.Helper()
	n, err := c.CoreV1().Nodes().Create(context.Background(), &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func renew(t *testing.T, c kubernetes.Interface, name string, now time.Time) {
	t.Helper()
	ctx := context.Background()
	mt := metav1.NewMicroTime(now)
	leases := c.CoordinationV1().Leases(v1.NamespaceNodeLease)
	l, err := leases.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: v1.NamespaceNodeLease}, Spec: coordinationv1.LeaseSpec{RenewTime: &mt}}
		if _, err := leases.Create(ctx, l, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return
	}
	l.Spec.RenewTime = &mt
	if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

type nodeState struct {
	Ready  v1.ConditionStatus
	Taints []string
}

func TestHealth(t *testing.T) {
	tests := []struct {
		name string
		// peers are other nodes, renewed throughout.
		peers []string
		// renewUntil is how long node-1 keeps renewing its lease (every 10s).
		renewUntil time.Duration
		// at is when the state is checked.
		at   time.Duration
		want nodeState
		// bare makes node-1 a node that never posted a status.
		bare bool
	}{
		{"renewed lease keeps the node ready", []string{"node-2"}, 2 * time.Minute, 2 * time.Minute, nodeState{Ready: v1.ConditionTrue}, false},
		{"within the grace period", []string{"node-2"}, 10 * time.Second, 60 * time.Second, nodeState{Ready: v1.ConditionTrue}, false},
		{"after the grace period", []string{"node-2"}, 10 * time.Second, 70 * time.Second, nodeState{Ready: v1.ConditionUnknown,
			Taints: []string{"node.kubernetes.io/unreachable:NoSchedule", "node.kubernetes.io/unreachable:NoExecute"}}, false},
		{"the only node: master disruption mode, no NoExecute taint", nil, 10 * time.Second, 70 * time.Second, nodeState{Ready: v1.ConditionUnknown,
			Taints: []string{"node.kubernetes.io/unreachable:NoSchedule"}}, false},
		{"never posted a status, within the startup grace period", []string{"node-2"}, 0, 55 * time.Second, nodeState{}, true},
		{"never posted a status, after the startup grace period", []string{"node-2"}, 0, 66 * time.Second, nodeState{Ready: v1.ConditionUnknown,
			Taints: []string{"node.kubernetes.io/unreachable:NoSchedule", "node.kubernetes.io/unreachable:NoExecute"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			clk := vclock.New(vclock.Epoch)
			c := ctrltest.NewClient(t, clk)
			if tt.bare {
				createBareNode(t, c, "node-1")
			} else {
				createNode(t, c, "node-1", clk.Now())
			}
			for _, p := range tt.peers {
				createNode(t, c, p, clk.Now())
			}
			nl, err := nodelifecycle.New(nodelifecycle.Options{Clock: clk, Lister: controllers.Client{Clientset: c},
				Writer: controllers.Client{Clientset: c}, Tracer: trace.Discard})
			if err != nil {
				t.Fatal(err)
			}
			// Drive the controller as its runner does: at each wake-up, with renewals every 10s.
			end := vclock.Epoch.Add(tt.at)
			nextRenew := vclock.Epoch.Add(10 * time.Second)
			for {
				if err := nl.Sync(ctx); err != nil {
					t.Fatalf("Sync() = %v", err)
				}
				next, ok := nl.NextWake()
				if !ok {
					t.Fatal("NextWake() = false after a pass, want the next health check")
				}
				if nextRenew.Before(next) {
					next = nextRenew
				}
				if next.After(end) {
					break
				}
				clk.Set(next)
				if !clk.Now().Before(nextRenew) {
					if !tt.bare && clk.Since(vclock.Epoch) <= tt.renewUntil {
						renew(t, c, "node-1", clk.Now())
					}
					for _, p := range tt.peers {
						renew(t, c, p, clk.Now())
					}
					nextRenew = nextRenew.Add(10 * time.Second)
				}
			}
			n, err := c.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := nodeState{}
			for _, cond := range n.Status.Conditions {
				if cond.Type == v1.NodeReady {
					got.Ready = cond.Status
				}
			}
			for _, taint := range n.Spec.Taints {
				got.Taints = append(got.Taints, taint.ToString())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("node-1 at %v (-want +got):\n%s", tt.at, diff)
			}
		})
	}
}

func TestNewRequiresOptions(t *testing.T) {
	if _, err := nodelifecycle.New(nodelifecycle.Options{}); err == nil {
		t.Error("New(Options{}) = nil error, want minikubelet.ErrMissingOption")
	}
}
