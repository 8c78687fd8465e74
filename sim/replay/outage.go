package replay

import (
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/minikubelet/minikubelet/sim/vclock"
)

// outage is the kubelet's connection to the API server: while it is down every request fails as
// a refused connection does, before reaching the server.
type outage struct {
	next  http.RoundTripper
	clk   *vclock.Clock
	until time.Time
}

// down reports whether the API server is unreachable now.
func (o *outage) down() bool { return o.clk.Now().Before(o.until) }

func (o *outage) RoundTrip(req *http.Request) (*http.Response, error) {
	if o.down() {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	return o.next.RoundTrip(req)
}
