package pluginmanager

import (
	"context"
	"strconv"
	"testing"
	"time"

	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// BenchmarkReconcile measures one reconciler pass over n registered sockets with nothing to do:
// the steady state the kubelet pays every second.
func BenchmarkReconcile(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			clk := vclock.New(time.Unix(0, 0))
			m, err := New(Options{Clock: clk, Tracer: trace.Discard, NewID: counter()})
			if err != nil {
				b.Fatal(err)
			}
			m.AddHandler(registerapi.DevicePlugin, &fakeHandler{})
			d := &fakeDialer{plugins: map[string]*fakePlugin{}}
			for i := range n {
				path := "/r/p" + strconv.Itoa(i) + ".sock"
				d.plugins[path] = &fakePlugin{info: &registerapi.PluginInfo{Type: registerapi.DevicePlugin, Name: "example.com/r" + strconv.Itoa(i), SupportedVersions: []string{"v1beta1"}}}
				if _, err := m.Desired().AddOrUpdatePlugin(path); err != nil {
					b.Fatal(err)
				}
			}
			env := Env{Dialer: d, Books: m.Actual(), Tracer: trace.Discard}
			for _, op := range m.Reconcile() {
				m.Finish(op, RunOperation(context.Background(), op, env))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				clk.Advance(LoopPeriod)
				if ops := m.Reconcile(); len(ops) != 0 {
					b.Fatalf("steady state started %d operations", len(ops))
				}
			}
		})
	}
}
