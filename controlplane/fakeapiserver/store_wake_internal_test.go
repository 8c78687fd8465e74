package fakeapiserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestWriteWakesOnlyItsResourcesWatches: a write wakes the watches waiting on its own resource,
// not those of every resource, so that a fleet's Service and ConfigMap watches do not all take
// the store's lock at every pod write; CloseWatches still wakes them all.
func TestWriteWakesOnlyItsResourcesWatches(t *testing.T) {
	srv, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	defer srv.Close()
	st := srv.store
	wait := func(name string) <-chan struct{} {
		_, _, _, next := st.since(st.resource(name), st.currentRV(), watchBatch, st.epoch)
		return next
	}
	woken := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	post := func(path, body string) {
		t.Helper()
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
		if w.Code != http.StatusCreated {
			t.Fatalf("POST %s = %d %s", path, w.Code, w.Body)
		}
	}
	services, pods := wait("services"), wait("pods")
	post("/api/v1/namespaces/default/pods", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`)
	if !woken(pods) {
		t.Error("a pod write did not wake a pod watch")
	}
	if woken(services) {
		t.Error("a pod write woke a Service watch")
	}
	post("/api/v1/namespaces/default/services", `{"metadata":{"name":"s"},"spec":{"ports":[{"port":80}]}}`)
	if !woken(services) {
		t.Error("a Service write did not wake a Service watch")
	}
	services, pods = wait("services"), wait("pods")
	if err := st.locked(func() error { st.closeWatches(); return nil }); err != nil {
		t.Fatal(err)
	}
	if !woken(services) || !woken(pods) {
		t.Errorf("closeWatches woke services %v, pods %v; want both", woken(services), woken(pods))
	}
}
