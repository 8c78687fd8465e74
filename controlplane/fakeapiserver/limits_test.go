package fakeapiserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// TestEventsExpireAfterTTL checks that an Event lives EventTTL after its last write, as under
// kube-apiserver's --event-ttl, and that its watchers see it deleted.
func TestEventsExpireAfterTTL(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	events := f.client.CoreV1().Events("default")
	w, err := events.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "pod.1", Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "pod"},
		Reason:         "Pulled", Type: corev1.EventTypeNormal, Count: 1,
	}
	ev, err = events.Create(ctx, ev, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := events.Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "pod.2", Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "pod"},
		Reason:         "Started", Type: corev1.EventTypeNormal, Count: 1,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// An update renews the TTL of the object it writes, and only of that one.
	f.clock.Step(59 * time.Minute)
	ev.Count = 2
	if _, err := events.Update(ctx, ev, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(time.Minute)
	if _, err := events.Get(ctx, other.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get(%s) one hour after its only write = %v, want NotFound", other.Name, err)
	}
	if _, err := events.Get(ctx, ev.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("Get(%s) one hour after its creation, a minute after its update = %v, want it kept", ev.Name, err)
	}
	f.clock.Step(59*time.Minute - time.Second)
	if _, err := events.Get(ctx, ev.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("Get(%s) a second before its TTL = %v, want it kept", ev.Name, err)
	}
	f.clock.Step(time.Second)
	if _, err := events.Get(ctx, ev.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get(%s) one hour after its last write = %v, want NotFound", ev.Name, err)
	}

	var got []string
	for range 5 {
		select {
		case e := <-w.ResultChan():
			got = append(got, fmt.Sprintf("%s %s", e.Type, e.Object.(*corev1.Event).Name))
		case <-time.After(10 * time.Second):
			t.Fatalf("watch of events = %v, then nothing for 10s", got)
		}
	}
	want := []string{"ADDED pod.1", "ADDED pod.2", "MODIFIED pod.1", "DELETED pod.2", "DELETED pod.1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("watch of events = %v, want %v", got, want)
	}
}

// TestServeSweepsExpiredEvents checks that a serving server deletes expired events on its own
// clock, with no request to trigger it, so that a watcher sees them go.
func TestServeSweepsExpiredEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newServer(t, fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: testOptions().Tracer})
		h := srv.Handler()
		l, _ := serve(t, srv)
		body := `{"metadata":{"name":"e"},"involvedObject":{"kind":"Pod","namespace":"default","name":"p"},"reason":"Pulled","type":"Normal"}`
		if w := do(h, "POST", "/api/v1/namespaces/default/events", "application/json", body); w.Code != http.StatusCreated {
			t.Fatalf("create event = %d %s", w.Code, w.Body.String())
		}
		c := l.dial(t, fmt.Sprintf("GET /api/v1/events?watch=1&resourceVersion=%d HTTP/1.1\r\nHost: fake\r\n\r\n", bootRV+1))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(resp.Body)
			if sc.Scan() {
				got <- sc.Text()
			}
			close(got)
		}()
		time.Sleep(fakeapiserver.EventTTL - time.Second)
		synctest.Wait()
		select {
		case line := <-got:
			t.Fatalf("watch a second before the TTL got %s, want nothing yet", line)
		default:
		}
		select {
		case line := <-got:
			if !strings.HasPrefix(line, `{"type":"DELETED"`) {
				t.Errorf("watch after the TTL got %q, want the event DELETED", line)
			}
		case <-time.After(time.Minute):
			t.Error("watch a minute after the TTL got nothing, want the event DELETED")
		}
	})
}

// TestHistoryBoundedInBytes checks that the watch history drops its oldest events once their
// objects add up to more than HistoryBytes, so that a watch from before them gets 410 Gone.
func TestHistoryBoundedInBytes(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{HistoryBytes: 64 << 10})
	h := f.srv.Handler()
	pad := strings.Repeat("x", 8<<10)
	for i := range 20 {
		body := fmt.Sprintf(`{"metadata":{"name":"pod-%d","annotations":{"pad":%q}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`, i, pad)
		if w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json", body); w.Code != http.StatusCreated {
			t.Fatalf("create pod-%d = %d %s", i, w.Code, w.Body.String())
		}
	}
	first := watchFirstEvent(t, f, "1")
	if first.Type != string(watch.Error) || !strings.Contains(string(first.Object.Raw), `"code":410`) {
		t.Errorf("watch from resourceVersion 1 after 160 KiB of pods = %s, want ERROR 410 Gone", first.Type)
	}
	recent := watchFirstEvent(t, f, fmt.Sprint(bootRV+18))
	if recent.Type != string(watch.Added) || !strings.Contains(string(recent.Object.Raw), `"name":"pod-18"`) {
		t.Errorf("watch from resourceVersion %d = %s, want ADDED pod-18", bootRV+18, recent.Type)
	}
}

// watchFirstEvent opens a watch of pods from rv over HTTP and returns its first event.
func watchFirstEvent(t *testing.T, f *fixture, rv string) metav1.WatchEvent {
	t.Helper()
	resp, err := f.ts.Client().Get(f.ts.URL + "/api/v1/pods?watch=1&resourceVersion=" + rv)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ev metav1.WatchEvent
	if err := json.NewDecoder(resp.Body).Decode(&ev); err != nil {
		t.Fatalf("watch from %s: %v", rv, err)
	}
	return ev
}

// TestBodyReadTimeout sends a request body that never completes: the server answers 504 Timeout
// after kube-apiserver's request timeout, not before.
func TestBodyReadTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newServer(t, testOptions())
		l, _ := serve(t, srv)
		c := l.dial(t, "POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: fake\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
		got := make(chan *http.Response, 1)
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				close(got)
				return
			}
			got <- resp
		}()
		time.Sleep(59 * time.Second)
		synctest.Wait()
		select {
		case resp := <-got:
			t.Fatalf("response 59s into a slow body = %v, want none yet", resp)
		default:
		}
		var resp *http.Response
		select {
		case resp = <-got:
		case <-time.After(time.Hour):
			t.Fatal("no response an hour into a slow body, want a 504 Status after 60s")
		}
		if resp == nil {
			t.Fatal("connection closed after the body timeout, want a 504 Status")
		}
		defer resp.Body.Close()
		var st metav1.Status
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusGatewayTimeout || st.Reason != metav1.StatusReasonTimeout {
			t.Errorf("slow body = %d %s %q, want 504 Timeout", resp.StatusCode, st.Reason, st.Message)
		}
	})
}

// TestHeaderReadTimeout sends half a request line: the server closes the connection after
// kube-apiserver's 32s, not before.
func TestHeaderReadTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newServer(t, testOptions())
		l, _ := serve(t, srv)
		c := l.dial(t, "GET /api/v1/pods HTTP/1.1\r\nHo")
		closed := make(chan struct{})
		go func() { _, _ = io.Copy(io.Discard, c); close(closed) }()
		time.Sleep(31 * time.Second)
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("connection closed 31s into a slow header, want it open")
		default:
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		select {
		case <-closed:
		default:
			t.Error("connection open 33s into a slow header, want it closed")
		}
		c.Close()
	})
}

// TestUnauthenticatedClientCannotStarveOthers is the lock-out of a server with a token: a client
// without it opens more connections than the server used to accept (one 401 each, then idle,
// and some that never send a request). A client with the token still connects and is served,
// the oldest unauthenticated connections are closed, and a connection that authenticated before
// the flood is never closed by it.
func TestUnauthenticatedClientCannotStarveOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := testOptions()
		opts.BearerToken = "secret"
		srv := newServer(t, opts)
		l, _ := serve(t, srv)
		const authorized = "GET /healthz HTTP/1.1\r\nHost: fake\r\nAuthorization: Bearer secret\r\n\r\n"
		get := func(c net.Conn, br *bufio.Reader, what string) int {
			t.Helper()
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode
		}
		early := l.dial(t, authorized)
		earlyBR := bufio.NewReader(early)
		if code := get(early, earlyBR, "authorized request before the flood"); code != http.StatusOK {
			t.Fatalf("authorized request = %d, want 200", code)
		}
		flood := fakeapiserver.DefaultMaxUnauthenticatedConnections + 100
		var conns []net.Conn
		for i := range flood {
			if i%2 == 0 {
				conns = append(conns, l.dial(t, ""))
				continue
			}
			c := l.dial(t, "GET /api/v1/pods HTTP/1.1\r\nHost: fake\r\n\r\n")
			if code := get(c, bufio.NewReader(c), "unauthorized request"); code != http.StatusUnauthorized {
				t.Fatalf("request without the token = %d, want 401", code)
			}
			conns = append(conns, c)
		}
		synctest.Wait()
		late := l.dial(t, authorized)
		if code := get(late, bufio.NewReader(late), "authorized request after the flood"); code != http.StatusOK {
			t.Errorf("authorized request on a new connection after the flood = %d, want 200", code)
		}
		if _, err := io.WriteString(early, authorized); err != nil {
			t.Fatalf("the connection that authenticated before the flood was closed: %v", err)
		}
		if code := get(early, earlyBR, "authorized request on the early connection"); code != http.StatusOK {
			t.Errorf("authorized request on the early connection = %d, want 200", code)
		}
		if !closedByServer(t, conns[0]) {
			t.Error("the oldest unauthenticated connection is still open, want it closed")
		}
		for _, c := range conns {
			c.Close()
		}
	})
}

// TestIdleConnectionClosed leaves a connection idle after a request: the server closes it after
// kube-apiserver's 90s, not before.
func TestIdleConnectionClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newServer(t, testOptions())
		l, _ := serve(t, srv)
		c := l.dial(t, "GET /healthz HTTP/1.1\r\nHost: fake\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		closed := make(chan struct{})
		go func() { _, _ = io.Copy(io.Discard, c); close(closed) }()
		time.Sleep(89 * time.Second)
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("connection closed 89s into idleness, want it open")
		default:
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		select {
		case <-closed:
		default:
			t.Error("connection open 91s into idleness, want it closed")
		}
		c.Close()
	})
}
