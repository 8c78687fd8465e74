package pipenet

import (
	"context"
	"net"
	"sync"
)

// Listener hands each Dial's server end to Accept.
type Listener struct {
	conns     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

// New returns an open listener.
func New() *Listener {
	return &Listener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept returns the server's end of the next dialled pipe, or net.ErrClosed once closed.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and Dial; pipes handed out stay open.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return nil
}

// Addr is a placeholder: a pipe has no address.
func (l *Listener) Addr() net.Addr { return addr{} }

// Dial hands the listener the server's end of a new pipe and returns the client's. Its
// signature is http.Transport.DialContext's; the network and address are ignored.
func (l *Listener) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type addr struct{}

func (addr) Network() string { return "pipe" }
func (addr) String() string  { return "pipe" }
