package ctrltest

import (
	"context"
	"slices"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/google/go-cmp/cmp"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// NewClient starts a fake API server on clk and returns a clientset whose requests it serves in
// process, without a rate limit (QPS -1), so that a test's writes never wait.
func NewClient(t testing.TB, clk *vclock.Clock) kubernetes.Interface {
	t.Helper()
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: srv.Transport(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Feed is a node informer's event handler for a test (controllers.NodeFeed): the names of the
// nodes the test changed since the last pass, or All after a relist.
type Feed struct {
	All     bool
	Changed []string
}

// Add notes that the named node changed.
func (f *Feed) Add(name string) { f.Changed = append(f.Changed, name) }

// ChangedNodes answers All once, then the changed names, sorted and without repeats, each once.
func (f *Feed) ChangedNodes(context.Context) ([]string, bool, error) {
	if f.All {
		f.All, f.Changed = false, nil
		return nil, true, nil
	}
	names := slices.Compact(slices.Sorted(slices.Values(f.Changed)))
	f.Changed = nil
	return names, false, nil
}

// WantTraces checks that both modes' traces, a controller reading everything (traces[0], named
// modes[0]) and one reading only what changed (traces[1]), are want: the two must decide alike.
func WantTraces(t testing.TB, want []string, traces [2][]string, modes [2]string) {
	t.Helper()
	for mode, name := range modes {
		if diff := cmp.Diff(want, traces[mode]); diff != "" {
			t.Errorf("%s: trace (-want +got):\n%s", name, diff)
		}
	}
}
