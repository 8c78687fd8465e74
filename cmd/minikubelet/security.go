package main

import (
	"crypto/tls"
	"errors"
	"net"

	"github.com/spf13/pflag"
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
}

func (c *securityConfig) bind(fs *pflag.FlagSet) {
	fs.BoolVar(&c.NoAuth, "no-auth", false, "serve the fake API server without authentication: anyone who can connect may do anything")
	fs.StringVar(&c.Token, "token", "", "bearer token the fake API server requires; random at every start when empty (written into --write-kubeconfig)")
	fs.BoolVar(&c.NoTLS, "no-tls", false, "serve the fake API server over plain HTTP instead of HTTPS with a self-signed certificate; needs --no-auth")
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
	return errors.Join(errs...)
}

// serving is what clients need to reach one start of the fake API server.
type serving struct {
	url    string
	token  string // empty without authentication
	caData []byte // PEM; nil without TLS
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

// listen opens the server's listener on addr, over TLS when asked, and returns it with what its
// clients need.
func (c securityConfig) listen(addr, token string) (net.Listener, serving, error) {
	l, err := fakeapiserver.Listen(addr)
	if err != nil {
		return nil, serving{}, err
	}
	return c.secure(l, token)
}

// secure wraps l in TLS unless NoTLS, and says how clients reach it.
func (c securityConfig) secure(l net.Listener, token string) (net.Listener, serving, error) {
	s := serving{url: "http://" + l.Addr().String(), token: token}
	if c.NoTLS {
		return l, s, nil
	}
	var ip net.IP
	if tcp, ok := l.Addr().(*net.TCPAddr); ok {
		ip = tcp.IP
	}
	cfg, ca, err := fakeapiserver.SelfSignedTLS(ip)
	if err != nil {
		l.Close()
		return nil, serving{}, err
	}
	s.url, s.caData = "https://"+l.Addr().String(), ca
	return tls.NewListener(l, cfg), s, nil
}

// restConfig returns a client configuration for the server.
func (s serving) restConfig() *rest.Config {
	return &rest.Config{Host: s.url, BearerToken: s.token, TLSClientConfig: rest.TLSClientConfig{CAData: s.caData}}
}
