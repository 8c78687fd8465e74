package fakeapiserver_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/klog/v2/ktesting"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/test/pipenet"
)

// pipeListener serves a test's requests over pipes (pipenet), written raw on the connection.
type pipeListener struct{ *pipenet.Listener }

func newPipeListener() *pipeListener { return &pipeListener{pipenet.New()} }

// dial connects a client to the listener and sends req on the connection.
func (l *pipeListener) dial(t *testing.T, req string) net.Conn {
	t.Helper()
	client, err := l.Dial(context.Background(), "", "")
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { client.Close() })
	if _, err := io.WriteString(client, req); err != nil {
		t.Fatalf("send %q: %v", req, err)
	}
	return client
}

const watchRequest = "GET /api/v1/pods?watch=1 HTTP/1.1\r\nHost: fake\r\n\r\n"

// serve starts srv.Serve on a pipe listener and returns the listener and a function that cancels
// Serve's context and returns Serve's result, which the test's cleanup calls too.
func serve(t *testing.T, srv *fakeapiserver.Server) (*pipeListener, func() error) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	l := newPipeListener()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	stop := sync.OnceValue(func() error {
		cancel()
		return <-done
	})
	t.Cleanup(func() { _ = stop() })
	return l, stop
}

// closedByServer reports whether the server closed c: a read then ends at once, where on an open
// connection it would wait for the deadline.
func closedByServer(t *testing.T, c net.Conn) bool {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(time.Hour)); errors.Is(err, io.ErrClosedPipe) {
		return true
	} else if err != nil {
		t.Fatal(err)
	}
	_, err := io.ReadAll(c)
	return err == nil
}

// readEvents reads n watch events from r and returns their types and pod names.
func readEvents(t *testing.T, sc *bufio.Scanner, n int) []string {
	t.Helper()
	var got []string
	for range n {
		if !sc.Scan() {
			t.Fatalf("watch ended after %v: %v, want %d events", got, sc.Err(), n)
		}
		line := sc.Text()
		typ := line[len(`{"type":"`):strings.Index(line, `","object"`)]
		name := line[strings.Index(line, `"name":"`)+len(`"name":"`):]
		got = append(got, typ+" "+name[:strings.Index(name, `"`)])
	}
	return got
}

// TestStuckWatcherIsDropped opens a watch that never reads beside one that does. The reader gets
// every event while the other is blocked; once its write times out the stuck watch is dropped
// (its connection ends), and the server goes on and stops as usual.
func TestStuckWatcherIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newServer(t, testOptions())
		h := srv.Handler()
		l, stop := serve(t, srv)

		stuck := l.dial(t, watchRequest)
		healthy := l.dial(t, watchRequest)
		resp, err := http.ReadResponse(bufio.NewReader(healthy), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("watch response = %v, %v, want 200", resp, err)
		}
		sc := bufio.NewScanner(resp.Body)

		for i := range 3 {
			if w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json", podBody(i)); w.Code != http.StatusCreated {
				t.Fatalf("create pod-%d = %d %s", i, w.Code, w.Body.String())
			}
		}
		if got, want := readEvents(t, sc, 3), []string{"ADDED pod-0", "ADDED pod-1", "ADDED pod-2"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("healthy watch with a stuck one beside it = %v, want %v", got, want)
		}

		// Let the bubble's clock pass any write timeout: the stuck watch's first write (its
		// response header) is still waiting for a reader.
		time.Sleep(time.Minute)
		synctest.Wait()
		if !closedByServer(t, stuck) {
			t.Errorf("stuck watch after its write timeout: connection open, want it closed")
		}

		if w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json", podBody(3)); w.Code != http.StatusCreated {
			t.Fatalf("create pod-3 = %d %s", w.Code, w.Body.String())
		}
		if got := readEvents(t, sc, 1); fmt.Sprint(got) != "[ADDED pod-3]" {
			t.Errorf("healthy watch after the stuck one was dropped = %v, want [ADDED pod-3]", got)
		}
		more := make(chan bool)
		go func() { more <- sc.Scan() }()
		if err := stop(); err != nil {
			t.Errorf("Serve() = %v, want nil after cancel", err)
		}
		if <-more {
			t.Errorf("healthy watch after Serve returned = %q, want the stream ended", sc.Text())
		}
	})
}

// TestServeReturnsWithStuckWatcher cancels Serve while a watch client reads nothing: Serve must
// still return, after its grace period, rather than wait for the client.
func TestServeReturnsWithStuckWatcher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newServer(t, testOptions())
		l, stop := serve(t, srv)
		stuck := l.dial(t, watchRequest)
		synctest.Wait() // the watch is blocked writing its response header
		if err := stop(); err != nil {
			t.Errorf("Serve() = %v, want nil after cancel", err)
		}
		if !closedByServer(t, stuck) {
			t.Errorf("stuck watch after Serve returned: connection open, want it closed")
		}
	})
}
