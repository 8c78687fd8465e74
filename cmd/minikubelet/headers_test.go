package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// seenRequest is what a test server received of one request.
type seenRequest struct {
	Method, URL string
	Header      http.Header
	Body        string
}

// recordingServer answers every request with 404 and records it.
type recordingServer struct {
	mu   sync.Mutex
	seen []seenRequest
}

func (s *recordingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.seen = append(s.seen, seenRequest{Method: r.Method, URL: r.URL.String(), Header: r.Header.Clone(), Body: string(body)})
	s.mu.Unlock()
	http.NotFound(w, r)
}

// nodeRequests makes a node's kinds of request with client: a pod's GET and status PATCH, an
// event's POST, a token request.
func nodeRequests(ctx context.Context, client kubernetes.Interface) {
	pods := client.CoreV1().Pods("default")
	_, _ = pods.Get(ctx, "web-1", metav1.GetOptions{})
	_, _ = pods.Patch(ctx, "web-1", types.StrategicMergePatchType, []byte(`{"metadata":{"uid":"u1"}}`), metav1.PatchOptions{}, "status")
	_, _ = client.CoreV1().Events("default").Create(ctx, &v1.Event{ObjectMeta: metav1.ObjectMeta{Name: "web-1.1"}, Reason: "Pulled"}, metav1.CreateOptions{})
	_, _ = client.CoreV1().ServiceAccounts("default").CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
}

// TestNewClientsetSendsClientGosRequests checks that newClientset's clients send, byte for
// byte, the requests kubernetes.NewForConfig's do: methods, URLs, every header (the user agent
// and the bearer token among them) and bodies, with a static token, without one, with no user
// agent (client-go's default), and with a token file (client-go's own round trippers).
func TestNewClientsetSendsClientGosRequests(t *testing.T) {
	tokenFile := t.TempDir() + "/token"
	if err := os.WriteFile(tokenFile, []byte("file-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		config func(rc *rest.Config)
		static bool // whether newClientset sets the headers itself
	}{
		{"bearer token and user agent", func(rc *rest.Config) { rc.BearerToken, rc.UserAgent = "s3cret", userAgent }, true},
		{"no credentials", func(rc *rest.Config) { rc.UserAgent = userAgent }, true},
		{"client-go's user agent", func(rc *rest.Config) { rc.BearerToken, rc.UserAgent = "s3cret", "" }, true},
		{"token file", func(rc *rest.Config) { rc.BearerTokenFile, rc.UserAgent = tokenFile, userAgent }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want, got recordingServer
			wantSrv, gotSrv := httptest.NewServer(&want), httptest.NewServer(&got)
			defer wantSrv.Close()
			defer gotSrv.Close()
			ctx := context.Background()
			for _, c := range []struct {
				url string
				new func(*rest.Config) (*kubernetes.Clientset, error)
			}{{wantSrv.URL, kubernetes.NewForConfig}, {gotSrv.URL, newClientset}} {
				rc := kubeletClientConfig(&rest.Config{Host: c.url})
				tt.config(rc)
				if staticHeaders(rc) != tt.static {
					t.Fatalf("staticHeaders() = %v, want %v", !tt.static, tt.static)
				}
				client, err := c.new(rc)
				if err != nil {
					t.Fatal(err)
				}
				if c.url == gotSrv.URL {
					rc := client.CoreV1().RESTClient().(*rest.RESTClient)
					if _, ok := rc.Client.Transport.(headerRoundTripper); ok != tt.static {
						t.Fatalf("newClientset's transport is a headerRoundTripper: %v, want %v", ok, tt.static)
					}
				}
				nodeRequests(ctx, client)
			}
			if len(want.seen) != 4 {
				t.Fatalf("client-go's clientset sent %d requests, want 4", len(want.seen))
			}
			if diff := cmp.Diff(want.seen, got.seen); diff != "" {
				t.Errorf("newClientset's requests differ from client-go's (-client-go +newClientset):\n%s", diff)
			}
			if r := got.seen[0]; tt.name == "bearer token and user agent" &&
				(r.Header.Get("Authorization") != "Bearer s3cret" || r.Header.Get("User-Agent") != userAgent) {
				t.Errorf("Authorization %q, User-Agent %q; want the token and %q", r.Header.Get("Authorization"), r.Header.Get("User-Agent"), userAgent)
			}
		})
	}
}

// TestHeaderRoundTripperLeavesTheRequest checks that the round tripper sets its headers on a
// copy, and leaves headers a request already has.
func TestHeaderRoundTripperLeavesTheRequest(t *testing.T) {
	var seen []http.Header
	inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = append(seen, r.Header)
		return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody}, nil
	})
	h := headerRoundTripper{userAgent: "ua/1", authorization: "Bearer t", rt: inner}
	req, err := http.NewRequest(http.MethodGet, "http://example.invalid/api/v1/pods", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	if _, err := h.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(http.Header{"Accept": {"application/json"}}, req.Header); diff != "" {
		t.Errorf("the request's own header changed (-want +got):\n%s", diff)
	}
	req.Header.Set("User-Agent", "mine")
	req.Header.Set("Authorization", "Bearer other")
	if _, err := h.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	want := []http.Header{
		{"Accept": {"application/json"}, "User-Agent": {"ua/1"}, "Authorization": {"Bearer t"}},
		{"Accept": {"application/json"}, "User-Agent": {"mine"}, "Authorization": {"Bearer other"}},
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("headers sent (-want +got):\n%s", diff)
	}
	if h.WrappedRoundTripper() == nil {
		t.Error("WrappedRoundTripper() = nil, want the transport inside")
	}
}
