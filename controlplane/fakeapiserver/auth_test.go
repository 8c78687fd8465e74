package fakeapiserver_test

import (
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// TestBearerToken checks that a server with a token refuses every request without it with
// kube-apiserver's 401 Status, health checks included, and serves those that carry it.
func TestBearerToken(t *testing.T) {
	opts := testOptions()
	opts.BearerToken = "s3cret"
	h := newServer(t, opts).Handler()
	const unauthorized = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`
	for _, tc := range []struct {
		name, path, auth string
		want             int
	}{
		{"no header", "/api/v1/pods", "", http.StatusUnauthorized},
		{"no header, health", "/healthz", "", http.StatusUnauthorized},
		{"no header, version", "/version", "", http.StatusUnauthorized},
		{"wrong token", "/api/v1/pods", "Bearer s3cre", http.StatusUnauthorized},
		{"empty token", "/api/v1/pods", "Bearer ", http.StatusUnauthorized},
		{"space before the token", "/api/v1/pods", "Bearer  s3cret", http.StatusUnauthorized},
		{"basic auth", "/api/v1/pods", "Basic czNjcmV0", http.StatusUnauthorized},
		{"token only", "/api/v1/pods", "s3cret", http.StatusUnauthorized},
		{"token", "/api/v1/pods", "Bearer s3cret", http.StatusOK},
		{"scheme in lower case", "/api/v1/pods", "bearer s3cret", http.StatusOK},
		{"token, health", "/healthz", "Bearer s3cret", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var header []string
			if tc.auth != "" {
				header = []string{"Authorization", tc.auth}
			}
			w := do(h, "GET", tc.path, "", "", header...)
			if w.Code != tc.want {
				t.Fatalf("GET %s with %q = %d %s, want %d", tc.path, tc.auth, w.Code, w.Body.String(), tc.want)
			}
			if tc.want == http.StatusUnauthorized && strings.TrimSpace(w.Body.String()) != unauthorized {
				t.Errorf("GET %s with %q = %s, want %s", tc.path, tc.auth, w.Body.String(), unauthorized)
			}
		})
	}
}

// TestTLSWithToken serves the API over TLS with a self-signed certificate: client-go trusting the
// certificate's authority and carrying the token is served, one without the token gets 401, and one
// that does not trust the authority cannot connect.
func TestTLSWithToken(t *testing.T) {
	token := fakeapiserver.GenerateToken()
	if len(token) < 20 {
		t.Fatalf("GenerateToken() = %q, want at least 20 characters", token)
	}
	if other := fakeapiserver.GenerateToken(); other == token {
		t.Fatalf("GenerateToken() twice = %q, want different tokens", token)
	}
	opts := testOptions()
	opts.BearerToken = token
	addr, ca, _ := serveTLS(t, newServer(t, opts))
	ctx := t.Context()
	host := "https://" + addr

	list := func(cfg *rest.Config) error {
		cfg.QPS = -1
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		return err
	}
	if err := list(&rest.Config{Host: host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}); err != nil {
		t.Errorf("list over TLS with the token = %v, want it served", err)
	}
	if err := list(&rest.Config{Host: host, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}); !apierrors.IsUnauthorized(err) {
		t.Errorf("list over TLS without the token = %v, want Unauthorized", err)
	}
	if err := list(&rest.Config{Host: host, BearerToken: token}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("list over TLS without trusting the authority = %v, want a certificate error", err)
	}
}
