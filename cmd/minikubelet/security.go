package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// securityConfig is how the fake API server that `run` embeds or `apiserver` serves is locked.
// The zero value is the default: HTTPS with a self-signed certificate and a random bearer token.
// docs/security.md says what it does and does not protect.
type securityConfig struct {
	NoAuth bool   // accept requests without a token
	Token  string // the bearer token; generated at every start when empty
	NoTLS  bool   // serve plain HTTP
	// TLSSANs are extra names (DNS names or IP addresses) the serving certificate covers.
	TLSSANs []string
}

func (c *securityConfig) bind(fs *pflag.FlagSet) {
	fs.BoolVar(&c.NoAuth, "no-auth", false, "serve the fake API server without authentication: anyone who can connect may do anything")
	fs.StringVar(&c.Token, "token", "", "bearer token the fake API server requires; random at every start when empty (written into --write-kubeconfig)")
	fs.BoolVar(&c.NoTLS, "no-tls", false, "serve the fake API server over plain HTTP instead of HTTPS with a self-signed certificate; needs --no-auth")
	fs.StringSliceVar(&c.TLSSANs, "tls-san", nil, "extra DNS names or IP addresses the fake API server's certificate covers, comma-separated (as k3s's --tls-san); "+
		"it always covers localhost, the loopback addresses and the listen address, every interface's address for a wildcard one")
}

func (c securityConfig) validate() error {
	var errs []error
	if c.NoAuth && c.Token != "" {
		errs = append(errs, errors.New("--no-auth and --token exclude each other"))
	}
	if c.NoTLS && !c.NoAuth {
		// client-go and kubectl send a kubeconfig's token only over TLS.
		errs = append(errs, errors.New("--no-tls needs --no-auth: clients send a kubeconfig's bearer token only over TLS"))
	}
	if c.NoTLS && len(c.TLSSANs) > 0 {
		errs = append(errs, errors.New("--tls-san needs TLS: drop --no-tls"))
	}
	for _, san := range c.TLSSANs {
		if net.ParseIP(san) == nil && len(validation.IsDNS1123Subdomain(strings.ToLower(san))) > 0 && !isWildcardDNS(san) {
			errs = append(errs, fmt.Errorf("--tls-san %q is neither an IP address nor a DNS name", san))
		}
	}
	return errors.Join(errs...)
}

// serving is what clients need to reach one start of the fake API server.
type serving struct {
	url    string
	token  string     // empty without authentication
	caData []byte     // PEM; nil without TLS
	ca     *authority // the authority that signed the serving certificate; nil without TLS
}

// token returns the bearer token the server requires, "" for none.
func (c securityConfig) token() string {
	switch {
	case c.NoAuth:
		return ""
	case c.Token != "":
		return c.Token
	}
	return fakeapiserver.GenerateToken()
}

// listen opens the server's listener on addr, over TLS when asked (with a certificate ca
// signs, a new authority when nil), and returns it with what its clients need.
func (c securityConfig) listen(addr, token string, ca *authority) (net.Listener, serving, error) {
	l, err := fakeapiserver.Listen(addr)
	if err != nil {
		return nil, serving{}, err
	}
	return c.secure(l, token, ca)
}

// secure wraps l in TLS unless NoTLS, and says how clients reach it. The URL names an address
// the certificate covers: the listen address, or for a wildcard one (0.0.0.0, ::, ":port") the
// host's own address, as kubeadm advertises it, since "https://[::]:6443" verifies against no
// certificate. The certificate covers that, every interface's address, and --tls-san; ca signs
// it (a new authority when nil), as it signs the client certificate the server calls kubelets
// with.
func (c securityConfig) secure(l net.Listener, token string, ca *authority) (net.Listener, serving, error) {
	tcp, _ := l.Addr().(*net.TCPAddr)
	if tcp == nil {
		tcp = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
	}
	host := tcp.IP
	ips := []net.IP{host}
	if host.IsUnspecified() {
		host = advertisedIP()
		ips = append(interfaceIPs(), host)
	}
	var names []string
	for _, san := range c.TLSSANs {
		if ip := net.ParseIP(san); ip != nil {
			ips = append(ips, ip)
		} else {
			names = append(names, san)
		}
	}
	hostPort := net.JoinHostPort(host.String(), strconv.Itoa(tcp.Port))
	s := serving{url: "http://" + hostPort, token: token}
	if c.NoTLS {
		return l, s, nil
	}
	cfg, ca, err := servingTLS(ca, ips, names)
	if err != nil {
		l.Close()
		return nil, serving{}, err
	}
	s.url, s.caData, s.ca = "https://"+hostPort, ca.pem, ca
	return tls.NewListener(l, cfg), s, nil
}

// apiServerAuthorityName names the fake API server's authority, as kubeadm's is "kubernetes".
const apiServerAuthorityName = "minikubelet-ca"

// servingTLS is the fake API server's TLS configuration: a certificate for localhost, the
// loopback addresses, ips (but loopback and unspecified ones) and names, signed by ca (a new
// authority when nil), and HTTP/2 first, as kube-apiserver offers it, so that a client that
// speaks it multiplexes its requests, watches included, over one connection.
func servingTLS(ca *authority, ips []net.IP, names []string) (*tls.Config, *authority, error) {
	if ca == nil {
		var err error
		if ca, err = newAuthority(apiServerAuthorityName); err != nil {
			return nil, nil, err
		}
	}
	all := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	for _, ip := range ips {
		if ip != nil && !ip.IsLoopback() {
			all = append(all, ip)
		}
	}
	cert, err := ca.serving("localhost", append([]string{"localhost"}, names...), all, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("generate a self-signed serving certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}, ca, nil
}

// advertisedIP is the address a server listening on every interface tells its clients: the
// host's default route interface's, as kubeadm picks the advertise address, or loopback when
// the host has none.
func advertisedIP() net.IP {
	if ip, err := utilnet.ChooseHostInterface(); err == nil && ip != nil {
		return ip
	}
	return net.IPv4(127, 0, 0, 1)
}

// interfaceIPs are the addresses of every network interface that is up.
func interfaceIPs() []net.IP {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var ips []net.IP
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLinkLocalUnicast() {
			ips = append(ips, n.IP)
		}
	}
	return ips
}

// isWildcardDNS reports whether s is a wildcard DNS name such as *.example.com, which a
// certificate may name.
func isWildcardDNS(s string) bool {
	return len(validation.IsWildcardDNS1123Subdomain(strings.ToLower(s))) == 0
}

// restConfig returns a client configuration for the server.
func (s serving) restConfig() *rest.Config {
	return &rest.Config{Host: s.url, BearerToken: s.token, TLSClientConfig: rest.TLSClientConfig{CAData: s.caData}}
}

// secretFlags are the flags whose values are secrets: the bearer token, and the manifest URL's
// headers, which may carry credentials.
var secretFlags = []string{"token", "manifest-url-header"}

// redactedArgs is args with the values of secretFlags replaced, for whatever shows the command
// line to others (the kubelet server's /debug/pprof/cmdline).
func redactedArgs(args []string) []string {
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(out[i], "-"), "=")
		if !strings.HasPrefix(out[i], "-") || !slices.Contains(secretFlags, name) {
			continue
		}
		switch {
		case hasValue:
			out[i] = out[i][:strings.Index(out[i], "=")+1] + redacted
		case i+1 < len(out):
			i++
			out[i] = redacted
		}
	}
	return out
}

// redacted stands for a secret left out.
const redacted = "<redacted>"
