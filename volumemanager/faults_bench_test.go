package volumemanager

import (
	"math/rand/v2"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/test/benchfloor"
)

// BenchmarkRemountFaults: what asking the scripted faults adds to a pass that remounts a pod's
// two volumes (a secret and a projected one), as the pass after every SyncPod does: no script
// (`run`), an empty one (a replay's node without failVolumeOperation), and one that scripts
// another pod's volume (the map lookup each SetUp then makes).
func BenchmarkRemountFaults(b *testing.B) {
	floor := benchfloor.Floor(b)
	other := &Faults{}
	if err := other.Script("other", "creds", OpSetUp, 1); err != nil {
		b.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		faults PluginFaults
	}{{"none", nil}, {"empty", &Faults{}}, {"other-pod", other}} {
		b.Run(tt.name, func(b *testing.B) {
			w := newWorld()
			w.secrets["ns/db"] = &v1.Secret{}
			tokens, err := NewTokenManager(TokenOptions{Clock: w.clk, Tracer: w, Client: w, Rand: rand.New(rand.NewPCG(1, 1))})
			if err != nil {
				b.Fatal(err)
			}
			m, err := New(Options{Clock: w.clk, Tracer: w, Pods: w, States: w, Recorder: w, Secrets: w, ConfigMaps: w, Tokens: tokens, Faults: tt.faults})
			if err != nil {
				b.Fatal(err)
			}
			pod := secretPod("a")
			w.pods = append(w.pods, pod)
			m.PodsChanged()
			w.clk.Set(vclock.Epoch.Add(LoopPeriod))
			m.Advance()
			if got := m.mountedOnly(pod.UID); len(got) != 2 {
				b.Fatalf("mounted = %v, want both volumes", got)
			}
			b.ReportAllocs()
			for b.Loop() {
				m.ReprocessPod(pod.UID)
				w.clk.Advance(LoopPeriod)
				m.Advance()
			}
			if len(w.events) != 0 {
				b.Fatalf("events = %v, want no failure", w.events)
			}
			benchfloor.Report(b, b.Elapsed()/time.Duration(b.N), floor)
		})
	}
}
