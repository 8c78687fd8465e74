package main

import (
	"net/http"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// newClientset is kubernetes.NewForConfig(rc), sending the same requests with fewer copies of
// each. client-go sets the user agent and a bearer token with a round tripper each, and each
// clones the request and deep-copies its header: two copies of every request a node sends, a
// tenth of a fleet's allocations per API call while its pods start. Here one round tripper,
// outside client-go's own (as its user agent's is), sets both on one copy of the request with
// a new header map that shares the values of the request's; client-go's chain inside it, built
// from rc without the two, then finds nothing to set. The headers on the wire, and those
// client-go's debug round trippers log, are the same. A configuration whose credentials
// client-go refreshes or wraps otherwise (a token file, an exec or auth provider, basic auth,
// impersonation) goes client-go's way.
func newClientset(rc *rest.Config) (*kubernetes.Clientset, error) {
	if !staticHeaders(rc) {
		return kubernetes.NewForConfig(rc)
	}
	inner := rest.CopyConfig(rc)
	h := headerRoundTripper{userAgent: rc.UserAgent}
	if h.userAgent == "" {
		h.userAgent = rest.DefaultKubernetesUserAgent() // NewForConfig's default
	}
	if rc.BearerToken != "" {
		h.authorization = "Bearer " + rc.BearerToken
	}
	inner.UserAgent, inner.BearerToken = "", ""
	hc, err := rest.HTTPClientFor(inner)
	if err != nil {
		// The callers name the host already.
		return nil, err
	}
	// A copy: without a transport of its own, HTTPClientFor returns http.DefaultClient, whose
	// nil Transport is http.DefaultTransport.
	client := *hc
	h.rt = client.Transport
	if h.rt == nil {
		h.rt = http.DefaultTransport
	}
	client.Transport = h
	return kubernetes.NewForConfigAndClient(rc, &client)
}

// staticHeaders reports whether every header client-go's round trippers would add to rc's
// requests is the user agent's or a fixed bearer token's.
func staticHeaders(rc *rest.Config) bool {
	imp := rc.Impersonate
	return rc.BearerTokenFile == "" && rc.ExecProvider == nil && rc.AuthProvider == nil &&
		rc.Username == "" && rc.Password == "" &&
		imp.UserName == "" && imp.UID == "" && len(imp.Groups) == 0 && len(imp.Extra) == 0
}

// headerRoundTripper sets the User-Agent and, when authorization is not empty, the
// Authorization header of each request that has none, as client-go's user agent and bearer
// token round trippers do, on one copy of the request.
type headerRoundTripper struct {
	userAgent     string
	authorization string // "Bearer " and the token; "" sets none
	rt            http.RoundTripper
}

var (
	_ http.RoundTripper           = headerRoundTripper{}
	_ utilnet.RoundTripperWrapper = headerRoundTripper{}
)

func (h headerRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	setUA := req.Header.Get("User-Agent") == ""
	setAuth := h.authorization != "" && req.Header.Get("Authorization") == ""
	if !setUA && !setAuth {
		return h.rt.RoundTrip(req)
	}
	// A round tripper must not change the request it is handed: a shallow copy with a header
	// of its own. The values' slices are shared, since nothing downstream changes them in
	// place (client-go's and net/http's round trippers copy a header before they set one).
	header := make(http.Header, len(req.Header)+2)
	for k, v := range req.Header {
		header[k] = v
	}
	if setUA {
		header["User-Agent"] = []string{h.userAgent}
	}
	if setAuth {
		header["Authorization"] = []string{h.authorization}
	}
	r := *req
	r.Header = header
	return h.rt.RoundTrip(&r)
}

// WrappedRoundTripper is client-go's way to reach the transport inside (to close its idle
// connections, say).
func (h headerRoundTripper) WrappedRoundTripper() http.RoundTripper { return h.rt }
