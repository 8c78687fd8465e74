package fakeapiserver

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// queueThenCancel holds the store lock, starts run, waits until its request is queued for the
// lock, ends its context, and only then releases the lock: the request's client gave up while it
// waited in its priority level's queue.
func queueThenCancel(t *testing.T, srv *Server, run func(ctx context.Context)) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	srv.store.lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx)
	}()
	for srv.store.mu.Waiting() < 1 {
		runtime.Gosched()
	}
	cancel()
	// The waiter leaves the queue on its own: the lock's holder need not let go for that.
	for srv.store.mu.Waiting() > 0 {
		runtime.Gosched()
	}
	srv.store.mu.Unlock()
	<-done
}

// TestQueuedRequestWhoseContextEnded: kube-apiserver ejects a request whose context ends while
// it waits in its queue (queueset's request.wait, decisionCancel) and never runs it. An
// in-process caller gets the error client-go returns for a request its context cancelled; an
// HTTP request is answered as the priority-and-fairness filter answers one it did not serve; the
// write is not made either way, and the request is counted as a 429.
func TestQueuedRequestWhoseContextEnded(t *testing.T) {
	t.Run("in process", func(t *testing.T) {
		srv, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		d := srv.DirectAs("kubelet", nodeUser("n1"))
		l, err := d.CreateLease(t.Context(), &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: "kube-node-lease"},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a")}})
		if err != nil {
			t.Fatal(err)
		}
		var updateErr error
		queueThenCancel(t, srv, func(ctx context.Context) {
			l2 := l.DeepCopy()
			l2.Spec.HolderIdentity = ptr.To("b")
			_, updateErr = d.UpdateLease(ctx, l2)
		})
		var ue *url.Error
		if !errors.As(updateErr, &ue) || !errors.Is(updateErr, context.Canceled) || ue.Op != "Put" ||
			ue.URL != "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1" {
			t.Errorf("the update's error = %#v, want a *url.Error of Put on the lease's path around context.Canceled", updateErr)
		}
		got, err := d.GetLease(t.Context(), "kube-node-lease", "n1")
		if err != nil {
			t.Fatal(err)
		}
		if *got.Spec.HolderIdentity != "a" || got.ResourceVersion != l.ResourceVersion {
			t.Errorf("the lease after the update that gave up: holder %q, resourceVersion %s; want it unchanged (a, %s)",
				*got.Spec.HolderIdentity, got.ResourceVersion, l.ResourceVersion)
		}
		if n := requestCount(t, srv, `verb="PUT"`, `resource="leases"`, `code="429"`); n != 1 {
			t.Errorf("PUT leases counted as 429 %v times, want 1", n)
		}
	})
	t.Run("HTTP", func(t *testing.T) {
		srv, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		var w *httptest.ResponseRecorder
		queueThenCancel(t, srv, func(ctx context.Context) {
			r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/api/v1/namespaces/default/configmaps",
				strings.NewReader(`{"metadata":{"name":"c"}}`))
			r.Header.Set("Content-Type", "application/json")
			w = httptest.NewRecorder()
			srv.Handler().ServeHTTP(w, r)
		})
		if w.Code != http.StatusTooManyRequests || w.Body.String() != "Too many requests, please try again later.\n" ||
			w.Header().Get("Retry-After") != "1" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
			t.Errorf("answer %d %q, Retry-After %q, Content-Type %q; want 429 %q, 1, text/plain", w.Code, w.Body,
				w.Header().Get("Retry-After"), w.Header().Get("Content-Type"), "Too many requests, please try again later.\n")
		}
		if n := requestCount(t, srv, `verb="POST"`, `resource="configmaps"`, `code="429"`); n != 1 {
			t.Errorf("POST configmaps counted as 429 %v times, want 1", n)
		}
		r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/configmaps/c", nil)
		w = httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, r)
		if w.Code != http.StatusNotFound {
			t.Errorf("GET the configmap the ejected request would have created = %d, want 404", w.Code)
		}
	})
}

// requestCount is the value of the apiserver_request_total series whose labels include every one
// of labels, from the server's /metrics; 0 if there is none.
func requestCount(t *testing.T, srv *Server, labels ...string) float64 {
	t.Helper()
	w := httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("GET /metrics = %d %s", w.Code, w.Body)
	}
lines:
	for _, line := range strings.Split(w.Body.String(), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(line, l) {
				continue lines
			}
		}
		n, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		return n
	}
	return 0
}
