package fakeapiserver

import (
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// lockProbeClock is the server's clock, and tells whether the store lock is held each time the
// field manager's entries are stamped (stampManagedFields reads the clock right after the field
// manager ran). The test drives the server from one goroutine, so the lock is held only by the
// request being served.
type lockProbeClock struct {
	*vclock.Clock
	srv             *Server
	stamps, underMu atomic.Int32
}

func (c *lockProbeClock) Now() time.Time {
	pcs := make([]uintptr, 16)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, ".stampManagedFields") {
			c.stamps.Add(1)
			if c.srv.store.mu.TryLock() {
				c.srv.store.mu.Unlock()
			} else {
				c.underMu.Add(1)
			}
			break
		}
		if !more {
			break
		}
	}
	return c.Clock.Now()
}

// TestFieldManagerRunsOutsideTheStoreLock writes an object by create, update, patch and status
// update: the field manager, whose cost grows with the managed fields a request carries (15 s of
// CPU for 15,000 entries), never runs while the store lock is held, so that other writes do not
// wait for it.
func TestFieldManagerRunsOutsideTheStoreLock(t *testing.T) {
	clk := &lockProbeClock{Clock: vclock.New(vclock.Epoch)}
	srv, err := New(Options{Clock: clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	clk.srv = srv
	h := srv.Handler()
	for _, req := range []struct{ method, path, contentType, body string }{
		{"POST", "/api/v1/nodes", "application/json", `{"metadata":{"name":"n1"}}`},
		{"PUT", "/api/v1/nodes/n1", "application/json", `{"metadata":{"name":"n1","labels":{"a":"1"}}}`},
		{"PATCH", "/api/v1/nodes/n1", "application/merge-patch+json", `{"metadata":{"labels":{"b":"2"}}}`},
		{"PUT", "/api/v1/nodes/n1/status", "application/json", `{"metadata":{"name":"n1"},"status":{"phase":"Running"}}`},
	} {
		r := httptest.NewRequest(req.method, req.path, strings.NewReader(req.body))
		r.Header.Set("Content-Type", req.contentType)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 300 {
			t.Fatalf("%s %s = %d %s", req.method, req.path, w.Code, w.Body)
		}
	}
	if clk.stamps.Load() < 4 {
		t.Fatalf("the field manager ran %d times, want at least once per write", clk.stamps.Load())
	}
	if n := clk.underMu.Load(); n > 0 {
		t.Errorf("the field manager ran %d of %d times with the store lock held", n, clk.stamps.Load())
	}
}
