package fakeapiserver_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// bootRV is the resource version of a new server: one write for each system namespace, one for
// its default ServiceAccount, one for its kube-root-ca.crt, and one for the kubernetes Service.
const bootRV = 13

// start is the fixed instant the fake clock of every test starts at.
var start = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// fixture is a server behind httptest with a typed client and a trace recorder.
type fixture struct {
	srv    *fakeapiserver.Server
	ts     *httptest.Server
	client kubernetes.Interface
	clock  *clocktesting.FakeClock
	trace  *trace.Recorder
}

func newFixture(t testing.TB, opts fakeapiserver.Options) *fixture {
	t.Helper()
	f := &fixture{clock: clocktesting.NewFakeClock(start)}
	rec, err := trace.NewRecorder(trace.RecorderOptions{Clock: f.clock, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	f.trace = rec
	if opts.Clock == nil {
		opts.Clock = f.clock
	}
	if opts.Tracer == nil {
		opts.Tracer = f.trace
	}
	f.srv = newServer(t, opts)
	f.ts = httptest.NewServer(f.srv.Handler())
	t.Cleanup(f.ts.Close)
	client, err := kubernetes.NewForConfig(f.restConfig())
	if err != nil {
		t.Fatalf("kubernetes.NewForConfig() = %v", err)
	}
	f.client = client
	return f
}

// newServer returns fakeapiserver.New(opts) and stops the test if it fails.
func newServer(t testing.TB, opts fakeapiserver.Options) *fakeapiserver.Server {
	t.Helper()
	srv, err := fakeapiserver.New(opts)
	if err != nil {
		t.Fatalf("fakeapiserver.New() = %v", err)
	}
	return srv
}

// testOptions returns Options with a virtual clock and no tracing, for tests that need neither.
func testOptions() fakeapiserver.Options {
	return fakeapiserver.Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard}
}

func (f *fixture) restConfig() *rest.Config {
	return &rest.Config{Host: f.ts.URL, QPS: -1}
}

func newPod(namespace, name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}},
		},
	}
}

func (f *fixture) createPod(t testing.TB, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	ns := pod.Namespace
	if ns == "" {
		ns = "default"
	}
	got, err := f.client.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("Create(%s/%s) = %v", pod.Namespace, pod.Name, err)
	}
	return got
}

// createNamespace creates a namespace, as a test must before it creates objects in any namespace
// but the system ones.
func (f *fixture) createNamespace(t testing.TB, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := f.client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s = %v", name, err)
	}
}

// next returns the next watch event, failing the test if the stream ends first.
func next(t testing.TB, w watch.Interface) watch.Event {
	t.Helper()
	ev, ok := <-w.ResultChan()
	if !ok {
		t.Fatalf("watch ended, want an event")
	}
	return ev
}

// podEvent is a watch event reduced to what tests compare.
type podEvent struct {
	Type watch.EventType
	Name string
}

func summarize(t testing.TB, ev watch.Event) podEvent {
	t.Helper()
	pod, ok := ev.Object.(*corev1.Pod)
	if !ok {
		t.Fatalf("watch event %s carries %T, want *v1.Pod (%v)", ev.Type, ev.Object, ev.Object)
	}
	return podEvent{Type: ev.Type, Name: podkey.Of(pod)}
}
