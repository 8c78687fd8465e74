package sources

import (
	"errors"
	"strings"
	"testing"

	"github.com/minikubelet/minikubelet/test/podtest"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
)

func boundPod(name, node string) *v1.Pod { return podtest.New(name, podtest.Node(node)) }

// TestRouterStore: each node sees what its own field-selected watch would show: its share of a
// relist (an empty one too), its pods' changes, a pod leaving it as a delete, nothing of the
// pods bound elsewhere.
func TestRouterStore(t *testing.T) {
	outs := map[string]chan podconfig.Update{"a": make(chan podconfig.Update, 10), "b": make(chan podconfig.Update, 10)}
	nodes := map[string]SharedAPINode{}
	for name, ch := range outs {
		core, err := NewAPI(APIOptions{Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		nodes[name] = SharedAPINode{Core: core, Out: ch}
	}
	r, err := NewSharedAPIRunner(SharedAPIRunnerOptions{Client: fake.NewClientset(), Clock: clock.RealClock{}, Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	s := r.store
	steps := []func() error{
		func() error { return s.Replace([]any{boundPod("p1", "a"), boundPod("p2", "elsewhere")}, "1") },
		func() error { return s.Add(boundPod("p3", "b")) },
		func() error { return s.Add(boundPod("p4", "")) },     // unscheduled: nobody's
		func() error { return s.Update(boundPod("p4", "b")) }, // bound to b
		func() error { return s.Update(boundPod("p3", "a")) }, // moves: b loses it, a gets it
		func() error { return s.Delete(boundPod("p1", "a")) },
		func() error { return s.Delete(boundPod("p2", "elsewhere")) },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	got := map[string][]string{}
	for name, ch := range outs {
		close(ch)
		for u := range ch {
			var names []string
			for _, p := range u.Pods {
				names = append(names, p.Name)
			}
			got[name] = append(got[name], "["+strings.Join(names, " ")+"]")
		}
	}
	want := map[string][]string{
		"a": {"[p1]", "[p1 p3]", "[p3]"},
		"b": {"[]", "[p3]", "[p3 p4]", "[p4]"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SETs per node (-want +got):\n%s", diff)
	}
}

func TestSharedAPIRunnerOptions(t *testing.T) {
	if _, err := NewSharedAPIRunner(SharedAPIRunnerOptions{}); !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Errorf("NewSharedAPIRunner({}) = %v, want minikubelet.ErrMissingOption", err)
	}
}
