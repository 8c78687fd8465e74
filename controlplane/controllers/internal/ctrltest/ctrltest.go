package ctrltest

import (
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// NewClient starts a fake API server on clk and returns a clientset whose requests it serves in
// process, without a rate limit (QPS -1), so that a test's writes never wait.
func NewClient(t testing.TB, clk *vclock.Clock) kubernetes.Interface {
	t.Helper()
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: srv.Transport(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
