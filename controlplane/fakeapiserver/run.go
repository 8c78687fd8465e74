package fakeapiserver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// watchWriteTimeout is how long one write to a watch stream may block before the watch is
// dropped as unresponsive. kube-apiserver's cacher drops a watcher whose buffer of 10 to 1000
// events stays full for its dispatch budget (at most 100ms); here the buffer is the connection's
// (the kernel's socket buffers and watchBufferBytes), and the budget is more generous.
const watchWriteTimeout = 5 * time.Second

// shutdownGrace is how long Serve waits, once its context is done, for requests in flight to end
// before it closes their connections.
const shutdownGrace = time.Second

// writeWithin writes p to a response and flushes it, failing with an error that wraps
// os.ErrDeadlineExceeded if the client does not take it within watchWriteTimeout. A connection's
// write deadline is wall time by nature, so this is where the package reads the real clock; it
// decides only when a stuck client is cut off, never what anyone sees. The deadline is cleared
// afterwards, so that the end of a watch that then waited is still written.
func writeWithin(rc *http.ResponseController, w http.ResponseWriter, p []byte) error {
	if err := rc.SetWriteDeadline(time.Now().Add(watchWriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	var err error
	if len(p) > 0 {
		_, err = w.Write(p)
	}
	if err == nil {
		err = rc.Flush()
	}
	if derr := rc.SetWriteDeadline(time.Time{}); err == nil && derr != nil && !errors.Is(derr, http.ErrNotSupported) {
		err = derr
	}
	return err
}

// broadcaster wakes every waiting watch at each write. It is guarded by the store's mutex.
type broadcaster struct {
	ch chan struct{}
}

func newBroadcaster() *broadcaster { return &broadcaster{ch: make(chan struct{})} }

// fire wakes the current waiters and starts a new round.
func (b *broadcaster) fire() {
	close(b.ch)
	b.ch = make(chan struct{})
}

// wait returns the channel closed at the next write.
func (b *broadcaster) wait() <-chan struct{} { return b.ch }

// watchTimer returns a channel that fires after d on the server's clock, or never if d is zero
// or the clock cannot make timers.
func (s *Server) watchTimer(d time.Duration) (<-chan time.Time, func()) {
	c, ok := s.clock.(clock.Clock)
	if d <= 0 || !ok {
		return nil, func() {}
	}
	t := c.NewTimer(d)
	return t.C(), func() { t.Stop() }
}

// Listen opens a TCP listener on addr, 127.0.0.1:0 (a free loopback port) when addr is empty.
func Listen(addr string) (net.Listener, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	return net.Listen("tcp", addr)
}

// Serve serves the API on l until ctx is done, then ends every watch, waits up to shutdownGrace
// for the requests in flight, closes the connections of those still running and returns. It
// closes l. So Serve returns within about a second of ctx ending whatever its clients do.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	logger := klog.FromContext(ctx)
	hs, err := s.newHTTPServer(ctx, newConnTracker(s.maxUnauth))
	if err != nil {
		l.Close()
		return err
	}
	sweepCtx, stopSweep := context.WithCancel(ctx)
	swept := make(chan struct{})
	go func() { defer close(swept); s.sweepExpired(sweepCtx) }()
	defer func() { stopSweep(); <-swept }()
	done := make(chan error, 1)
	go func() { done <- hs.Serve(l) }()
	logger.V(2).Info("Serving fake API server", "address", l.Addr().String())
	select {
	case err := <-done:
		s.stopWatches()
		return err
	case <-ctx.Done():
	}
	s.stopWatches()
	graceCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	err = hs.Shutdown(graceCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		// A request is still writing, most likely to a watch client that stopped reading:
		// closing its connection ends the write at once.
		logger.V(2).Info("Closing connections still busy after the shutdown grace period", "grace", shutdownGrace)
		err = hs.Close()
	}
	if serveErr := <-done; !errors.Is(serveErr, http.ErrServerClosed) && err == nil {
		err = serveErr
	}
	logger.V(2).Info("Stopped fake API server")
	return err
}

// stopWatches ends every open and future watch.
func (s *Server) stopWatches() {
	s.stopOnce.Do(func() { close(s.stop) })
}
