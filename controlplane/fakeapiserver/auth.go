package fakeapiserver

import (
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	certutil "k8s.io/client-go/util/cert"
)

// authenticated reports whether r carries the server's bearer token, or true when the server has
// none. It reads the Authorization header as kube-apiserver's bearer token authenticator does
// ("Bearer", any case, a space, a non-empty token) and, as it does, removes the header from a
// request it accepts.
func (s *Server) authenticated(r *http.Request) bool {
	if s.token == "" {
		return true
	}
	parts := strings.SplitN(strings.TrimSpace(r.Header.Get("Authorization")), " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") || parts[1] == "" {
		return false
	}
	if subtle.ConstantTimeCompare([]byte(parts[1]), []byte(s.token)) != 1 {
		return false
	}
	r.Header.Del("Authorization")
	return true
}

// unauthorized is kube-apiserver's answer to a request without valid credentials when anonymous
// requests are disabled.
func unauthorized() error { return apierrors.NewUnauthorized("Unauthorized") }

// GenerateToken returns a random bearer token with 130 bits of entropy, for Options.BearerToken.
func GenerateToken() string { return rand.Text() }

// SelfSignedTLS returns a TLS server configuration with a certificate for localhost, the loopback
// addresses, ips (those that are loopback or unspecified are left out) and names, signed by a
// certificate authority made for it, and that authority's certificate (PEM) for the clients to
// trust. Both are new at every call.
func SelfSignedTLS(ips []net.IP, names ...string) (*tls.Config, []byte, error) {
	all := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	for _, ip := range ips {
		if ip != nil && !ip.IsUnspecified() && !ip.IsLoopback() && !slices.ContainsFunc(all, ip.Equal) {
			all = append(all, ip)
		}
	}
	dns := []string{"localhost"}
	for _, n := range names {
		if n != "" && !slices.Contains(dns, n) {
			dns = append(dns, n)
		}
	}
	ips = all
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("localhost", ips, dns)
	if err != nil {
		return nil, nil, fmt.Errorf("generate a self-signed serving certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("load the self-signed serving certificate: %w", err)
	}
	// certPEM is the serving certificate followed by the authority that signed it; clients
	// may trust both, since neither is used anywhere else.
	// h2 first, as kube-apiserver offers it: a client that speaks HTTP/2 multiplexes its
	// requests, watches included, over one connection.
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}, certPEM, nil
}
