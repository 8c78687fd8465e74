package nodestatus_test

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/nodestatus"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/test/benchfloor"
)

// directClient writes the node and its lease in process, as replay's node writes do while the
// node's link is up (sim/world.NodeWrites): the fake API server stands in for kube-apiserver.
type directClient struct{ d *fakeapiserver.Direct }

func (c directClient) GetNode(ctx context.Context, name string) (*v1.Node, error) {
	return c.d.GetNodeView(ctx, name)
}

func (c directClient) CreateNode(ctx context.Context, node *v1.Node) (*v1.Node, error) {
	return c.d.CreateNode(ctx, node)
}

func (c directClient) PatchNodeStatus(ctx context.Context, original, node *v1.Node) (*v1.Node, error) {
	return nodestatus.PatchStatus(original, node, func(patch []byte) (*v1.Node, error) {
		return c.d.PatchNodeStatus(ctx, node.Name, types.StrategicMergePatchType, patch)
	})
}

func (c directClient) GetLease(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	return c.d.GetLease(ctx, namespace, name)
}

func (c directClient) CreateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	return c.d.CreateLease(ctx, lease)
}

func (c directClient) UpdateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	return c.d.UpdateLeaseView(ctx, lease)
}

type readyState struct{}

func (readyState) Errors() error                   { return nil }
func (readyState) UpdateRuntimeUp(context.Context) {}

// BenchmarkHeartbeat measures a registered, Ready node's heartbeat as a fleet's replay runs it,
// against the fake API server in process: one iteration is ten virtual seconds, a lease renewal
// and a node status update (which writes the status only when it changed or the report period
// of five minutes, with its random delay, has passed), after the node's first two minutes. The
// floor ratio is the cost of one iteration against the decode floor.
func BenchmarkHeartbeat(b *testing.B) {
	ctx := context.Background()
	clk := vclock.New(vclock.Epoch)
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clk, Tracer: trace.Discard})
	if err != nil {
		b.Fatal(err)
	}
	s, err := nodestatus.New(nodestatus.Options{NodeName: "node-1", NodeIP: "192.168.0.10", Clock: clk, Tracer: trace.Discard,
		Client: directClient{srv.Direct(rest.DefaultKubernetesUserAgent())}, RuntimeState: readyState{}})
	if err != nil {
		b.Fatal(err)
	}
	step := func() {
		if err := s.Register(ctx); err != nil {
			b.Fatal(err)
		}
		if err := s.Heartbeat(ctx); err != nil {
			b.Fatal(err)
		}
		next, _ := s.NextWake()
		clk.Set(next)
	}
	for clk.Since(vclock.Epoch) < 2*time.Minute {
		step()
	}
	floor := benchfloor.Floor(b)
	b.ReportAllocs()
	for b.Loop() {
		for end := clk.Now().Add(nodestatus.StatusPeriod); clk.Now().Before(end); {
			step()
		}
	}
	benchfloor.Report(b, b.Elapsed()/time.Duration(b.N), floor)
}
