package world

import (
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"k8s.io/utils/clock"
)

// Link is a node's connection to the API server: while it is down every request fails as a
// refused connection does, before reaching the server.
type Link struct {
	next  http.RoundTripper
	clk   clock.PassiveClock
	until time.Time
}

// NewLink returns an up link to the server behind next.
func NewLink(next http.RoundTripper, clk clock.PassiveClock) *Link {
	return &Link{next: next, clk: clk}
}

// CutUntil makes the API server unreachable until t.
func (l *Link) CutUntil(t time.Time) { l.until = t }

// Down reports whether the API server is unreachable now.
func (l *Link) Down() bool { return l.clk.Now().Before(l.until) }

// Until is when the link comes back: a wake-up for the driver while it is down.
func (l *Link) Until() time.Time { return l.until }

// RoundTrip sends the request, or fails it while the link is down.
func (l *Link) RoundTrip(req *http.Request) (*http.Response, error) {
	if l.Down() {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	return l.next.RoundTrip(req)
}
