package fakeapiserver_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// serveTLS serves srv over TLS on a loopback port, as the commands do, until the test ends, and
// returns its address, its certificate authority (PEM) and a client that trusts it and
// negotiates HTTP/2 where the server offers it.
func serveTLS(t *testing.T, srv *fakeapiserver.Server) (string, []byte, *http.Client) {
	t.Helper()
	cfg, caPEM, err := fakeapiserver.SelfSignedTLS(nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := fakeapiserver.Listen("")
	if err != nil {
		t.Fatal(err)
	}
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, tls.NewListener(l, cfg)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve() = %v", err)
		}
	})
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return l.Addr().String(), caPEM, &http.Client{Transport: tr, Timeout: time.Minute}
}

// TestTLSNegotiatesHTTP2 checks that a client that offers h2 gets HTTP/2, as from kube-apiserver,
// so that its requests and watches share one connection.
func TestTLSNegotiatesHTTP2(t *testing.T) {
	addr, _, client := serveTLS(t, newServer(t, testOptions()))
	resp, err := client.Get("https://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
		t.Errorf("GET /healthz over TLS = %d %s, want 200 over HTTP/2.0", resp.StatusCode, resp.Proto)
	}
}

// TestPlainHTTPToTLSPort sends a plain HTTP request to the TLS port: the answer is Go's and so
// kube-apiserver's, 400 "Client sent an HTTP request to an HTTPS server.", not an empty reply.
func TestPlainHTTPToTLSPort(t *testing.T) {
	addr, _, _ := serveTLS(t, newServer(t, testOptions()))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	const want = "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
	if string(got) != want {
		t.Errorf("plain HTTP to the TLS port answered %q, want %q", got, want)
	}
}
