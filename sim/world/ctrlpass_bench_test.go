package world

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/test/benchfloor"
)

// BenchmarkControllersPassAfterAHeartbeat measures the controllers' pass that one node's
// heartbeat (a status write) sets off in a replay, between their periodic passes: the node
// lifecycle, taint eviction, pod GC and scheduler cores over a fleet of Ready nodes with leases,
// each pass after one node's write. The write is not timed. Its cost at 100 and 1,000 nodes
// tells whether the pass looks at what changed or at every node.
func BenchmarkControllersPassAfterAHeartbeat(b *testing.B) {
	for _, nodes := range []int{100, 1000} {
		b.Run(fmt.Sprintf("%dnodes", nodes), func(b *testing.B) {
			ctx := context.Background()
			clk := vclock.New(vclock.Epoch)
			c, err := NewCluster(clk, trace.Discard, 1)
			if err != nil {
				b.Fatal(err)
			}
			now := metav1.NewTime(clk.Now())
			renew := metav1.NewMicroTime(clk.Now())
			for i := range nodes {
				name := fmt.Sprintf("node-%d", i)
				n, err := c.client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
				if err != nil {
					b.Fatal(err)
				}
				n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}
				if _, err := c.client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
					b.Fatal(err)
				}
				lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: v1.NamespaceNodeLease}, Spec: coordinationv1.LeaseSpec{RenewTime: &renew}}
				if _, err := c.client.CoordinationV1().Leases(v1.NamespaceNodeLease).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			if err := c.StartControlPlane([]string{"nodelifecycle", "podgc", "scheduler"}, nil, 1, 1); err != nil {
				b.Fatal(err)
			}
			// The first pass: every core's periodic work is done, and next due seconds later on
			// a clock that does not move.
			c.Advance(ctx)
			floor := benchfloor.Floor(b)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				name := fmt.Sprintf("node-%d", i%nodes)
				n, err := c.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					b.Fatal(err)
				}
				// A time of its own (at the second, as the API keeps it) makes each write a change.
				n.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(clk.Now().Add(time.Duration(i+1) * time.Second))
				if _, err := c.client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
					b.Fatal(err)
				}
				if c.server.ResourceVersion() == c.rv {
					b.Fatal("the heartbeat changed nothing: no pass would follow")
				}
				b.StartTimer()
				c.Advance(ctx)
			}
			b.StopTimer()
			benchfloor.Report(b, b.Elapsed()/time.Duration(b.N), floor)
		})
	}
}
