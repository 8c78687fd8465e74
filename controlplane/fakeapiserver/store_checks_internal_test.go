package fakeapiserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestRequestChecksWithoutTheLock follows what every request checks before it takes the store
// lock (expireNow, finalizeNow): the time the first queued object expires, and whether a namespace
// may be terminating. Each must say there may be work whenever there is, or an expired event or a
// finished namespace would outlive the request that should remove it; and say there is none once
// the work is done, or every request takes the lock again.
func TestRequestChecksWithoutTheLock(t *testing.T) {
	start := time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	srv, err := New(Options{Clock: clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	defer srv.Close()
	st := srv.store
	do := func(method, path, body string, want int) {
		t.Helper()
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, httptest.NewRequest(method, path, strings.NewReader(body)))
		if w.Code != want {
			t.Fatalf("%s %s = %d %s, want %d", method, path, w.Code, w.Body, want)
		}
	}
	expiresAt := func() time.Time {
		if at := st.expiresAt.Load(); at != nil {
			return *at
		}
		return time.Time{}
	}
	if at := expiresAt(); !at.IsZero() {
		t.Errorf("expiresAt of an empty store = %v, want none", at)
	}
	do("POST", "/api/v1/namespaces/default/events", `{"metadata":{"name":"e1"},"involvedObject":{"kind":"Pod","name":"p","namespace":"default"},"reason":"Started"}`, http.StatusCreated)
	if got, want := expiresAt(), start.Add(EventTTL); !got.Equal(want) {
		t.Errorf("expiresAt after the first event = %v, want %v", got, want)
	}
	clk.Step(time.Minute)
	do("POST", "/api/v1/namespaces/default/events", `{"metadata":{"name":"e2"},"involvedObject":{"kind":"Pod","name":"p","namespace":"default"},"reason":"Started"}`, http.StatusCreated)
	if got, want := expiresAt(), start.Add(EventTTL); !got.Equal(want) {
		t.Errorf("expiresAt after a later event = %v, want the first's %v", got, want)
	}
	clk.SetTime(start.Add(EventTTL))
	do("GET", "/api/v1/namespaces/default/events/e2", "", http.StatusOK)
	do("GET", "/api/v1/namespaces/default/events/e1", "", http.StatusNotFound)
	if got, want := expiresAt(), start.Add(time.Minute+EventTTL); !got.Equal(want) {
		t.Errorf("expiresAt after the first expired = %v, want the second's %v", got, want)
	}
	clk.SetTime(start.Add(time.Minute + EventTTL))
	do("GET", "/api/v1/namespaces/default/events/e2", "", http.StatusNotFound)
	if at := expiresAt(); !at.IsZero() {
		t.Errorf("expiresAt once every event expired = %v, want none", at)
	}

	if st.terminating.Load() {
		t.Error("terminating before any namespace was deleted")
	}
	do("POST", "/api/v1/namespaces", `{"metadata":{"name":"team"}}`, http.StatusCreated)
	// A pod on a node is deleted gracefully: it stays until its kubelet (here, a delete with no
	// grace period) removes it.
	do("POST", "/api/v1/namespaces/team/pods", `{"metadata":{"name":"p"},"spec":{"nodeName":"node-1","containers":[{"name":"c","image":"busybox"}]}}`, http.StatusCreated)
	do("DELETE", "/api/v1/namespaces/team", "", http.StatusOK)
	if !st.terminating.Load() {
		t.Error("not terminating after a namespace with content was deleted")
	}
	do("GET", "/api/v1/namespaces/team", "", http.StatusOK)
	if !st.terminating.Load() {
		t.Error("not terminating while the namespace still has content")
	}
	do("DELETE", "/api/v1/namespaces/team/pods/p?gracePeriodSeconds=0", "", http.StatusOK)
	do("GET", "/api/v1/namespaces/team", "", http.StatusNotFound)
	if st.terminating.Load() {
		t.Error("terminating after the last terminating namespace was removed")
	}
}
