package fakeapiserver_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

const podJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}`

// do sends one raw request to the server's handler.
func do(h http.Handler, method, path, contentType, body string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func decodeStatus(t *testing.T, w *httptest.ResponseRecorder) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || st.Kind != "Status" {
		t.Fatalf("response %d %q is not a Status: %v", w.Code, w.Body.String(), err)
	}
	return st
}

func TestErrorStatuses(t *testing.T) {
	opts := testOptions()
	opts.MaxBodyBytes = 1024
	srv := newServer(t, opts)
	h := srv.Handler()
	if w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json", podJSON); w.Code != http.StatusCreated {
		t.Fatalf("create p = %d %s", w.Code, w.Body.String())
	}
	big := `{"metadata":{"name":"big","annotations":{"a":"` + strings.Repeat("x", 2048) + `"}}}`
	tests := []struct {
		name, method, path, contentType, body string
		header                                []string
		code                                  int32
		reason                                metav1.StatusReason
	}{
		{"malformedJSON", "POST", "/api/v1/namespaces/default/pods", "application/json", `{"metadata":`, nil, 400, metav1.StatusReasonBadRequest},
		{"wrongKind", "POST", "/api/v1/namespaces/default/pods", "application/json", `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}}`, nil, 400, metav1.StatusReasonBadRequest},
		{"unknownVersion", "POST", "/api/v1/namespaces/default/pods", "application/json", `{"apiVersion":"v9","kind":"Pod"}`, nil, 400, metav1.StatusReasonBadRequest},
		{"strictUnknownField", "POST", "/api/v1/namespaces/default/pods?fieldValidation=Strict", "application/json",
			strings.Replace(podJSON, `"spec":{`, `"spec":{"bogus":1,`, 1), nil, 400, metav1.StatusReasonBadRequest},
		{"strictDuplicateField", "POST", "/api/v1/namespaces/default/pods?fieldValidation=Strict", "application/json",
			strings.Replace(podJSON, `"metadata":{"name":"p"}`, `"metadata":{"name":"q","name":"q"}`, 1), nil, 400, metav1.StatusReasonBadRequest},
		{"badFieldValidation", "POST", "/api/v1/namespaces/default/pods?fieldValidation=Loud", "application/json", podJSON, nil, 400, metav1.StatusReasonBadRequest},
		{"tooLarge", "POST", "/api/v1/namespaces/default/pods", "application/json", big, nil, 413, metav1.StatusReasonRequestEntityTooLarge},
		{"unsupportedMediaType", "POST", "/api/v1/namespaces/default/pods", "text/plain", podJSON, nil, 415, metav1.StatusReasonUnsupportedMediaType},
		{"applyNoFieldManager", "PATCH", "/api/v1/namespaces/default/pods/p", "application/apply-patch+yaml", "{}", nil, 422, metav1.StatusReasonInvalid},
		{"applyCBOR", "PATCH", "/api/v1/namespaces/default/pods/p", "application/apply-patch+cbor", "{}", nil, 415, metav1.StatusReasonUnsupportedMediaType},
		{"badPatch", "PATCH", "/api/v1/namespaces/default/pods/p", "application/json-patch+json", `{"not":"a list"}`, nil, 400, metav1.StatusReasonBadRequest},
		{"notAcceptable", "GET", "/api/v1/namespaces/default/pods/p", "", "", []string{"Accept", "application/cbor"}, 406, metav1.StatusReasonNotAcceptable},
		{"badLabelSelector", "GET", "/api/v1/pods?labelSelector=a%20in%20(", "", "", nil, 400, metav1.StatusReasonBadRequest},
		{"badFieldSelector", "GET", "/api/v1/pods?fieldSelector=spec.bogus%3Dx", "", "", nil, 400, metav1.StatusReasonBadRequest},
		{"badResourceVersion", "GET", "/api/v1/pods?resourceVersion=abc", "", "", nil, 400, metav1.StatusReasonBadRequest},
		{"badTimeout", "GET", "/api/v1/pods?watch=1&timeoutSeconds=-1", "", "", nil, 400, metav1.StatusReasonBadRequest},
		{"notFound", "GET", "/api/v1/namespaces/default/pods/missing", "", "", nil, 404, metav1.StatusReasonNotFound},
		{"unknownResource", "GET", "/api/v1/persistentvolumes", "", "", nil, 404, metav1.StatusReasonNotFound},
		{"unknownSubresource", "GET", "/api/v1/namespaces/default/pods/p/nosuch", "", "", nil, 404, metav1.StatusReasonNotFound},
		{"unknownPath", "GET", "/nope", "", "", nil, 404, metav1.StatusReasonNotFound},
		{"alreadyExists", "POST", "/api/v1/namespaces/default/pods", "application/json", podJSON, nil, 409, metav1.StatusReasonAlreadyExists},
		{"invalid", "POST", "/api/v1/namespaces/default/pods", "application/json", `{"metadata":{"name":"x"}}`, nil, 422, metav1.StatusReasonInvalid},
		{"putCollection", "PUT", "/api/v1/namespaces/default/pods", "application/json", podJSON, nil, 405, metav1.StatusReasonMethodNotAllowed},
		{"postAllNamespaces", "POST", "/api/v1/pods", "application/json", podJSON, nil, 405, metav1.StatusReasonMethodNotAllowed},
		{"deleteCollectionAllNamespaces", "DELETE", "/api/v1/pods", "", "", nil, 405, metav1.StatusReasonMethodNotAllowed},
		{"nameMismatch", "PUT", "/api/v1/namespaces/default/pods/other", "application/json", podJSON, nil, 400, metav1.StatusReasonBadRequest},
		{"badDeleteOptions", "DELETE", "/api/v1/namespaces/default/pods/p", "application/json", `{"gracePeriodSeconds":"x"}`, nil, 400, metav1.StatusReasonBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := do(h, tc.method, tc.path, tc.contentType, tc.body, tc.header...)
			st := decodeStatus(t, w)
			if int32(w.Code) != tc.code || st.Code != tc.code || st.Reason != tc.reason || st.Status != metav1.StatusFailure {
				t.Errorf("%s %s = %d %s %s (%s), want %d %s", tc.method, tc.path, w.Code, st.Status, st.Reason, st.Message, tc.code, tc.reason)
			}
		})
	}
}

func TestFieldValidation(t *testing.T) {
	body := strings.Replace(podJSON, `"spec":{`, `"spec":{"bogus":1,`, 1)
	tests := []struct {
		name     string
		query    string
		code     int
		warnings []string
	}{
		{"strict", "?fieldValidation=Strict", 400, nil},
		{"warn", "?fieldValidation=Warn", 201, []string{`299 - "unknown field \"spec.bogus\""`}},
		{"default", "", 201, []string{`299 - "unknown field \"spec.bogus\""`}},
		{"ignore", "?fieldValidation=Ignore", 201, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newServer(t, testOptions()).Handler()
			w := do(h, "POST", "/api/v1/namespaces/default/pods"+tc.query, "application/json", body)
			if w.Code != tc.code {
				t.Errorf("POST%s = %d %s, want %d", tc.query, w.Code, w.Body.String(), tc.code)
			}
			if diff := cmp.Diff(tc.warnings, w.Header().Values("Warning")); diff != "" {
				t.Errorf("POST%s warnings (-want +got):\n%s", tc.query, diff)
			}
		})
	}
}

func TestDiscovery(t *testing.T) {
	h := newServer(t, testOptions()).Handler()
	tests := []struct {
		path string
		want string
	}{
		{"/version", `"gitVersion":"v1.35.0-fakeapiserver"`},
		{"/api", `"versions":["v1"]`},
		{"/api/v1", `"name":"pods/status"`},
		{"/apis", `"name":"coordination.k8s.io"`},
		{"/apis/coordination.k8s.io", `"preferredVersion"`},
		{"/apis/coordination.k8s.io/v1", `"name":"leases"`},
		{"/openapi/v3", `"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=`},
		{"/openapi/v3/api/v1", `"name":"fieldValidation"`},
		{"/openapi/v2", `"swagger":"2.0"`},
		{"/healthz", "ok"},
	}
	for _, tc := range tests {
		w := do(h, "GET", tc.path, "", "")
		body, _ := io.ReadAll(w.Body)
		if w.Code != http.StatusOK || !strings.Contains(string(body), tc.want) {
			t.Errorf("GET %s = %d %s, want 200 containing %s", tc.path, w.Code, body, tc.want)
		}
	}
	for _, path := range []string{"/openapi/v3/apis/apps/v1", "/api/v2", "/apis/apps", "/apis/apps/v1"} {
		if w := do(h, "GET", path, "", ""); w.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", path, w.Code)
		}
	}
}

func TestNewRequiresOptions(t *testing.T) {
	tests := []struct {
		name string
		opts fakeapiserver.Options
		want string
	}{
		{"nothing", fakeapiserver.Options{}, "options Clock, Tracer: missing required option"},
		{"noClock", fakeapiserver.Options{Tracer: trace.Discard}, "options Clock: missing required option"},
		{"noTracer", fakeapiserver.Options{Clock: vclock.New(vclock.Epoch)}, "options Tracer: missing required option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := fakeapiserver.New(tt.opts)
			if srv != nil || !errors.Is(err, minikubelet.ErrMissingOption) || err.Error() != tt.want {
				t.Errorf("New() = %v, %v, want nil and %q wrapping minikubelet.ErrMissingOption", srv, err, tt.want)
			}
		})
	}
}
