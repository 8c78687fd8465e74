package tainteviction_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/controllers/internal/ctrltest"
	"github.com/minikubelet/minikubelet/controlplane/controllers/tainteviction"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

type evictionEvents struct{ events []string }

func (r *evictionEvents) Emit(ev trace.Event) {
	r.events = append(r.events, string(ev.Event)+" "+ev.Pod+" "+ev.Delay.String()+" "+ev.Message)
}

// With a feed of changed nodes the controller keeps each node's NoExecute taints from the nodes
// that changed, and decides what reading every node at every pass decides; a failed read of a
// changed node makes the next pass read every node.
func TestNodeTaintsFollowChangedNodes(t *testing.T) {
	ctx := context.Background()
	taint := func(name string, on bool) func(*testing.T, kubernetes.Interface) {
		return func(t *testing.T, c kubernetes.Interface) {
			n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			n.Spec.Taints = nil
			if on {
				n.Spec.Taints = []v1.Taint{{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}}
			}
			if _, err := c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	nothing := func(*testing.T, kubernetes.Interface) {}
	steps := []struct {
		name    string
		change  func(*testing.T, kubernetes.Interface)
		changed []string
		failing string
		// wantLists and wantGets are the reads of a pass with the feed.
		wantLists int
		wantGets  []string
	}{
		{name: "first pass", change: nothing, wantLists: 1},
		{name: "n1 tainted", change: taint("n1", true), changed: []string{"n1"}, wantGets: []string{"n1"}},
		{name: "nothing changed", change: nothing},
		{name: "n2 tainted, its read fails", change: taint("n2", true), changed: []string{"n2"}, failing: "n2", wantGets: []string{"n2"}},
		{name: "read again", change: nothing, wantLists: 1},
		{name: "n1 untainted", change: taint("n1", false), changed: []string{"n1"}, wantGets: []string{"n1"}},
	}
	var traces [2][]string
	for mode, withFeed := range []bool{false, true} {
		clk := vclock.New(vclock.Epoch)
		c := ctrltest.NewClient(t, clk)
		for _, n := range []string{"n1", "n2", "n3"} {
			if _, err := c.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-" + n, Namespace: "default"},
				Spec: v1.PodSpec{NodeName: n, Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
			if _, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		feed := &ctrltest.Feed{All: true}
		lister := &ctrltest.CountingClient{Client: controllers.Client{Clientset: c}}
		rec := &evictionEvents{}
		opts := tainteviction.Options{Clock: clk, Lister: lister,
			Writer: controllers.Client{Clientset: c}, Tracer: rec}
		if withFeed {
			opts.Changes = feed
		}
		te, err := tainteviction.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range steps {
			s.change(t, c)
			feed.Changed = append(feed.Changed, s.changed...)
			lister.FailGet = s.failing
			lister.Reset()
			if err := te.Sync(ctx); (err != nil) != (withFeed && s.failing != "") {
				t.Fatalf("feed %v, %s: Sync() = %v", withFeed, s.name, err)
			}
			if !withFeed {
				continue
			}
			if lister.Lists != s.wantLists {
				t.Errorf("%s: %d lists of the nodes, want %d", s.name, lister.Lists, s.wantLists)
			}
			if diff := cmp.Diff(s.wantGets, lister.Gets); diff != "" {
				t.Errorf("%s: nodes read (-want +got):\n%s", s.name, diff)
			}
		}
		traces[mode] = rec.events
	}
	want := []string{
		"evict-at default/p-n1 5m0s ",
		"evict-at default/p-n2 5m0s ",
		"evict-cancel default/p-n1 0s no NoExecute taints",
	}
	ctrltest.WantTraces(t, want, traces, [2]string{"every node", "changed nodes"})
}
