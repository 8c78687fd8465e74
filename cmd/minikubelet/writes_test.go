package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/nodestatus"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// fakeLimiter is a client-side rate limiter that counts its waits; with gate set, each wait
// announces itself on entered and lets the request go only when gate gives it a verdict.
type fakeLimiter struct {
	mu      sync.Mutex
	waits   int
	entered chan struct{}
	gate    chan error
}

func (l *fakeLimiter) TryAccept() bool { return true }
func (l *fakeLimiter) Accept()         {}
func (l *fakeLimiter) Stop()           {}
func (l *fakeLimiter) QPS() float32    { return kubeAPIQPS }

func (l *fakeLimiter) Wait(ctx context.Context) error {
	l.mu.Lock()
	l.waits++
	l.mu.Unlock()
	if l.gate == nil {
		return nil
	}
	l.entered <- struct{}{}
	return <-l.gate
}

func (l *fakeLimiter) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waits
}

// unreachable is an API server URL nothing listens on: a request that went over HTTP fails.
const unreachable = "https://127.0.0.1:1"

func newDirectFixture(t *testing.T, clk clock.Clock, latency time.Duration, limiter *fakeLimiter) (*fakeapiserver.Server, nodeClients) {
	t.Helper()
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	rc := &rest.Config{Host: unreachable, UserAgent: userAgent}
	c, err := newNodeClients(rc, "n1", nil, srv, clk, latency, 10*time.Second, limiter)
	if err != nil {
		t.Fatal(err)
	}
	if c.writes == nil {
		t.Fatal("newNodeClients with the embedded server made no in-process writes")
	}
	return srv, c
}

// requestTotal is the value of the API server's apiserver_request_total series whose labels
// hold every one of labels, "" when there is none.
func requestTotal(t *testing.T, srv *fakeapiserver.Server, labels ...string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body, err := io.ReadAll(rec.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		all := true
		for _, l := range labels {
			all = all && strings.Contains(line, l)
		}
		if all {
			return line[strings.LastIndex(line, " ")+1:]
		}
	}
	return ""
}

// TestRunWritesInProcess checks that a node of `run` with the embedded API server makes its
// hottest requests in process (the server's URL answers nothing), that the server counts them
// in apiserver_request_total as it counts them from the wire, that the writes carry the field
// manager the User-Agent names, and that every request of the API client waits for its rate
// limiter while the heartbeat client's do not.
func TestRunWritesInProcess(t *testing.T) {
	limiter := &fakeLimiter{}
	srv, c := newDirectFixture(t, clock.RealClock{}, 0, limiter)
	ctx := context.Background()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: testNode}}
	if _, err := c.writes.Heartbeat.CreateNode(ctx, node); err != nil {
		t.Fatalf("heartbeat CreateNode: %v", err)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: testNode}}
	if _, err := c.writes.Heartbeat.CreateLease(ctx, lease); err != nil {
		t.Fatalf("heartbeat CreateLease: %v", err)
	}
	if n := limiter.count(); n != 0 {
		t.Errorf("the heartbeat client's requests waited for the API client's limiter %d times", n)
	}
	if _, err := c.writes.Node.GetNode(ctx, testNode); err != nil {
		t.Fatalf("GetNode: %v", err)
	}
	mirror := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-" + testNode},
		Spec: v1.PodSpec{NodeName: testNode, Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
	created, err := c.writes.Mirror.CreatePod(ctx, mirror)
	if err != nil {
		t.Fatalf("mirror CreatePod: %v", err)
	}
	if got := created.ManagedFields; len(got) != 1 || got[0].Manager != userAgent {
		t.Errorf("mirror pod's managed fields = %+v, want one entry of manager %q", got, userAgent)
	}
	if _, err := c.writes.PodStatus.PatchPodStatus(ctx, "default", mirror.Name, []byte(`{"status":{"phase":"Running"}}`)); err != nil {
		t.Fatalf("PatchPodStatus: %v", err)
	}
	if _, err := c.writes.PodStatus.GetPod(ctx, "default", "missing"); err == nil {
		t.Fatal("GetPod(missing) succeeded")
	}
	ev := &v1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web.1"},
		InvolvedObject: v1.ObjectReference{Kind: "Pod", Namespace: "default", Name: mirror.Name}, Reason: "Started", Type: v1.EventTypeNormal}
	if _, err := c.events.Create(ev); err != nil {
		t.Fatalf("event Create: %v", err)
	}
	if n := limiter.count(); n != 5 {
		t.Errorf("the API client's limiter was waited for %d times, want 5 (GET node, POST and PATCH pod, GET pod, POST event)", n)
	}
	for _, tc := range []struct {
		labels []string
		want   string
	}{
		{[]string{`resource="nodes"`, `subresource=""`, `verb="POST"`, `code="201"`, `scope="resource"`}, "1"},
		{[]string{`resource="nodes"`, `verb="GET"`, `code="200"`}, "1"},
		{[]string{`resource="leases"`, `group="coordination.k8s.io"`, `verb="POST"`, `code="201"`}, "1"},
		{[]string{`resource="pods"`, `subresource=""`, `verb="POST"`, `code="201"`, `scope="resource"`}, "1"},
		{[]string{`resource="pods"`, `subresource="status"`, `verb="PATCH"`, `code="200"`}, "1"},
		{[]string{`resource="pods"`, `verb="GET"`, `code="404"`}, "1"},
		{[]string{`resource="events"`, `verb="POST"`, `code="201"`}, "1"},
	} {
		if got := requestTotal(t, srv, tc.labels...); got != tc.want {
			t.Errorf("apiserver_request_total{%s} = %q, want %q", strings.Join(tc.labels, ","), got, tc.want)
		}
	}
}

// TestRunWritesWaitForTheLimiter checks that an in-process request reaches the server only once
// its client's rate limiter lets it, and fails with client-go's error when the limiter refuses.
func TestRunWritesWaitForTheLimiter(t *testing.T) {
	limiter := &fakeLimiter{entered: make(chan struct{}), gate: make(chan error)}
	srv, c := newDirectFixture(t, clock.RealClock{}, 0, limiter)
	ctx := context.Background()
	getNode := func() <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := c.writes.Node.GetNode(ctx, testNode)
			done <- err
		}()
		<-limiter.entered
		return done
	}
	counted := func() string { return requestTotal(t, srv, `resource="nodes"`, `verb="GET"`) }

	done := getNode()
	if got := counted(); got != "" {
		t.Errorf("a GET waiting for the limiter was counted: %s", got)
	}
	limiter.gate <- nil
	if err := <-done; err == nil || !strings.Contains(err.Error(), `nodes "node1" not found`) {
		t.Errorf("GetNode once let go = %v, want the server's not found", err)
	}
	if got := counted(); got != "1" {
		t.Errorf("GET nodes counted %q times once let go, want 1", got)
	}

	done = getNode()
	limiter.gate <- errors.New("rate: Wait(n=1) would exceed context deadline")
	err := <-done
	if want := "client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context deadline"; err == nil || err.Error() != want {
		t.Errorf("GetNode refused by the limiter = %v, want %q", err, want)
	}
	if got := counted(); got != "1" {
		t.Errorf("GET nodes counted %q times after a refused request, want still 1", got)
	}
}

// TestRunWritesLatency checks --api-latency on the in-process path: a request waits for it on
// the run's clock, and a request cancelled meanwhile fails with the very error text the HTTP
// path gives (the heartbeat client's URL, its timeout parameter included).
func TestRunWritesLatency(t *testing.T) {
	const latency = 50 * time.Millisecond
	cancelled := func(t *testing.T, clk *clocktesting.FakeClock, client nodestatus.Client) error {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := client.CreateNode(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: testNode}})
			done <- err
		}()
		for !clk.HasWaiters() {
			select {
			case err := <-done:
				t.Fatalf("CreateNode returned before waiting out the latency: %v", err)
			default:
			}
			// The request goroutine gets to its timer: no sleep, only a yield.
			runtime.Gosched()
		}
		cancel()
		return <-done
	}

	directClock := clocktesting.NewFakeClock(time.Now())
	srv, c := newDirectFixture(t, directClock, latency, &fakeLimiter{})
	direct := cancelled(t, directClock, c.writes.Heartbeat)
	if got := requestTotal(t, srv, `resource="nodes"`); got != "" {
		t.Errorf("a request cancelled during the latency was counted: %s", got)
	}

	httpClock := clocktesting.NewFakeClock(time.Now())
	rc := &rest.Config{Host: unreachable, UserAgent: userAgent}
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper { return withLatency(rt, httpClock, latency) })
	wired, err := newNodeClients(rc, "n1", nil, nil, httpClock, latency, 10*time.Second, &fakeLimiter{})
	if err != nil {
		t.Fatal(err)
	}
	overHTTP := cancelled(t, httpClock, nodestatus.ClientsetClient{Client: wired.heartbeat})
	if direct == nil || overHTTP == nil || direct.Error() != overHTTP.Error() {
		t.Errorf("cancelled during the latency:\nin process: %v\nover HTTP:  %v", direct, overHTTP)
	}

	// Once the clock moves past the latency, the request is made.
	done := make(chan error, 1)
	go func() {
		_, err := c.writes.Heartbeat.CreateNode(context.Background(), &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: testNode}})
		done <- err
	}()
	for !directClock.HasWaiters() {
		runtime.Gosched()
	}
	directClock.Step(latency)
	if err := <-done; err != nil {
		t.Fatalf("CreateNode after the latency: %v", err)
	}
	if got := requestTotal(t, srv, `resource="nodes"`, `verb="POST"`, `code="201"`); got != "1" {
		t.Errorf("POST nodes counted %q times, want 1", got)
	}
}

// TestRunWritesStayOnTheWireAtV6 checks that at -v 6, where client-go logs every request, a
// node's requests keep going through client-go, so that the log lines are its own.
func TestRunWritesStayOnTheWireAtV6(t *testing.T) {
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	v := fs.Lookup("v")
	old := v.Value.String()
	if err := v.Value.Set("6"); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = v.Value.Set(old) }()
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	c, err := newNodeClients(&rest.Config{Host: unreachable, UserAgent: userAgent}, "n1", nil, srv, clock.RealClock{}, 0, 10*time.Second, &fakeLimiter{})
	if err != nil {
		t.Fatal(err)
	}
	if c.writes != nil {
		t.Error("at -v 6 the node's requests were made in process")
	}
	if c.pods != nil {
		t.Error("at -v 6 the fleet's pod watch was made in process")
	}
	if _, ok := c.events.(*typedcorev1.EventSinkImpl); !ok {
		t.Errorf("at -v 6 the event sink is %T, want client-go's", c.events)
	}
}
