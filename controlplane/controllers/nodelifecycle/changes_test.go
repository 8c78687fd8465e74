package nodelifecycle_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/controllers/internal/ctrltest"
	"github.com/minikubelet/minikubelet/controlplane/controllers/nodelifecycle"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

type taintEvents struct{ events []string }

func (r *taintEvents) Emit(ev trace.Event) {
	if ev.Event == trace.KindTaint || ev.Event == trace.KindUntaint {
		r.events = append(r.events, string(ev.Event)+" "+ev.Pod+" "+ev.Reason)
	}
}

// Between health checks the taint pass looks at the nodes that changed, those whose NoExecute
// taint is due and those whose last update failed, and decides what looking at every node
// decides: the same taints, in the same order, a failed update taken again at the next pass
// although its node did not change.
func TestTaintPassReadsChangedNodes(t *testing.T) {
	ctx := context.Background()
	type step struct {
		name   string
		change func(t *testing.T, c kubernetes.Interface, f *ctrltest.Feed)
		// failing is the node whose updates fail in this pass.
		failing string
		// wantGets are the nodes the pass reads with a feed.
		wantGets []string
	}
	cordon := func(name string, on bool) func(*testing.T, kubernetes.Interface, *ctrltest.Feed) {
		return func(t *testing.T, c kubernetes.Interface, f *ctrltest.Feed) {
			n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			n.Spec.Unschedulable = on
			if _, err := c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			f.Add(name)
		}
	}
	steps := []step{
		{name: "first pass", change: func(*testing.T, kubernetes.Interface, *ctrltest.Feed) {}},
		{name: "node-3 cordoned", change: cordon("node-3", true), wantGets: []string{"node-3"}},
		{name: "its own write", change: func(*testing.T, kubernetes.Interface, *ctrltest.Feed) {}, wantGets: []string{"node-3"}},
		{name: "node-2 cordoned, its update fails", change: cordon("node-2", true), failing: "node-2", wantGets: []string{"node-2"}},
		{name: "retried", change: func(*testing.T, kubernetes.Interface, *ctrltest.Feed) {}, wantGets: []string{"node-2"}},
		{name: "both uncordoned", change: func(t *testing.T, c kubernetes.Interface, f *ctrltest.Feed) {
			cordon("node-3", false)(t, c, f)
			cordon("node-2", false)(t, c, f)
		}, wantGets: []string{"node-2", "node-3"}},
		{name: "nothing", change: func(*testing.T, kubernetes.Interface, *ctrltest.Feed) {}, wantGets: []string{"node-2", "node-3"}},
		{name: "still nothing", change: func(*testing.T, kubernetes.Interface, *ctrltest.Feed) {}},
	}
	var traces [2][]string
	for mode, withFeed := range []bool{false, true} {
		clk := vclock.New(vclock.Epoch)
		c := ctrltest.NewClient(t, clk)
		for _, n := range []string{"node-1", "node-2", "node-3", "node-4"} {
			createNode(t, c, n, clk.Now())
		}
		feed := &ctrltest.Feed{All: true}
		client := &ctrltest.CountingClient{Client: controllers.Client{Clientset: c}, Feed: feed}
		rec := &taintEvents{}
		opts := nodelifecycle.Options{Clock: clk, Lister: client, Writer: client, Tracer: rec}
		if withFeed {
			opts.Changes = feed
		}
		nl, err := nodelifecycle.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range steps {
			// Within the monitor period: only the first pass checks health.
			clk.Set(vclock.Epoch.Add(time.Duration(i) * 500 * time.Millisecond))
			s.change(t, c, feed)
			client.FailUpdate = s.failing
			client.Reset()
			err := nl.Sync(ctx)
			if (err != nil) != (s.failing != "") {
				t.Fatalf("feed %v, %s: Sync() = %v, want an error: %v", withFeed, s.name, err, s.failing != "")
			}
			if !withFeed || i == 0 {
				continue
			}
			if client.Lists != 0 {
				t.Errorf("%s: %d lists of the nodes, want none between health checks", s.name, client.Lists)
			}
			if diff := cmp.Diff(s.wantGets, client.Gets); diff != "" {
				t.Errorf("%s: nodes read (-want +got):\n%s", s.name, diff)
			}
		}
		traces[mode] = rec.events
	}
	want := []string{
		"taint node-3 node.kubernetes.io/unschedulable:NoSchedule",
		"taint node-2 node.kubernetes.io/unschedulable:NoSchedule",
		"untaint node-2 node.kubernetes.io/unschedulable:NoSchedule",
		"untaint node-3 node.kubernetes.io/unschedulable:NoSchedule",
	}
	ctrltest.WantTraces(t, want, traces, [2]string{"every node", "changed nodes"})
}
