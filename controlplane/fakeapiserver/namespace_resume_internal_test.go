package fakeapiserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestNamespaceDeletionResumesAfterRestart leaves a namespace as a server killed in the middle of
// its deletion leaves it, Terminating and still holding a lease and a pod, and starts a server
// on the same data directory: the deletion is finished, content and namespace alike.
func TestNamespaceDeletionResumesAfterRestart(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard, DataDir: dir}
	srv, err := New(opts)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	h := srv.Handler()
	for _, req := range []struct{ path, body string }{
		{"/api/v1/namespaces", `{"metadata":{"name":"doomed"}}`},
		{"/apis/coordination.k8s.io/v1/namespaces/doomed/leases", `{"metadata":{"name":"l"}}`},
		{"/api/v1/namespaces/doomed/pods", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, req.path, strings.NewReader(req.body)))
		if w.Code != http.StatusCreated {
			t.Fatalf("POST %s = %d %s", req.path, w.Code, w.Body)
		}
	}
	// The first write of a namespace's deletion, without the deletion of its content that
	// follows it under the same lock: what a kill -9 between the two leaves on disk.
	err = srv.store.locked(func() error {
		res := srv.store.resource("namespaces")
		old, _ := srv.store.get(res, "", "doomed")
		ns := old.obj.DeepCopyObject().(*corev1.Namespace)
		now := metav1.NewTime(vclock.Epoch)
		ns.DeletionTimestamp, ns.Status.Phase = &now, corev1.NamespaceTerminating
		_, err := srv.store.commit(res, watch.Modified, ns, old)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}

	srv, err = New(opts)
	if err != nil {
		t.Fatalf("New() after the crash = %v", err)
	}
	defer srv.Close()
	h = srv.Handler()
	for _, path := range []string{
		"/api/v1/namespaces/doomed",
		"/apis/coordination.k8s.io/v1/namespaces/doomed/leases/l",
		"/api/v1/namespaces/doomed/pods/p",
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != http.StatusNotFound {
			t.Errorf("GET %s after the restart = %d %s, want 404: the deletion was not finished", path, w.Code, w.Body)
		}
	}
}
