package main

import (
	"net/http"
	"strings"
)

// forwardedToNode routes a request that an API server's node proxy forwarded to the node it was
// asked for: kube-apiserver (and the embedded API server) sends `kubectl get --raw
// /api/v1/nodes/N/proxy/metrics` to the node's address with the kubelet's own path, /metrics, and
// says in X-Forwarded-Uri which node's proxy it came from. All the nodes of a fleet share one
// listener and one address, so without this the listener could not tell them apart; a real
// kubelet, alone on its address, needs no such routing. Any other request goes to next as it is.
func forwardedToNode(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		node, ok := proxiedNode(r.Header.Get("X-Forwarded-Uri"))
		if !ok || strings.HasPrefix(r.URL.Path, "/nodes/") {
			next.ServeHTTP(w, r)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/nodes/" + node + r.URL.Path
		r2.URL.RawPath = ""
		next.ServeHTTP(w, r2)
	})
}

// proxiedNode is the node name of a node proxy URI, /api/v1/nodes/{name}[:{port}]/proxy/...
func proxiedNode(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, "/api/v1/nodes/")
	if !ok {
		return "", false
	}
	name, rest, ok := strings.Cut(rest, "/")
	if !ok || (rest != "proxy" && !strings.HasPrefix(rest, "proxy/")) {
		return "", false
	}
	name, _, _ = strings.Cut(name, ":")
	return name, name != ""
}
