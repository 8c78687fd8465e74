package fakeapiserver

import (
	"context"
	"math/rand"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/apf"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestStoreSurvivesTracerPanic: a tracer whose Emit panics once (a recovered panic, as
// serveHTTP and Direct.do recover them) must not leave every later store lock holder waiting
// for a batch that will never be marked emitted. With sync.Mutex and Emit under the lock, the
// deferred Unlock released the store.
func TestStoreSurvivesTracerPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first := true
		st := newStore(storeOptions{rand: rand.New(rand.NewSource(1)), tracer: trace.Func(func(trace.Event) {
			if first {
				first = false
				panic("tracer")
			}
		})})
		func() {
			defer func() { _ = recover() }()
			_ = st.lockedAs(context.Background(), apf.Class{}, func() error {
				st.traceLater(trace.Event{Pod: "default/p"})
				return nil
			})
		}()
		var wg sync.WaitGroup
		done := false
		wg.Go(func() { st.currentRV(); done = true })
		synctest.Wait()
		if !done {
			t.Error("after a recovered panic in the tracer, the next store lock holder waits forever in traceOrder.emit")
			st.order.markDone(1)
		}
		wg.Wait()
	})
}
