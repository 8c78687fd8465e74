package fakeapiserver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestKubeletProxy: pods/log reaches the kubelet of the pod's node at its InternalIP and
// advertised port over HTTPS, with the server's kubelet client certificate, verifying the
// kubelet's certificate against the kubelet CA, with the log options passed on; a kubelet's
// plain-text failure comes back as a Status; nodes/proxy passes any path through, telling the
// kubelet the URI it was asked for as kube-apiserver does (X-Forwarded-Uri); an unscheduled pod
// has an empty log.
func TestKubeletProxy(t *testing.T) {
	var got, forwarded, clients []string
	kubelet := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.RequestURI())
		forwarded = append(forwarded, r.Header.Get("X-Forwarded-Uri"))
		if len(r.TLS.PeerCertificates) > 0 {
			clients = append(clients, r.TLS.PeerCertificates[0].Subject.CommonName)
		}
		if r.URL.Query().Get("previous") == "true" {
			http.Error(w, `previous terminated container "main" in pod "p" not found`, http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, "line\n")
	}))
	kubelet.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	kubelet.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake the strict server refuses
	kubelet.StartTLS()
	defer kubelet.Close()
	host, port, _ := net.SplitHostPort(kubelet.Listener.Addr().String())

	opts := testOptions()
	opts.KubeletCertificateAuthority = x509.NewCertPool()
	opts.KubeletCertificateAuthority.AddCert(kubelet.Certificate())
	clientCert := selfSignedClient(t, "kube-apiserver-kubelet-client")
	opts.KubeletClientCertificate = &clientCert
	srv := newServer(t, opts)
	h := srv.Handler()
	node := `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"addresses":[{"type":"Hostname","address":"n1"},{"type":"InternalIP","address":"` + host + `"}],"daemonEndpoints":{"kubeletEndpoint":{"Port":` + port + `}}}}`
	for _, c := range []struct{ path, body string }{
		{"/api/v1/nodes", node},
		{"/api/v1/namespaces/default/pods", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"nodeName":"n1","containers":[{"name":"main","image":"busybox"}]}}`},
		{"/api/v1/namespaces/default/pods", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pending"},"spec":{"containers":[{"name":"main","image":"busybox"}]}}`},
	} {
		if w := do(h, "POST", c.path, "application/json", c.body); w.Code != http.StatusCreated {
			t.Fatalf("create %s = %d %s", c.path, w.Code, w.Body.String())
		}
	}
	if w := do(h, "GET", "/api/v1/namespaces/default/pods/p/log?follow=true&tailLines=3&insecureSkipTLSVerifyBackend=true", "", ""); w.Code != 200 || w.Body.String() != "line\n" {
		t.Errorf("pods/log = %d %q", w.Code, w.Body.String())
	}
	st := decodeStatus(t, do(h, "GET", "/api/v1/namespaces/default/pods/p/log?previous=true", "", ""))
	if st.Code != 400 || st.Message != `previous terminated container "main" in pod "p" not found` {
		t.Errorf("failed pods/log = %+v", st)
	}
	if st := decodeStatus(t, do(h, "GET", "/api/v1/namespaces/default/pods/p/log?container=other", "", "")); st.Code != 400 {
		t.Errorf("pods/log of an unknown container = %+v", st)
	}
	if w := do(h, "GET", "/api/v1/nodes/n1/proxy/metrics/resource?x=1", "", ""); w.Code != 200 {
		t.Errorf("nodes/proxy = %d %q", w.Code, w.Body.String())
	}
	if w := do(h, "GET", "/api/v1/namespaces/default/pods/pending/log", "", ""); w.Code != 200 || w.Body.Len() != 0 {
		t.Errorf("log of an unscheduled pod = %d %q, want an empty 200", w.Code, w.Body.String())
	}
	want := []string{"/containerLogs/default/p/main?follow=true&tailLines=3", "/containerLogs/default/p/main?previous=true", "/metrics/resource?x=1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("kubelet requests = %q, want %q", got, want)
	}
	if want := []string{"", "", "/api/v1/nodes/n1/proxy/metrics/resource"}; fmt.Sprint(forwarded) != fmt.Sprint(want) {
		t.Errorf("X-Forwarded-Uri = %q, want %q", forwarded, want)
	}
	if want := []string{"kube-apiserver-kubelet-client", "kube-apiserver-kubelet-client", "kube-apiserver-kubelet-client"}; fmt.Sprint(clients) != fmt.Sprint(want) {
		t.Errorf("the kubelet's callers = %q, want the client certificate's user", clients)
	}

	// A server that does not trust the kubelet's certificate does not call it.
	opts.KubeletCertificateAuthority = x509.NewCertPool()
	strict := newServer(t, opts).Handler()
	for _, c := range []struct{ path, body string }{{"/api/v1/nodes", node}} {
		if w := do(strict, "POST", c.path, "application/json", c.body); w.Code != http.StatusCreated {
			t.Fatalf("create %s = %d %s", c.path, w.Code, w.Body.String())
		}
	}
	if st := decodeStatus(t, do(strict, "GET", "/api/v1/nodes/n1/proxy/healthz", "", "")); st.Code != http.StatusServiceUnavailable ||
		!strings.Contains(st.Message, "certificate signed by unknown authority") {
		t.Errorf("nodes/proxy to a kubelet of an unknown authority = %+v, want 503 naming the certificate", st)
	}
}

// selfSignedClient is a client certificate for user, self-signed.
func selfSignedClient(t *testing.T, user string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: user},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
