package nodelifecycle_test

import (
	"context"
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/controllers/internal/ctrltest"
	"github.com/minikubelet/minikubelet/controlplane/controllers/nodelifecycle"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// listFailing fails the failOn-th list of the nodes (1-based).
type listFailing struct {
	controllers.Client
	n      *int
	failOn int
}

func (c listFailing) ListNodes(ctx context.Context) ([]*v1.Node, error) {
	*c.n++
	if *c.n == c.failOn {
		return nil, errors.New("list refused")
	}
	return c.Client.ListNodes(ctx)
}

// When the taint pass's list fails after the feed answered "all", the feed has let go of
// "all": the next pass must still list every node, so that a cordoned node that does not change
// again is tainted with a feed as it is without one.
func TestAllThenListFailsListsAgain(t *testing.T) {
	ctx := context.Background()
	var traces [2][]string
	for mode, withFeed := range []bool{false, true} {
		clk := vclock.New(vclock.Epoch)
		c := ctrltest.NewClient(t, clk)
		createNode(t, c, "node-1", clk.Now())
		n, err := c.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Spec.Unschedulable = true
		if _, err := c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		var lists int
		// The first Sync lists for the health check (1), then for the taint pass (2).
		client := listFailing{Client: controllers.Client{Clientset: c}, n: &lists, failOn: 2}
		rec := &taintEvents{}
		opts := nodelifecycle.Options{Clock: clk, Lister: client, Writer: client, Tracer: rec}
		if withFeed {
			opts.Changes = &ctrltest.Feed{All: true}
		}
		nl, err := nodelifecycle.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 14; i++ {
			clk.Set(vclock.Epoch.Add(time.Duration(i) * 500 * time.Millisecond))
			_ = nl.Sync(ctx)
		}
		traces[mode] = rec.events
	}
	if len(traces[0]) == 0 {
		t.Fatalf("without a feed: no taint at all")
	}
	if len(traces[1]) != len(traces[0]) {
		t.Errorf("with a feed: taints %v, without: %v", traces[1], traces[0])
	}
}
