package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestForwardedToNode: a request the node proxy forwarded goes to the node its URI names; any
// other request is left as it is.
func TestForwardedToNode(t *testing.T) {
	for _, tc := range []struct {
		name, path, forwarded, want string
	}{
		{name: "node proxy", path: "/metrics", forwarded: "/api/v1/nodes/sim-1/proxy/metrics", want: "/nodes/sim-1/metrics"},
		{name: "node proxy with a port", path: "/healthz", forwarded: "/api/v1/nodes/sim-1:10250/proxy/healthz", want: "/nodes/sim-1/healthz"},
		{name: "no header", path: "/metrics", want: "/metrics"},
		{name: "a pod's log", path: "/containerLogs/default/p/c", forwarded: "/api/v1/namespaces/default/pods/p/log", want: "/containerLogs/default/p/c"},
		{name: "already routed", path: "/nodes/sim-2/metrics", forwarded: "/api/v1/nodes/sim-1/proxy/metrics", want: "/nodes/sim-2/metrics"},
		{name: "not a proxy", path: "/metrics", forwarded: "/api/v1/nodes/sim-1/status", want: "/metrics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			h := forwardedToNode(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.URL.Path }))
			r := httptest.NewRequest(http.MethodGet, tc.path, nil)
			if tc.forwarded != "" {
				r.Header.Set("X-Forwarded-Uri", tc.forwarded)
			}
			h.ServeHTTP(httptest.NewRecorder(), r)
			if got != tc.want {
				t.Errorf("routed %s (X-Forwarded-Uri %q) to %s, want %s", tc.path, tc.forwarded, got, tc.want)
			}
		})
	}
}
