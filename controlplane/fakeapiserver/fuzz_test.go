package fakeapiserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	fuzzMethods      = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
	fuzzContentTypes = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf",
		"application/merge-patch+json", "application/strategic-merge-patch+json", "application/json-patch+json", "", "text/plain;;", "application/apply-patch+yaml"}
)

// FuzzHandler sends arbitrary requests to a server holding one pod and one node. The handler must
// never panic (a recovered panic would answer 500) and must answer every error with a Status
// whose code is the HTTP status.
func FuzzHandler(f *testing.F) {
	f.Add(uint8(1), "/api/v1/namespaces/default/pods", "", uint8(0), podJSON)
	f.Add(uint8(2), "/api/v1/namespaces/default/pods/p", "fieldValidation=Strict", uint8(0), podJSON)
	f.Add(uint8(3), "/api/v1/namespaces/default/pods/p/status", "", uint8(4), `{"status":{"phase":"Running"}}`)
	f.Add(uint8(3), "/api/v1/namespaces/default/pods/p", "", uint8(5), `[{"op":"remove","path":"/spec"}]`)
	f.Add(uint8(3), "/api/v1/nodes/n", "", uint8(3), `{"metadata":{"name":null}}`)
	f.Add(uint8(4), "/api/v1/namespaces/default/pods/p", "gracePeriodSeconds=-5", uint8(0), `{"preconditions":{"uid":"x"}}`)
	f.Add(uint8(0), "/api/v1/pods", "watch=1&resourceVersion=1&fieldSelector=spec.nodeName%3Dn", uint8(6), "")
	f.Add(uint8(0), "/api/v1/pods", "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", uint8(6), "")
	f.Add(uint8(0), "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", "labelSelector=a!%3D", uint8(6), "")
	f.Add(uint8(1), "/api/v1/namespaces/default/events", "", uint8(1), "metadata: {name: e}\ninvolvedObject: {kind: Pod}")
	f.Add(uint8(2), "/api/v1/namespaces/default/pods/p", "", uint8(2), "k8s\x00\x0a\x02v1")
	f.Add(uint8(0), "/api/v1/pods", "limit=1&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJhIn0", uint8(0), "")
	f.Add(uint8(3), "/apis/events.k8s.io/v1/namespaces/default/events/e", "", uint8(4), `{"note":"x"}`)
	f.Add(uint8(1), "/apis/events.k8s.io/v1/namespaces/default/events", "", uint8(0), `{"metadata":{"name":"e"},"eventTime":"2026-01-01T00:00:00.000000Z"}`)
	f.Add(uint8(0), "/apis/events.k8s.io/v1/events", "watch=1&fieldSelector=regarding.name%3Dp", uint8(0), "")
	f.Add(uint8(4), "/api/v1/namespaces/kube-node-lease", "", uint8(0), "")
	f.Add(uint8(1), "/api/v1/namespaces", "", uint8(0), `{"metadata":{"name":"team"}}`)
	f.Add(uint8(3), "/api/v1/namespaces/default/pods/p", "fieldManager=m&force=true", uint8(8),
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}")
	f.Add(uint8(3), "/api/v1/nodes/n/status", "fieldManager=m", uint8(8), `{"apiVersion":"v1","kind":"Node","status":{"capacity":{"cpu":"x"}}}`)
	f.Add(uint8(1), "/api/v1/namespaces/default/secrets", "", uint8(0), `{"metadata":{"name":"s"},"type":"kubernetes.io/tls","stringData":{"tls.crt":"x"}}`)
	f.Add(uint8(1), "/api/v1/namespaces/default/configmaps", "", uint8(1), "metadata: {name: c}\nbinaryData: {a: eA==}\ndata: {a: x}")
	f.Add(uint8(1), "/api/v1/namespaces/default/services", "dryRun=All", uint8(0), `{"metadata":{"name":"s"},"spec":{"clusterIP":"10.0.0.300","ports":[{"port":80,"targetPort":"http"}]}}`)
	f.Add(uint8(3), "/api/v1/namespaces/default/services/kubernetes", "", uint8(4), `{"spec":{"type":"ExternalName","externalName":"a.b"}}`)
	f.Add(uint8(1), "/api/v1/namespaces/default/endpoints", "", uint8(0), `{"metadata":{"name":"e"},"subsets":[{"addresses":[{"ip":"::1"}],"ports":[{"port":0}]}]}`)
	f.Add(uint8(1), "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", "", uint8(0), `{"metadata":{"name":"e"},"addressType":"IPv6","endpoints":[{"addresses":["1.2.3.4"]}]}`)
	f.Add(uint8(4), "/api/v1/namespaces/default/serviceaccounts/default", "", uint8(0), "")
	f.Add(uint8(1), "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "", uint8(0), `{"spec":{"nonResourceAttributes":{"path":"/"}}}`)
	f.Add(uint8(1), "/apis/authentication.k8s.io/v1/selfsubjectreviews", "", uint8(2), "k8s\x00\x0a\x02v1")
	f.Add(uint8(0), "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "watch=1", uint8(0), "")
	f.Fuzz(func(t *testing.T, method uint8, path, query string, contentType uint8, body string) {
		opts := testOptions()
		opts.MaxBodyBytes = 1 << 16
		srv := newServer(t, opts)
		h := srv.Handler()
		if w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json",
			strings.Replace(podJSON, `"spec":{`, `"spec":{"nodeName":"n",`, 1)); w.Code != http.StatusCreated {
			t.Fatalf("seeding the pod = %d %s", w.Code, w.Body.String())
		}
		if w := do(h, "POST", "/api/v1/nodes", "application/json", `{"metadata":{"name":"n"}}`); w.Code != http.StatusCreated {
			t.Fatalf("seeding the node = %d %s", w.Code, w.Body.String())
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // watches end right after their initial events
		r := (&http.Request{
			Method:     fuzzMethods[int(method)%len(fuzzMethods)],
			URL:        &url.URL{Path: path, RawQuery: query},
			Header:     http.Header{},
			Body:       io.NopCloser(strings.NewReader(body)),
			Proto:      "HTTP/1.1",
			ProtoMajor: 1, ProtoMinor: 1,
		}).WithContext(ctx)
		if ct := fuzzContentTypes[int(contentType)%len(fuzzContentTypes)]; ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		// An apply whose configuration does not fit the schema is kube-apiserver's 500 with no
		// reason; any other 500 is a bug.
		applyRefused := r.Header.Get("Content-Type") == "application/apply-patch+yaml" &&
			!strings.Contains(w.Body.String(), `"reason":"InternalError"`)
		if w.Code == http.StatusInternalServerError && !applyRefused {
			t.Fatalf("%s %s?%s = 500 %s", r.Method, path, query, w.Body.String())
		}
		if w.Code < 400 {
			return
		}
		var st metav1.Status
		if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || st.Kind != "Status" || int(st.Code) != w.Code {
			t.Fatalf("%s %s?%s = %d with body %q, want a Status with code %d", r.Method, path, query, w.Code, w.Body.String(), w.Code)
		}
	})
}
