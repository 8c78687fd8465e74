package fakeapiserver

import (
	"net/http/httptest"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestLoadedLeasesShareFields: two nodes' leases written alike share their managed fields'
// encoding when written, and again once a restarted server loads them from its data directory,
// where each is decoded anew.
func TestLoadedLeasesShareFields(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard, DataDir: dir}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	leases := "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
	for _, node := range []string{"n1", "n2"} {
		r := httptest.NewRequest("POST", leases+"?fieldManager=kubelet", strings.NewReader(
			`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"`+node+`"},"spec":{"holderIdentity":"`+node+`","leaseDurationSeconds":40,"renewTime":"2026-11-28T09:00:00.000000Z"}}`))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 300 {
			t.Fatalf("POST %s = %d %s", node, w.Code, w.Body)
		}
	}
	shared := func(s *Server) bool {
		var got []*coordinationv1.Lease
		_ = s.store.locked(func() error {
			for _, node := range []string{"n1", "n2"} {
				e, _ := s.store.get(leasesTarget, "kube-node-lease", node)
				got = append(got, e.obj.(*coordinationv1.Lease))
			}
			return nil
		})
		return &got[0].ManagedFields[0].FieldsV1.Raw[0] == &got[1].ManagedFields[0].FieldsV1.Raw[0]
	}
	if !shared(s) {
		t.Fatal("written: not shared")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if !shared(s2) {
		t.Error("loaded from the data directory: the two leases' equal encodings are a copy each, want one shared")
	}
}
