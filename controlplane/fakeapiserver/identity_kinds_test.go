package fakeapiserver_test

import (
	"net/http"
	"testing"
)

// TestUIDPatchCausesByKind: kube-apiserver v1.35's EndpointSlice and CSINode update validation
// (ValidateEndpointSliceUpdate, ValidateCSINodeUpdate) do not call ValidateObjectMetaUpdate, so a
// patched UID is reported once (validateCommonFields only), not twice.
func TestUIDPatchCausesByKind(t *testing.T) {
	for _, tc := range []struct{ coll, path, body string }{
		{"/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/s",
			`{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"s"},"addressType":"IPv4","endpoints":[]}`},
		{"/apis/storage.k8s.io/v1/csinodes", "/apis/storage.k8s.io/v1/csinodes/n",
			`{"apiVersion":"storage.k8s.io/v1","kind":"CSINode","metadata":{"name":"n"},"spec":{"drivers":[]}}`},
	} {
		h := newServer(t, testOptions()).Handler()
		if w := do(h, "POST", tc.coll, "application/json", tc.body); w.Code != http.StatusCreated {
			t.Fatalf("create %s = %d %s", tc.coll, w.Code, w.Body.String())
		}
		w := do(h, "PATCH", tc.path, "application/merge-patch+json", `{"metadata":{"uid":"x"}}`)
		st := decodeStatus(t, w)
		if w.Code != 422 || st.Details == nil || len(st.Details.Causes) != 1 {
			t.Errorf("%s: %d %q causes %+v, want 422 with one cause", tc.path, w.Code, st.Message, st.Details)
		}
	}
}

// TestEventsV1PatchIdentityFirst: kube-apiserver checks a patched event's namespace and name
// (400) before BeforeUpdate's UID validation (422). (Its resource version the fake ignores, as
// docs/fidelity.md says.)
func TestEventsV1PatchIdentityFirst(t *testing.T) {
	const ev = `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e","namespace":"default"},"eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"c/x","reportingInstance":"i","action":"A","reason":"R","type":"Normal","regarding":{"kind":"Pod","namespace":"default","name":"p"},"note":"n"}`
	for _, tc := range []struct {
		name, patch string
		code        int
	}{
		{"name and uid", `{"metadata":{"name":"other","uid":"x"}}`, 400},
		{"namespace and uid", `{"metadata":{"namespace":"other","uid":"x"}}`, 400},
		{"uid", `{"metadata":{"uid":"x"}}`, 422},
	} {
		h := newServer(t, testOptions()).Handler()
		if w := do(h, "POST", "/apis/events.k8s.io/v1/namespaces/default/events", "application/json", ev); w.Code != http.StatusCreated {
			t.Fatalf("create = %d %s", w.Code, w.Body.String())
		}
		w := do(h, "PATCH", "/apis/events.k8s.io/v1/namespaces/default/events/e", "application/merge-patch+json", tc.patch)
		if w.Code != tc.code {
			t.Errorf("%s: %d %.200s, want %d", tc.name, w.Code, w.Body.String(), tc.code)
		}
	}
}
