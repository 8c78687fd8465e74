package realcluster

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// client-go keeps idle connections to the API servers the tests started (their read and
	// write loops end when the server closes them, after the test), and klog its flush daemon.
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
	)
}
