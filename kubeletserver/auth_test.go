package kubeletserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/kubeletserver"
)

func TestAttributesFor(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		fineGrained  bool
		wantVerb     string
		want         []string
	}{
		{"GET", "/metrics", true, "get", []string{"metrics"}},
		{"GET", "/metrics/resource", true, "get", []string{"metrics"}},
		{"GET", "/metricsfoo", true, "get", []string{"proxy"}},
		{"GET", "/stats/summary", true, "get", []string{"stats"}},
		{"POST", "/stats/summary", true, "create", []string{"stats"}},
		{"GET", "/logs/", true, "get", []string{"log"}},
		{"GET", "/containerLogs/default/web/main", true, "get", []string{"proxy"}},
		{"POST", "/exec/default/web/main", true, "create", []string{"proxy"}},
		{"GET", "/pods", true, "get", []string{"pods", "proxy"}},
		{"GET", "/pods", false, "get", []string{"proxy"}},
		{"GET", "/runningpods/", true, "get", []string{"pods", "proxy"}},
		{"GET", "/healthz/syncloop", true, "get", []string{"healthz", "proxy"}},
		{"GET", "/configz", true, "get", []string{"configz", "proxy"}},
		{"GET", "/flagz", true, "get", []string{"configz"}},
		{"DELETE", "/debug/pprof/", true, "delete", []string{"proxy"}},
		{"HEAD", "/healthz", true, "", []string{"healthz", "proxy"}},
	} {
		got := kubeletserver.AttributesFor("n1", tc.method, tc.path, tc.fineGrained)
		var want []authorizationv1.ResourceAttributes
		for _, sub := range tc.want {
			want = append(want, authorizationv1.ResourceAttributes{Verb: tc.wantVerb, Version: "v1", Resource: "nodes", Subresource: sub, Name: "n1"})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("AttributesFor(%s %s, fineGrained %v) (-want +got):\n%s", tc.method, tc.path, tc.fineGrained, diff)
		}
	}
}

// fakeTokens authenticates the token "good" as user "alice" in group "devs".
type fakeTokens struct {
	calls int
	err   error
}

func (f *fakeTokens) Create(_ context.Context, r *authenticationv1.TokenReview, _ metav1.CreateOptions) (*authenticationv1.TokenReview, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	out := r.DeepCopy()
	if r.Spec.Token == "good" {
		out.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "alice", Groups: []string{"devs"}}}
	}
	return out, nil
}

// fakeAccess allows what allow says and records the reviews.
type fakeAccess struct {
	allow func(authorizationv1.SubjectAccessReviewSpec) bool
	specs []authorizationv1.SubjectAccessReviewSpec
	err   error
}

func (f *fakeAccess) Create(_ context.Context, r *authorizationv1.SubjectAccessReview, _ metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error) {
	f.specs = append(f.specs, r.Spec)
	if f.err != nil {
		return nil, f.err
	}
	out := r.DeepCopy()
	out.Status.Allowed = f.allow(r.Spec)
	return out, nil
}

// authHandler is a node's handler with auth, on a fake clock.
func authHandler(t *testing.T, auth kubeletserver.Auth, clk *clocktesting.FakeClock) http.Handler {
	t.Helper()
	auth.NodeName = "n1"
	h, err := kubeletserver.NewNodeHandler(kubeletserver.NodeOptions{Board: kubeletserver.NewBoard("n1"), Clock: clk,
		Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "metrics") }), Auth: &auth})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func serve(h http.Handler, method, path, token string, certs []*x509.Certificate) (int, string) {
	r := httptest.NewRequest(method, path, nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	if certs != nil {
		r.TLS = &tls.ConnectionState{PeerCertificates: certs}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

// TestAuthAuthenticates: a client certificate of the client CA, a token the review
// authenticates, or no credentials at all when anonymous requests are allowed get in; a
// certificate of another authority, a token the review refuses, or no credentials otherwise are
// answered 401 "Unauthorized", anonymous or not.
func TestAuthAuthenticates(t *testing.T) {
	ca, caKey := newCA(t, "client-ca")
	other, otherKey := newCA(t, "other-ca")
	good := []*x509.Certificate{newClient(t, ca, caKey, "kube-apiserver-kubelet-client", "kubeadm:cluster-admins")}
	foreign := []*x509.Certificate{newClient(t, other, otherKey, "mallory")}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	for _, tc := range []struct {
		name      string
		anonymous bool
		token     string
		certs     []*x509.Certificate
		want      int
	}{
		{name: "client certificate", certs: good, want: http.StatusOK},
		{name: "token", token: "good", want: http.StatusOK},
		{name: "certificate of another authority", certs: foreign, want: http.StatusUnauthorized},
		{name: "certificate of another authority with a good token", certs: foreign, token: "good", want: http.StatusOK},
		{name: "bad token", token: "bad", want: http.StatusUnauthorized},
		{name: "bad token with anonymous allowed", anonymous: true, token: "bad", want: http.StatusUnauthorized},
		{name: "nothing", want: http.StatusUnauthorized},
		{name: "nothing with anonymous allowed", anonymous: true, want: http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := authHandler(t, kubeletserver.Auth{ClientCAs: pool, Tokens: &fakeTokens{}, TokenTTL: time.Minute, Anonymous: tc.anonymous},
				clocktesting.NewFakeClock(time.Now()))
			code, body := serve(h, http.MethodGet, "/metrics", tc.token, tc.certs)
			if code != tc.want {
				t.Errorf("GET /metrics = %d %q, want %d", code, body, tc.want)
			}
			if code == http.StatusUnauthorized && body != "Unauthorized" {
				t.Errorf("401 body = %q, want the kubelet's Unauthorized", body)
			}
		})
	}
}

// TestAuthAuthorizesWithSubjectAccessReviews: in Webhook mode each request is reviewed as the
// user on the subresource its path maps to, the fine-grained one first; a refusal is 403 with
// the kubelet's text, a failed review 500; answers are cached for their TTLs.
func TestAuthAuthorizesWithSubjectAccessReviews(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	access := &fakeAccess{allow: func(s authorizationv1.SubjectAccessReviewSpec) bool {
		return s.User == "alice" && (s.ResourceAttributes.Subresource == "metrics" || s.ResourceAttributes.Subresource == "proxy")
	}}
	h := authHandler(t, kubeletserver.Auth{Tokens: &fakeTokens{}, TokenTTL: time.Minute, Anonymous: true,
		Access: access, AllowTTL: 5 * time.Minute, DenyTTL: 30 * time.Second, FineGrained: true}, clk)

	if code, body := serve(h, http.MethodGet, "/metrics", "good", nil); code != http.StatusOK || body != "metrics" {
		t.Errorf("alice GET /metrics = %d %q, want 200", code, body)
	}
	want := authorizationv1.SubjectAccessReviewSpec{User: "alice", Groups: []string{"devs", "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Version: "v1", Resource: "nodes", Subresource: "metrics", Name: "n1"}}
	if diff := cmp.Diff([]authorizationv1.SubjectAccessReviewSpec{want}, access.specs); diff != "" {
		t.Errorf("reviews (-want +got):\n%s", diff)
	}
	// /healthz tries healthz, then proxy, which alice has.
	access.specs = nil
	if code, _ := serve(h, http.MethodGet, "/healthz", "good", nil); code != http.StatusOK {
		t.Errorf("alice GET /healthz = %d, want 200 through nodes/proxy", code)
	}
	if got := len(access.specs); got != 2 {
		t.Errorf("GET /healthz made %d reviews, want 2 (healthz, then proxy)", got)
	}
	code, body := serve(h, http.MethodGet, "/stats/summary", "", nil)
	if wantBody := "Forbidden (user=system:anonymous, verb=get, resource=nodes, subresource(s)=[stats])\n"; code != http.StatusForbidden || body != wantBody {
		t.Errorf("anonymous GET /stats/summary = %d %q, want 403 %q", code, body, wantBody)
	}

	// Cached: the same request makes no review until its TTL has passed.
	access.specs = nil
	serve(h, http.MethodGet, "/metrics", "good", nil)
	serve(h, http.MethodGet, "/stats/summary", "", nil)
	if len(access.specs) != 0 {
		t.Errorf("cached answers were reviewed again: %v", access.specs)
	}
	clk.Step(31 * time.Second)
	serve(h, http.MethodGet, "/metrics", "good", nil)
	serve(h, http.MethodGet, "/stats/summary", "", nil)
	if len(access.specs) != 1 || access.specs[0].User != "system:anonymous" {
		t.Errorf("after 31s, reviews %v, want the refusal's only", access.specs)
	}

	access.err = errors.New("connection refused")
	code, body = serve(h, http.MethodGet, "/pods", "good", nil)
	if wantBody := "Authorization error (user=alice, verb=get, resource=nodes, subresource=pods)"; code != http.StatusInternalServerError || body != wantBody {
		t.Errorf("GET /pods with the API server down = %d %q, want 500 %q", code, body, wantBody)
	}
}

// TestAuthAlwaysAllowAndTokenCache: without an AccessReviewer every authenticated request is
// allowed; a token's review is kept for the TTL, its refusal too.
func TestAuthAlwaysAllowAndTokenCache(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	tokens := &fakeTokens{}
	h := authHandler(t, kubeletserver.Auth{Tokens: tokens, TokenTTL: 2 * time.Minute}, clk)
	for range 3 {
		if code, _ := serve(h, http.MethodDelete, "/configz", "good", nil); code == http.StatusUnauthorized || code == http.StatusForbidden {
			t.Errorf("DELETE /configz with a good token = %d, want it let through", code)
		}
		serve(h, http.MethodGet, "/metrics", "bad", nil)
	}
	if tokens.calls != 2 {
		t.Errorf("%d token reviews for two tokens within the TTL, want 2", tokens.calls)
	}
	clk.Step(2 * time.Minute)
	serve(h, http.MethodGet, "/metrics", "good", nil)
	if tokens.calls != 3 {
		t.Errorf("%d token reviews after the TTL, want 3", tokens.calls)
	}
	tokens.err = errors.New("connection refused")
	if code, _ := serve(h, http.MethodGet, "/metrics", "new", nil); code != http.StatusUnauthorized {
		t.Errorf("GET with a token the API server could not review = %d, want 401", code)
	}
}

func newCA(t *testing.T, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, key
}

func newClient(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, user string, groups ...string) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: user, Organization: groups},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
