package main

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/http2"
	"k8s.io/client-go/rest"
)

// embeddedMaxConns bounds the connections of the one transport every node's client shares to the
// embedded API server over plain HTTP (--no-tls): it is the number of requests in flight, and
// the others wait for a connection, as requests wait on a busy kube-apiserver, rather than fail
// with "too many open files". A 1,000-node fleet dialled without limit and ran out of
// descriptors.
const embeddedMaxConns = 128

// embeddedRestConfig is the client configuration of the nodes of `run` for the embedded API server
// sv: one transport for every node's client, so that they share its connections and their bound.
//
// Over TLS it is an HTTP/2 transport, as client-go speaks to kube-apiserver: each connection
// carries up to the server's 100 concurrent streams, a new one is dialled only when those are
// full, and concurrent first requests share one dial, so a fleet holds one connection per 100
// requests and watches in flight. (net/http's own transport dials one connection per waiting
// request until the first HTTP/2 handshake ends, and stops counting a connection against
// MaxConnsPerHost once its streams are full.) Over plain HTTP it is an HTTP/1.1 transport with
// at most embeddedMaxConns connections and as many idle ones (client-go's default of 25 idle
// connections per host made a fleet dial and close connections all the time). client-go refuses
// a custom transport beside TLS options, so the transport carries the TLS configuration itself.
func embeddedRestConfig(sv serving) (*rest.Config, error) {
	rc := sv.restConfig()
	tlsConfig, err := rest.TLSConfigFor(rc)
	if err != nil {
		return nil, fmt.Errorf("embedded API server's TLS configuration: %w", err)
	}
	rc.TLSClientConfig = rest.TLSClientConfig{}
	if tlsConfig != nil {
		rc.Transport = &http2.Transport{
			TLSClientConfig: tlsConfig,
			IdleConnTimeout: 90 * time.Second,
			// client-go's health check of an HTTP/2 connection that went quiet.
			ReadIdleTimeout: 30 * time.Second,
			PingTimeout:     15 * time.Second,
		}
		return rc, nil
	}
	rc.Transport = &http.Transport{
		MaxConnsPerHost:     embeddedMaxConns,
		MaxIdleConns:        embeddedMaxConns,
		MaxIdleConnsPerHost: embeddedMaxConns,
		IdleConnTimeout:     90 * time.Second,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	}
	return rc, nil
}

// closeIdle closes the idle connections of a transport embeddedRestConfig made.
func closeIdle(rt http.RoundTripper) {
	if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
