package scheduler_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/controllers/internal/ctrltest"
	"github.com/minikubelet/minikubelet/controlplane/controllers/scheduler"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// testChanges are the informers' event handlers for a test: what the test says changed.
type testChanges struct {
	nodes, podNodes       []string
	allNodes, allPodNodes bool
}

func take(names *[]string, all *bool) ([]string, bool, error) {
	if *all {
		*all, *names = false, nil
		return nil, true, nil
	}
	out := slices.Compact(slices.Sorted(slices.Values(*names)))
	*names = nil
	return out, false, nil
}

func (c *testChanges) ChangedNodes(context.Context) ([]string, bool, error) {
	return take(&c.nodes, &c.allNodes)
}

func (c *testChanges) ChangedPodNodes(context.Context) ([]string, bool, error) {
	return take(&c.podNodes, &c.allPodNodes)
}

type schedulingEvents struct{ events []string }

func (r *schedulingEvents) Emit(ev trace.Event) {
	r.events = append(r.events, string(ev.Event)+" "+ev.Pod+" "+ev.To+" "+ev.Message)
}

// With feeds of what changed, the scheduler keeps what the bound pods use from the nodes whose
// pods changed and decides what reading every pod at every pass decides: a waiting pod is not
// tried again for a heartbeat that changes nothing it depends on, and is when a node's pods
// free room for it.
func TestUsageFollowsChangedPods(t *testing.T) {
	ctx := context.Background()
	cpu := func(q string) v1.ResourceList { return v1.ResourceList{v1.ResourceCPU: resource.MustParse(q)} }
	createPod := func(t *testing.T, c kubernetes.Interface, name, node, req string) {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "c", Image: "busybox", Resources: v1.ResourceRequirements{Requests: cpu(req)}}}}}
		if _, err := c.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name            string
		change          func(*testing.T, kubernetes.Interface)
		nodes, podNodes []string
		wantLists       int
		wantOnNodes     []string
	}{
		{name: "q waits", change: func(t *testing.T, c kubernetes.Interface) { createPod(t, c, "q", "", "1500m") }, wantLists: 1},
		{name: "a heartbeat", change: func(t *testing.T, c kubernetes.Interface) {
			n, err := c.CoreV1().Nodes().Get(ctx, "a", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}
			if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}, nodes: []string{"a"}},
		{name: "another pod on a", change: func(t *testing.T, c kubernetes.Interface) { createPod(t, c, "p3", "a", "100m") },
			podNodes: []string{"a"}, wantOnNodes: []string{"a"}},
		{name: "b's pod goes", change: func(t *testing.T, c kubernetes.Interface) {
			zero := int64(0)
			if err := c.CoreV1().Pods("default").Delete(ctx, "p2", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
				t.Fatal(err)
			}
		}, podNodes: []string{"b"}, wantOnNodes: []string{"b"}},
	}
	var traces [2][]string
	for mode, withChanges := range []bool{false, true} {
		clk := vclock.New(vclock.Epoch)
		c := ctrltest.NewClient(t, clk)
		for _, name := range []string{"a", "b"} {
			created, err := c.CoreV1().Nodes().Create(ctx, node(name, nil), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			created.Status = node(name, nil).Status
			if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		createPod(t, c, "p1", "a", "1")
		createPod(t, c, "p2", "b", "1500m")
		changes := &testChanges{allNodes: true, allPodNodes: true}
		lister := &ctrltest.CountingClient{Client: controllers.Client{Clientset: c}}
		rec := &schedulingEvents{}
		opts := scheduler.Options{Clock: clk, Lister: lister,
			Writer: controllers.Client{Clientset: c}, Tracer: rec}
		if withChanges {
			opts.Changes = changes
		}
		s, err := scheduler.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range steps {
			st.change(t, c)
			changes.nodes = append(changes.nodes, st.nodes...)
			changes.podNodes = append(changes.podNodes, st.podNodes...)
			lister.Reset()
			if err := s.Sync(ctx); err != nil {
				t.Fatalf("%s: Sync() = %v", st.name, err)
			}
			if !withChanges {
				continue
			}
			if lister.PodLists != st.wantLists {
				t.Errorf("%s: %d lists of every pod, want %d", st.name, lister.PodLists, st.wantLists)
			}
			if diff := cmp.Diff(st.wantOnNodes, lister.PodNodes); diff != "" {
				t.Errorf("%s: nodes whose pods were read (-want +got):\n%s", st.name, diff)
			}
		}
		traces[mode] = rec.events
	}
	want := []string{
		"unschedulable default/q  0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
		"unschedulable default/q  0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
		"bind default/q b ",
	}
	ctrltest.WantTraces(t, want, traces, [2]string{"every pod", "changed pods"})
}
