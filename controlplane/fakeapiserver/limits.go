package fakeapiserver

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/net/http2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// The bounds that keep one client from exhausting the server. docs/fidelity.md lists each with
// what kube-apiserver does.
const (
	// EventTTL is how long an Event lives after its last write: kube-apiserver's --event-ttl
	// default. The real server stores each Event under an etcd lease renewed at every write;
	// here an expired Event is deleted, with a DELETED watch event, on the server's clock.
	EventTTL = time.Hour
	// DefaultHistoryBytes bounds, per resource, the JSON size of the objects the watch history
	// holds (an event counts its object and, for an update or delete, the previous one), when
	// Options.HistoryBytes is zero. Protobuf encodings are not counted because a version the
	// history alone holds keeps none (entry.superseded). kube-apiserver bounds its watch cache by
	// event count only (100 to 102,400 events, sized by a 75s window).
	DefaultHistoryBytes = 32 << 20
	// idleTimeout closes a connection that carried no request for this long: kube-apiserver's
	// value, for HTTP/1.1 and HTTP/2 alike (the keep-alive timeout of Go's clients).
	idleTimeout = 90 * time.Second
	// HTTP/2 as kube-apiserver configures it: at most 100 concurrent streams per connection,
	// and 256 KiB frames and per-stream upload buffers (the 99th percentile of object sizes).
	http2MaxStreams      = 100
	http2StreamBufferLen = 256 << 10
	// readHeaderTimeout is how long a client may take to send its request line and headers:
	// kube-apiserver's value, after which the connection is closed.
	readHeaderTimeout = 32 * time.Second
	// bodyReadTimeout is how long a client may take to send a request body: kube-apiserver's
	// --request-timeout default, which bounds every request that is not long-running. A
	// body still incomplete then is answered 504 Timeout.
	bodyReadTimeout = 60 * time.Second
	// maxHeaderBytes is kube-apiserver's bound on request headers; larger ones get 431.
	maxHeaderBytes = 1 << 20
	// expirySweepPeriod is how often a serving server deletes the Events whose TTL passed.
	// Requests also delete them first, so a client never sees an expired Event.
	expirySweepPeriod = time.Second
)

// expiring is one write of an object with a TTL: the object expires at at unless a later write
// (a newer rv) renewed it.
type expiring struct {
	key string
	rv  uint64
	at  time.Time
}

// expiryQueue lists the writes of one resource oldest first. Every write adds one item, so it is
// ordered by expiry as long as the clock does not go back; an item whose object was written again
// or deleted since is skipped when it comes due.
type expiryQueue struct {
	ttl   time.Duration
	items []expiring
}

func (q *expiryQueue) push(key string, rv uint64, now time.Time) {
	q.items = append(q.items, expiring{key: key, rv: rv, at: now.Add(q.ttl)})
}

// due removes and returns the items that expire at or before now.
func (q *expiryQueue) due(now time.Time) []expiring {
	n := 0
	for n < len(q.items) && !q.items[n].at.After(now) {
		n++
	}
	if n == 0 {
		return nil
	}
	out := append([]expiring(nil), q.items[:n]...)
	clear(q.items[:n])
	q.items = q.items[n:]
	return out
}

// expire deletes every object whose TTL passed, as etcd does when a lease expires: each gets a
// DELETED watch event with a new resource version. The caller holds mu.
func (st *store) expire(now time.Time) {
	for _, res := range st.resources {
		b := st.buckets[res.name]
		if res.view || b.expiry == nil {
			continue
		}
		for _, it := range b.expiry.due(now) {
			e, ok := b.objects[it.key]
			if !ok || e.meta().GetResourceVersion() != formatRV(it.rv) {
				continue // deleted or written again since
			}
			// Encoding an object that was stored already cannot fail.
			_, _ = st.commit(res, watch.Deleted, e.obj.DeepCopyObject(), e)
		}
	}
	st.updateExpiresAt()
}

// pushExpiry queues the write of key at rv in b's expiry queue. The caller holds mu.
func (st *store) pushExpiry(b *bucket, key string, rv uint64) {
	first := len(b.expiry.items) == 0
	b.expiry.push(key, rv, st.now())
	if at := b.expiry.items[0].at; first && (st.expiresAt.Load() == nil || at.Before(*st.expiresAt.Load())) {
		st.expiresAt.Store(&at)
	}
}

// updateExpiresAt sets expiresAt to the earliest head of the expiry queues, after expire took
// items off them. The caller holds mu.
func (st *store) updateExpiresAt() {
	var next *time.Time
	for _, b := range st.buckets {
		if b.expiry == nil || len(b.expiry.items) == 0 {
			continue
		}
		if at := b.expiry.items[0].at; next == nil || at.Before(*next) {
			next = &at
		}
	}
	st.expiresAt.Store(next)
}

// expireNow deletes what expired by the server's clock, and finalizes the namespaces that are
// done. Every request calls it first; when no queued item is due yet and no namespace is
// terminating, there is nothing to do and it returns without the store lock, which the requests
// of a fleet otherwise queue on.
func (s *Server) expireNow() {
	if at := s.store.expiresAt.Load(); (at == nil || at.After(s.clock.Now())) && !s.store.terminating.Load() {
		return
	}
	_ = s.store.locked(func() error {
		s.store.expire(s.clock.Now())
		return s.finalizeNamespaces()
	})
}

// sweepExpired deletes expired objects every expirySweepPeriod until ctx is done, so that watchers
// see them go even when no request arrives. It does nothing on a clock that cannot tick.
func (s *Server) sweepExpired(ctx context.Context) {
	c, ok := s.clock.(clock.WithTicker)
	if !ok {
		return
	}
	t := c.NewTicker(expirySweepPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			s.expireNow()
		}
	}
}

// trimHistory drops the oldest events of b while it holds more than max bytes, keeping at least
// the newest. The caller holds mu.
func (b *bucket) trimHistory(max int64) {
	for b.historyBytes > max && len(b.history) > 1 {
		b.dropOldest()
	}
}

// dropOldest compacts the oldest event away.
func (b *bucket) dropOldest() {
	b.compacted = b.history[0].rv
	b.historyBytes -= b.history[0].size()
	b.history[0] = event{}
	b.history = b.history[1:]
}

// size is what an event holds in encoded bytes: its object and the previous one.
func (ev event) size() int64 {
	n := int64(ev.cur.size)
	if ev.prev != nil {
		n += int64(ev.prev.size)
	}
	return n
}

// limitBodyRead gives the client bodyReadTimeout to send the body of r. It reads the real clock, as
// a connection deadline must, and does nothing for a request served in-process.
func limitBodyRead(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyReadTimeout))
}

// bodyReadError turns the error of reading a request body into the Status the client gets, or
// returns nil when it is not one this file causes.
func bodyReadError(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0)
	}
	return nil
}

// newHTTPServer returns the http.Server that Serve runs, with the bounds of kube-apiserver: the
// time and size of request headers, the idle timeout, and HTTP/2, which a TLS client negotiates
// through ALPN as with kube-apiserver. Connections are tracked by ct (conns.go).
func (s *Server) newHTTPServer(ctx context.Context, ct *connTracker) (*http.Server, error) {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ConnContext:       ct.accept,
		ConnState: func(c net.Conn, state http.ConnState) {
			if state == http.StateClosed || state == http.StateHijacked {
				ct.gone(c)
			}
		},
		ErrorLog: log.New(serverErrorLog{klog.FromContext(ctx)}, "", 0),
	}
	err := http2.ConfigureServer(hs, &http2.Server{
		IdleTimeout:                  idleTimeout,
		MaxConcurrentStreams:         http2MaxStreams,
		MaxUploadBufferPerStream:     http2StreamBufferLen,
		MaxReadFrameSize:             http2StreamBufferLen,
		MaxUploadBufferPerConnection: http2StreamBufferLen * http2MaxStreams,
	})
	if err != nil {
		return nil, fmt.Errorf("configure HTTP/2: %w", err)
	}
	return hs, nil
}

// serverErrorLog takes the http.Server's error log into klog. A failed TLS handshake is the
// client's affair, and kube-apiserver logs it only at level 5: logged louder, any client could
// fill the log. Anything else (an accept error, a panic) is logged as it comes.
type serverErrorLog struct{ logger klog.Logger }

func (l serverErrorLog) Write(p []byte) (int, error) {
	msg := strings.TrimSuffix(string(p), "\n")
	if strings.Contains(msg, "TLS handshake error") {
		l.logger.V(5).Info("TLS handshake failed", "err", msg)
	} else {
		l.logger.Info("HTTP server error", "err", msg)
	}
	return len(p), nil
}
