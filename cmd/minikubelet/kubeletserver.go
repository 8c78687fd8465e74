package main

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"k8s.io/klog/v2"
)

// The kubelet server's timeouts (pkg/kubelet/server): idle 90s, read and write 4h, 1 MiB headers.
const (
	serverIdleTimeout    = 90 * time.Second
	serverStreamTimeout  = 4 * time.Hour
	serverMaxHeaderBytes = 1 << 20
	// serverWriteBlockTimeout is how long one write of a response may wait for a client that
	// does not read before the connection is closed; the kubelet lets it wait for the whole
	// 4h write timeout, holding what it was writing. The API server allows a watch the same.
	serverWriteBlockTimeout = 5 * time.Second
	// serverShutdownGrace is how long requests in flight get at shutdown before their
	// connections are closed, as the API server gives them.
	serverShutdownGrace = time.Second
)

// serveKubelet serves h on l with the kubelet server's bounds until ctx is done, over TLS with
// tlsConfig (plain HTTP when nil). Then requests in flight get serverShutdownGrace, and the
// connections of those still running (a follower of a log ends with ctx; a client that reads
// slowly may not) are closed: the server stops within about a second whatever its clients do,
// and that is no error.
func serveKubelet(ctx context.Context, l net.Listener, h http.Handler, tlsConfig *tls.Config) error {
	srv := &http.Server{
		Handler:        boundWrites(h),
		TLSConfig:      tlsConfig,
		IdleTimeout:    serverIdleTimeout,
		ReadTimeout:    serverStreamTimeout,
		WriteTimeout:   serverStreamTimeout,
		MaxHeaderBytes: serverMaxHeaderBytes,
		BaseContext:    func(net.Listener) context.Context { return ctx },
		// A client that fails the handshake (curl without the authority) is its own business.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	errc := make(chan error, 1)
	go func() {
		if tlsConfig != nil {
			errc <- srv.ServeTLS(l, "", "")
			return
		}
		errc <- srv.Serve(l)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), serverShutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		klog.FromContext(ctx).V(2).Info("Closing kubelet server connections still busy after the shutdown grace period", "grace", serverShutdownGrace)
		err = srv.Close()
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// boundWrites gives every write of a response serverWriteBlockTimeout to reach the client, and
// no more than the request's write timeout allows: a client that stops reading then loses its
// connection, and with it what the handler was writing, instead of holding it for hours.
func boundWrites(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&boundedWriter{ResponseWriter: w, rc: http.NewResponseController(w), end: time.Now().Add(serverStreamTimeout)}, r)
	})
}

// boundedWriter sets the connection's write deadline before each write and flush. The deadline
// is wall time by nature; between writes it does not matter, since the next write sets it anew,
// and the last one also bounds the flush that ends the response.
type boundedWriter struct {
	http.ResponseWriter
	rc  *http.ResponseController
	end time.Time // the request's WriteTimeout
}

func (b *boundedWriter) deadline() {
	d := time.Now().Add(serverWriteBlockTimeout)
	if d.After(b.end) {
		d = b.end
	}
	_ = b.rc.SetWriteDeadline(d)
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	b.deadline()
	return b.ResponseWriter.Write(p)
}

// Flush flushes, for the log followers that flush after each batch.
func (b *boundedWriter) Flush() {
	b.deadline()
	_ = b.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (b *boundedWriter) Unwrap() http.ResponseWriter { return b.ResponseWriter }

// defaultSnapshotPeriod is how long `run` reuses a node's snapshot: a request to the node's server
// finds one younger than this, or the sync loop takes one for it between passes. Taking one copies
// the statuses that changed; the server's view is at most this old, as when every node took one
// after its passes at most once per period.
const defaultSnapshotPeriod = 500 * time.Millisecond
