package pluginmanager

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// The kubelet's TestMetricCollection: one path in each cache gives two states counting 1.
func TestTotalPlugins(t *testing.T) {
	m, err := New(Options{Clock: vclock.New(time.Unix(0, 0)), Tracer: trace.Discard, NewID: counter()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Desired().AddOrUpdatePlugin("/r/a.sock"); err != nil {
		t.Fatal(err)
	}
	if err := m.Actual().AddPlugin(PluginInfo{SocketPath: "/r/b.sock", ID: "x"}); err != nil {
		t.Fatal(err)
	}
	want := []Sample{{SocketPath: "/r/b.sock", State: StateActual, Value: 1}, {SocketPath: "/r/a.sock", State: StateDesired, Value: 1}}
	if diff := cmp.Diff(want, m.TotalPlugins()); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
}
