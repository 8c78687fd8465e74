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

// waitForWrite blocks until the next write, and reports false when the watch must end instead:
// the client went away, the server is stopping or the watch timed out.
func (s *Server) waitForWrite(ctx context.Context, next <-chan struct{}, timeout <-chan time.Time) bool {
	select {
	case <-next:
		return true
	case <-ctx.Done():
	case <-s.stop:
	case <-timeout:
	}
	return false
}

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

// Serve serves the API on l until ctx is done, then ends every watch, waits for the requests in
// flight and returns. It closes l.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	logger := klog.FromContext(ctx)
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
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
	err := hs.Shutdown(context.WithoutCancel(ctx))
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
