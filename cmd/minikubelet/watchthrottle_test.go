package main

import (
	"context"
	"net/http/httptest"
	"net/url"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestWatchTakesTokensAsClientGo: the in-process pod watch (directPods.Watch, the controllers'
// and the fleet's) waits for the client's rate limiter exactly as often as client-go's typed Watch
// over HTTP does, which is never: client-go throttles lists and writes, not watches.
func TestWatchTakesTokensAsClientGo(t *testing.T) {
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	ctx := context.Background()

	wireLimiter := &fakeLimiter{}
	client, err := kubernetes.NewForConfig(&rest.Config{Host: ts.URL, RateLimiter: wireLimiter})
	if err != nil {
		t.Fatal(err)
	}
	list, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	afterList := wireLimiter.count()
	if afterList == 0 {
		t.Fatal("client-go's List over HTTP took no token: the limiter is not in use")
	}
	w, err := client.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	afterWatch := wireLimiter.count()
	t.Logf("client-go over HTTP: list took %d token(s), watch took %d", afterList, afterWatch-afterList)

	inLimiter := &fakeLimiter{}
	base, _ := url.Parse(ts.URL)
	pods := newDirectPods(srv.Direct(controllersUserAgent), &wire{limiter: inLimiter, clock: clock.RealClock{}, base: base})
	dw, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	dw.Stop()
	for range dw.ResultChan() {
	}
	t.Logf("in process: watch took %d token(s)", inLimiter.count())
	if got, want := inLimiter.count(), afterWatch-afterList; got != want {
		t.Errorf("in-process watch waited for the rate limiter %d time(s); client-go's Watch waits %d", got, want)
	}
}
