package main

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// connCounter counts connections opened and the most open at once.
type connCounter struct {
	mu         sync.Mutex // guards open, peak, accepted
	open, peak int
	accepted   int
}

// counted counts c as opened until it is closed.
func (n *connCounter) counted(c net.Conn) net.Conn {
	n.mu.Lock()
	n.open++
	n.accepted++
	n.peak = max(n.peak, n.open)
	n.mu.Unlock()
	return &countedConn{Conn: c, n: n}
}

func (n *connCounter) counts() (peak, accepted int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.peak, n.accepted
}

// countingListener counts the connections it accepted.
type countingListener struct {
	net.Listener
	connCounter
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.counted(c), nil
}

type countedConn struct {
	net.Conn
	n    *connCounter
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() {
		c.n.mu.Lock()
		c.n.open--
		c.n.mu.Unlock()
	})
	return c.Conn.Close()
}

// TestEmbeddedTransportBoundsConnections is a bounded load test of the transport a fleet's nodes
// share: many clients made from its configuration, as the nodes are, send many requests at once
// to the embedded server. Over TLS the requests (watches that stay open, which hold a stream each)
// share a few HTTP/2 connections; over plain HTTP the connections never exceed the bound,
// however many requests are in flight. Before the bound, each request in flight had a
// connection of its own.
func TestEmbeddedTransportBoundsConnections(t *testing.T) {
	const clients, watchesPerClient, getsPerClient = 50, 10, 20
	for _, tc := range []struct {
		name    string
		sec     securityConfig
		watches bool
		maxPeak int
	}{
		// 500 watches and up to 1,000 lists at once: a connection per 100 of them.
		{"https", securityConfig{}, true, clients*(watchesPerClient+getsPerClient)/100 + 1},
		{"plain http", securityConfig{NoAuth: true, NoTLS: true}, false, embeddedMaxConns},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			token := tc.sec.token()
			srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: trace.Discard, BearerToken: token})
			if err != nil {
				t.Fatal(err)
			}
			raw, err := fakeapiserver.Listen("")
			if err != nil {
				t.Fatal(err)
			}
			counted := &countingListener{Listener: raw}
			l, sv, err := tc.sec.secure(counted, token, nil)
			if err != nil {
				t.Fatal(err)
			}
			serveCtx, stopServe := context.WithCancel(ctx)
			served := make(chan error, 1)
			go func() { served <- srv.Serve(serveCtx, l) }()
			defer func() { stopServe(); <-served }()
			rc, err := embeddedRestConfig(sv)
			if err != nil {
				t.Fatal(err)
			}
			rc.QPS, rc.Burst = -1, 0
			defer closeIdle(rc.Transport)
			// Over plain HTTP the bound is the transport's, so the connections are counted
			// where it keeps them: the server sees a connection's close only once it reads
			// the end of it, after the transport may have dialled the next one already.
			counter := &counted.connCounter
			if tr, ok := rc.Transport.(*http.Transport); ok {
				counter = &connCounter{}
				dial := tr.DialContext
				tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
					c, err := dial(ctx, network, addr)
					if err != nil {
						return nil, err
					}
					return counter.counted(c), nil
				}
			}

			var wg sync.WaitGroup
			errs := make(chan error, clients*(watchesPerClient+getsPerClient))
			watchCtx, stopWatches := context.WithCancel(ctx)
			defer stopWatches()
			var opened sync.WaitGroup
			for range clients {
				client, err := kubernetes.NewForConfig(rc)
				if err != nil {
					t.Fatal(err)
				}
				if tc.watches {
					for range watchesPerClient {
						opened.Add(1)
						wg.Go(func() {
							w, err := client.CoreV1().Pods("").Watch(watchCtx, metav1.ListOptions{ResourceVersion: "0"})
							opened.Done()
							if err != nil {
								errs <- err
								return
							}
							<-watchCtx.Done()
							w.Stop()
						})
					}
				}
				for range getsPerClient {
					wg.Go(func() {
						if _, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err != nil {
							errs <- err
						}
					})
				}
			}
			opened.Wait()
			stopWatches()
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Errorf("request: %v", err)
			}
			peak, accepted := counter.counts()
			t.Logf("%d requests: %d connections accepted, at most %d open at once", clients*(getsPerClient+watchesPerClient), accepted, peak)
			if peak > tc.maxPeak {
				t.Errorf("connections open at once = %d, want at most %d", peak, tc.maxPeak)
			}
		})
	}
}
