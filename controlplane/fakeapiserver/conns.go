package fakeapiserver

import (
	"container/list"
	"context"
	"net"
	"sync"
)

// Connections are not capped, as kube-apiserver caps none: a cap is a pool one client can fill,
// and a client without the token did fill it (1,017 idle connections, one 401 each) until
// kubectl with the token could no longer connect. What one unauthenticated client can hold is
// bounded instead: connections that have not yet carried an authenticated request are at most
// maxUnauthenticated, and the next one to arrive closes the oldest of them. A connection is
// trusted for good once one of its requests carries the token (or, without a token, once it
// sends a request), so clients with the token are never closed by this, and a new connection of
// theirs is at risk only during its first request, from a flood faster than that request.

// DefaultMaxUnauthenticatedConnections bounds the connections that have not yet carried an
// authenticated request, when Options.MaxUnauthenticatedConnections is zero.
const DefaultMaxUnauthenticatedConnections = 1024

// connTracker follows the connections of one Serve.
type connTracker struct {
	max int

	mu        sync.Mutex                 // guards untrusted and byConn
	untrusted *list.List                 // of *trackedConn, oldest first
	byConn    map[net.Conn]*list.Element // the untrusted ones
}

// trackedConn is one accepted connection. el is its place in the tracker's untrusted list, nil
// once trusted or gone; it is guarded by the tracker's mu.
type trackedConn struct {
	ct   *connTracker
	conn net.Conn
	el   *list.Element
}

// connKey is the request context key of a request's trackedConn.
type connKey struct{}

func newConnTracker(max int) *connTracker {
	return &connTracker{max: max, untrusted: list.New(), byConn: map[net.Conn]*list.Element{}}
}

// accept records a new connection as untrusted, closing the oldest untrusted one when there are
// too many, and returns its context. It is the http.Server's ConnContext.
func (ct *connTracker) accept(ctx context.Context, c net.Conn) context.Context {
	tc := &trackedConn{ct: ct, conn: c}
	var evicted net.Conn
	ct.mu.Lock()
	tc.el = ct.untrusted.PushBack(tc)
	ct.byConn[c] = tc.el
	if ct.untrusted.Len() > ct.max {
		o := ct.untrusted.Front().Value.(*trackedConn)
		ct.forget(o)
		evicted = o.conn
	}
	ct.mu.Unlock()
	if evicted != nil {
		_ = evicted.Close()
	}
	return context.WithValue(ctx, connKey{}, tc)
}

// forget takes tc off the untrusted list. The caller holds mu.
func (ct *connTracker) forget(tc *trackedConn) {
	if tc.el == nil {
		return
	}
	ct.untrusted.Remove(tc.el)
	delete(ct.byConn, tc.conn)
	tc.el = nil
}

// trustConn marks the connection of a request that authenticated. A request served without a
// connection (in-process) has none and changes nothing.
func trustConn(ctx context.Context) {
	tc, ok := ctx.Value(connKey{}).(*trackedConn)
	if !ok {
		return
	}
	tc.ct.mu.Lock()
	defer tc.ct.mu.Unlock()
	tc.ct.forget(tc)
}

// gone forgets a connection that closed or was hijacked; it is the http.Server's ConnState hook
// for those states.
func (ct *connTracker) gone(c net.Conn) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if el, ok := ct.byConn[c]; ok {
		ct.forget(el.Value.(*trackedConn))
	}
}
