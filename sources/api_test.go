package sources

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/minikubelet/minikubelet/test/podtest"

	gocmp "github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
)

const apiTestNode = "node-a"

func apiPod(ns, name, image string) *v1.Pod {
	return podtest.New(name, podtest.Namespace(ns), podtest.UID(types.UID(ns+"-"+name)), podtest.Node(apiTestNode),
		podtest.Containers(podtest.Container("c", image)))
}

func apiSET(pods ...*v1.Pod) podconfig.Update {
	if pods == nil {
		pods = []*v1.Pod{}
	}
	return podconfig.Update{Op: podconfig.SET, Source: podconfig.APISource, Pods: pods}
}

// TestAPIUpdatesAndMultiplePods ports TestNewSourceApiserver_UpdatesAndMultiplePods to the core.
func TestAPIUpdatesAndMultiplePods(t *testing.T) {
	p1 := apiPod("default", "p", "image/one")
	q := apiPod("default", "q", "image/blah")
	p2 := apiPod("default", "p", "image/two")
	a := newAPI(t, trace.Discard)
	steps := []struct {
		name string
		got  podconfig.Update
		want podconfig.Update
	}{
		{"list", a.Replace([]*v1.Pod{p1}), apiSET(p1)},
		{"add q", a.Add(q), apiSET(p1, q)},
		{"modify p", a.Update(p2), apiSET(p2, q)},
		{"delete p", a.Delete(p2), apiSET(q)},
		{"delete q", a.Delete(q), apiSET()},
	}
	for _, s := range steps {
		if diff := gocmp.Diff(s.want, s.got); diff != "" {
			t.Errorf("%s: SET mismatch (-want +got):\n%s", s.name, diff)
		}
	}
}

// TestAPITwoNamespacesSameName ports TestNewSourceApiserver_TwoNamespacesSameName (bug #2294).
func TestAPITwoNamespacesSameName(t *testing.T) {
	one, two := apiPod("one", "p", "i"), apiPod("two", "p", "i")
	a := newAPI(t, trace.Discard)
	if got := a.Replace([]*v1.Pod{two, one}); len(got.Pods) != 2 {
		t.Errorf("Replace([two/p one/p]) has %d pods, want 2", len(got.Pods))
	}
	if diff := gocmp.Diff(apiSET(two), a.Delete(one)); diff != "" {
		t.Errorf("Delete(one/p) mismatch (-want +got):\n%s", diff)
	}
}

// TestAPIInitialEmptySendsEmptySET ports TestNewSourceApiserverInitialEmptySendsEmptyPodUpdate.
func TestAPIInitialEmptySendsEmptySET(t *testing.T) {
	got := newAPI(t, trace.Discard).Replace(nil)
	if diff := gocmp.Diff(apiSET(), got); diff != "" {
		t.Errorf("Replace(nil) mismatch (-want +got):\n%s", diff)
	}
	if got.Pods == nil {
		t.Error("Replace(nil).Pods = nil, want an empty, non-nil slice")
	}
}

func TestAPISortsAndTraces(t *testing.T) {
	var events []trace.Event
	a := newAPI(t, trace.Func(func(e trace.Event) { events = append(events, e) }))
	a.Replace([]*v1.Pod{apiPod("b", "x", "i"), apiPod("a", "z", "i"), apiPod("a", "y", "i")})
	a.Delete(apiPod("zz", "unknown", "i"))
	base := trace.Event{Component: trace.Sources, Event: "set", Source: "api", Func: "NewSourceApiserver"}
	want := []trace.Event{base, base}
	want[0].Pods = []string{"a/y", "a/z", "b/x"}
	want[1].Pods = []string{"a/y", "a/z", "b/x"}
	if diff := gocmp.Diff(want, events); diff != "" {
		t.Errorf("trace mismatch (-want +got):\n%s", diff)
	}
}

// TestAPIKeepsInputAndReplacesStoredPods checks the sharing contract
// (docs/design/008-shared-pods.md): the store keeps the object it is handed, as the kubelet's
// UndeltaStore keeps the reflector's, never changes it, and replaces it on an update.
func TestAPIKeepsInputAndReplacesStoredPods(t *testing.T) {
	in := apiPod("ns", "p", "i")
	keep := in.DeepCopy()
	a := newAPI(t, trace.Discard)
	first := a.Add(in)
	if first.Pods[0] != in {
		t.Fatal("Add(pod) SET does not carry the pod handed over, want the very object")
	}
	if diff := gocmp.Diff(keep, in); diff != "" {
		t.Errorf("Add changed the pod it was given (-before +after):\n%s", diff)
	}
	// Pods is for callers that keep what they get: a copy.
	got := a.Pods()
	if got[0] == in {
		t.Error("Pods() returned the stored object, want a copy")
	}
	if diff := gocmp.Diff([]*v1.Pod{keep}, got); diff != "" {
		t.Errorf("Pods() (-want +got):\n%s", diff)
	}
	// A SET shares the stored objects read-only, so an update must replace the stored pod and
	// leave the pods of an earlier SET as they were.
	changed := keep.DeepCopy()
	changed.Labels = map[string]string{"version": "2"}
	second := a.Update(changed)
	if first.Pods[0].Labels != nil {
		t.Errorf("an earlier SET's pod has labels %v after Update, want none", first.Pods[0].Labels)
	}
	if got := second.Pods[0].Labels["version"]; got != "2" {
		t.Errorf("Update() SET pod label version = %q, want 2", got)
	}
}

// receiveSET waits for the next SET. Inside a synctest bubble the hour is virtual: it only passes
// when every goroutine is blocked, which means nothing is coming.
func receiveSET(t *testing.T, out <-chan podconfig.Update) podconfig.Update {
	t.Helper()
	select {
	case u := <-out:
		return u
	case <-time.After(time.Hour):
		t.Fatal("no update from the api source")
		return podconfig.Update{}
	}
}

// startAPIRunner runs r until the returned stop function is called; stop waits for Run to return.
func startAPIRunner(t *testing.T, r *APIRunner) (stop func()) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v, want nil", err)
		}
	}
}

func apiPodNames(u podconfig.Update) []string {
	var names []string
	for _, p := range u.Pods {
		names = append(names, podkey.Of(p))
	}
	return names
}

// TestAPIRunnerFakeClientset runs the port of TestNewSourceApiserver_UpdatesAndMultiplePods
// through a reflector over the fake clientset.
func TestAPIRunnerFakeClientset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p1 := apiPod("default", "p", "image/one")
		client := fake.NewClientset(p1)
		out := make(chan podconfig.Update)
		r := newAPIRunner(t, APIRunnerOptions{Core: newAPI(t, trace.Discard), Client: client, NodeName: apiTestNode, Clock: clock.RealClock{}, Out: out})
		stop := startAPIRunner(t, r)
		defer stop()

		if got := receiveSET(t, out); !gocmp.Equal(apiPodNames(got), []string{"default/p"}) || got.Op != podconfig.SET || got.Source != "api" {
			t.Fatalf("first update = %v %s %v, want SET api [default/p]", got.Op, got.Source, apiPodNames(got))
		}
		synctest.Wait() // the watch is open
		pods := client.CoreV1().Pods("default")
		ctx := t.Context()
		steps := []struct {
			name string
			do   func() error
			want []string
		}{
			{"add q", func() error {
				_, err := pods.Create(ctx, apiPod("default", "q", "image/blah"), metav1.CreateOptions{})
				return err
			}, []string{"default/p", "default/q"}},
			{"modify p", func() error {
				_, err := pods.Update(ctx, apiPod("default", "p", "image/two"), metav1.UpdateOptions{})
				return err
			}, []string{"default/p", "default/q"}},
			{"delete p", func() error { return pods.Delete(ctx, "p", metav1.DeleteOptions{}) }, []string{"default/q"}},
			{"delete q", func() error { return pods.Delete(ctx, "q", metav1.DeleteOptions{}) }, nil},
		}
		for _, s := range steps {
			if err := s.do(); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			got := receiveSET(t, out)
			if diff := gocmp.Diff(s.want, apiPodNames(got)); diff != "" {
				t.Errorf("%s: pods mismatch (-want +got):\n%s", s.name, diff)
			}
			if s.name == "modify p" && got.Pods[0].Spec.Containers[0].Image != "image/two" {
				t.Errorf("%s: image = %q, want image/two", s.name, got.Pods[0].Spec.Containers[0].Image)
			}
		}
	})
}

func TestAPIRunnerWaitsForNodeSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		polls := 0
		synced := func() bool { polls++; return polls == 3 }
		out := make(chan podconfig.Update)
		start := time.Now()
		r := newAPIRunner(t, APIRunnerOptions{Core: newAPI(t, trace.Discard), Client: fake.NewClientset(), NodeName: apiTestNode, NodeHasSynced: synced,
			Clock: clock.RealClock{}, Out: out})
		stop := startAPIRunner(t, r)
		defer stop()
		got := receiveSET(t, out)
		if diff := gocmp.Diff(apiSET(), got); diff != "" {
			t.Errorf("first update mismatch (-want +got):\n%s", diff)
		}
		// Polled at 0s, 1s and 2s.
		if waited := time.Since(start); waited != 2*waitForAPIServerSyncPeriod {
			t.Errorf("first SET after %v, want %v", waited, 2*waitForAPIServerSyncPeriod)
		}
	})
}

func TestAPIRunnerStopsWhileWaitingForNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		polls, polled := 0, make(chan struct{})
		synced := func() bool {
			if polls++; polls == 61 {
				close(polled)
			}
			return false
		}
		out := make(chan podconfig.Update)
		start := time.Now()
		r := newAPIRunner(t, APIRunnerOptions{Core: newAPI(t, trace.Discard), Client: fake.NewClientset(), NodeName: apiTestNode,
			NodeHasSynced: synced, Clock: clock.RealClock{}, Out: out})
		stop := startAPIRunner(t, r)
		<-polled
		stop()
		if waited := time.Since(start); waited != 60*waitForAPIServerSyncPeriod {
			t.Errorf("61st poll after %v, want %v", waited, 60*waitForAPIServerSyncPeriod)
		}
		select {
		case u := <-out:
			t.Errorf("got update %v before the node synced, want none", apiPodNames(u))
		default:
		}
	})
}

func TestNewAPIRunnerMissingOptions(t *testing.T) {
	core := newAPI(t, trace.Discard)
	complete := func() APIRunnerOptions {
		return APIRunnerOptions{Core: core, Client: fake.NewClientset(), NodeName: apiTestNode, Clock: clock.RealClock{}, Out: make(chan podconfig.Update)}
	}
	tests := []struct {
		name  string
		clear func(*APIRunnerOptions)
		want  string // the whole error: exactly the missing options are named
	}{
		{"noCore", func(o *APIRunnerOptions) { o.Core = nil }, "api source: options Core: missing required option"},
		{"noClient", func(o *APIRunnerOptions) { o.Client = nil }, "api source: options Client: missing required option"},
		{"noNode", func(o *APIRunnerOptions) { o.NodeName = "" }, "api source: options NodeName: missing required option"},
		{"noClock", func(o *APIRunnerOptions) { o.Clock = nil }, "api source: options Clock: missing required option"},
		{"noOut", func(o *APIRunnerOptions) { o.Out = nil }, "api source: options Out: missing required option"},
		{"nothing", func(o *APIRunnerOptions) { *o = APIRunnerOptions{} },
			"api source: options Core, Client, NodeName, Clock, Out: missing required option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := complete()
			tt.clear(&opts)
			r, err := NewAPIRunner(opts)
			if r != nil || !errors.Is(err, minikubelet.ErrMissingOption) {
				t.Fatalf("NewAPIRunner() = %v, %v, want nil, an error wrapping minikubelet.ErrMissingOption", r, err)
			}
			if err.Error() != tt.want {
				t.Errorf("NewAPIRunner() error = %q, want %q", err, tt.want)
			}
		})
	}
}

// handlerTransport serves requests with an http.Handler in the same process, streaming the
// response body through a pipe, so that watches work inside a synctest bubble (a loopback
// connection would not: a goroutine blocked on the network is not durably blocked).
type handlerTransport struct{ handler http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	pr, pw := io.Pipe()
	rw := &pipeResponse{header: http.Header{}, body: pw, ready: make(chan struct{})}
	go func() {
		t.handler.ServeHTTP(rw, req.WithContext(ctx))
		rw.WriteHeader(http.StatusOK)
		pw.Close()
	}()
	select {
	case <-rw.ready:
	case <-ctx.Done():
		cancel()
		pr.Close()
		return nil, ctx.Err()
	}
	return &http.Response{
		Status: http.StatusText(rw.code), StatusCode: rw.code, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: rw.sent, Body: cancelBody{pr, cancel}, ContentLength: -1, Request: req,
	}, nil
}

// pipeResponse is the http.ResponseWriter of handlerTransport.
type pipeResponse struct {
	header http.Header
	body   *io.PipeWriter
	once   sync.Once
	code   int
	sent   http.Header
	ready  chan struct{}
}

func (w *pipeResponse) Header() http.Header { return w.header }

func (w *pipeResponse) WriteHeader(code int) {
	w.once.Do(func() {
		w.code, w.sent = code, w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeResponse) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// Flush does nothing: every Write already reaches the reader.
func (w *pipeResponse) Flush() {}

// cancelBody ends the handler when the client closes the body, as a closed connection would.
type cancelBody struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (b cancelBody) Close() error {
	b.cancel()
	return b.PipeReader.Close()
}

// watchPartition sits in front of the API server. It logs every pod list and watch, and while it is
// down it holds new watches back (other requests pass), so that writes can happen while the
// source has no watch open.
type watchPartition struct {
	handler http.Handler
	// mu guards down and requests.
	mu       sync.Mutex
	down     chan struct{} // nil while up; closed when the partition heals
	requests []string
}

func (p *watchPartition) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if r.Method == http.MethodGet && r.URL.Path == "/api/v1/pods" {
		kind := "list"
		if q.Get("watch") == "true" {
			kind = "watch"
			if q.Get("sendInitialEvents") == "true" {
				kind = "watchlist"
			}
		}
		p.mu.Lock()
		p.requests = append(p.requests, kind+" rv="+q.Get("resourceVersion"))
		down := p.down
		p.mu.Unlock()
		if down != nil && kind != "list" {
			select {
			case <-down:
			case <-r.Context().Done():
				return
			}
		}
	}
	p.handler.ServeHTTP(w, r)
}

func (p *watchPartition) split() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = make(chan struct{})
}

func (p *watchPartition) heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.down)
	p.down = nil
}

func (p *watchPartition) log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// apiEnv is a fake API server, a client for it and a running API source whose SETs go through a
// podconfig.Storage, as in the kubelet.
type apiEnv struct {
	srv     *fakeapiserver.Server
	gate    *watchPartition
	client  kubernetes.Interface
	runner  *APIRunner
	out     chan podconfig.Update
	storage *podconfig.Storage
}

func newAPIEnv(t *testing.T, history int, pods ...*v1.Pod) (*apiEnv, func()) {
	t.Helper()
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: trace.Discard, HistorySize: history})
	if err != nil {
		t.Fatalf("fakeapiserver.New() = %v", err)
	}
	e := &apiEnv{srv: srv, out: make(chan podconfig.Update)}
	e.gate = &watchPartition{handler: e.srv.Handler()}
	client, err := kubernetes.NewForConfig(&rest.Config{
		Host:          "http://apiserver.test",
		Transport:     handlerTransport{e.gate},
		QPS:           -1,
		ContentConfig: rest.ContentConfig{ContentType: "application/json"},
	})
	if err != nil {
		t.Fatalf("kubernetes.NewForConfig() = %v", err)
	}
	e.client = client
	for _, p := range pods {
		e.create(t, p)
	}
	if e.storage, err = podconfig.NewStorage(podconfig.StorageOptions{Clock: clock.RealClock{}, Tracer: trace.Discard}); err != nil {
		t.Fatalf("podconfig.NewStorage() = %v", err)
	}
	e.runner = newAPIRunner(t, APIRunnerOptions{Core: newAPI(t, trace.Discard), Client: client, NodeName: apiTestNode, Clock: clock.RealClock{}, Out: e.out})
	return e, startAPIRunner(t, e.runner)
}

func (e *apiEnv) create(t *testing.T, p *v1.Pod) {
	t.Helper()
	// As on a real server, the pod's namespace must exist first.
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.Namespace}}
	if _, err := e.client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s: %v", p.Namespace, err)
	}
	if _, err := e.client.CoreV1().Pods(p.Namespace).Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating %s/%s: %v", p.Namespace, p.Name, err)
	}
}

func (e *apiEnv) delete(t *testing.T, ns, name string, grace int64) {
	t.Helper()
	if err := e.client.CoreV1().Pods(ns).Delete(t.Context(), name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatalf("deleting %s/%s: %v", ns, name, err)
	}
}

// modify reads a pod, changes it and writes it back, through the status subresource if status.
func (e *apiEnv) modify(t *testing.T, ns, name string, status bool, change func(*v1.Pod)) {
	t.Helper()
	pods := e.client.CoreV1().Pods(ns)
	p, err := pods.Get(t.Context(), name, metav1.GetOptions{})
	if err == nil {
		change(p)
		if status {
			_, err = pods.UpdateStatus(t.Context(), p, metav1.UpdateOptions{})
		} else {
			_, err = pods.Update(t.Context(), p, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		t.Fatalf("modifying %s/%s: %v", ns, name, err)
	}
}

// next receives the next SET, checks its pods, merges it and returns what podconfig emitted, one
// "OP ns/name,..." string per update.
func (e *apiEnv) next(t *testing.T, step string, wantPods ...string) []string {
	t.Helper()
	u := receiveSET(t, e.out)
	if u.Op != podconfig.SET || u.Source != podconfig.APISource {
		t.Errorf("%s: update is %v from %q, want SET from api", step, u.Op, u.Source)
	}
	if diff := gocmp.Diff(wantPods, apiPodNames(u)); diff != "" {
		t.Errorf("%s: SET pods mismatch (-want +got):\n%s", step, diff)
	}
	var ops []string
	for _, m := range e.storage.Merge(podconfig.APISource, u) {
		ops = append(ops, m.Op.String()+" "+strings.Join(apiPodNames(m), ","))
	}
	return ops
}

// quiet checks that, once everything has settled, no further SET is waiting and the source has
// applied the server's latest write.
func (e *apiEnv) quiet(t *testing.T, step string) {
	t.Helper()
	synctest.Wait()
	select {
	case u := <-e.out:
		t.Errorf("%s: unexpected extra SET %v", step, apiPodNames(u))
	default:
	}
	if got, want := e.runner.LastSyncResourceVersion(), strconv.FormatUint(e.srv.ResourceVersion(), 10); got != want {
		t.Errorf("%s: LastSyncResourceVersion() = %s, want the server's %s", step, got, want)
	}
}

func checkAPIOps(t *testing.T, step string, got []string, want ...string) {
	t.Helper()
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("%s: podconfig updates mismatch (-want +got):\n%s", step, diff)
	}
}

func apiPodOnNode(p *v1.Pod, node string) *v1.Pod {
	p = p.DeepCopy()
	p.Spec.NodeName = node
	return p
}

// TestAPIRunnerPodLifecycle follows an API pod through a real client and podconfig: created
// (ADD), relabelled (UPDATE), status written (RECONCILE), gracefully deleted (DELETE), removed
// (REMOVE); and a pod bound to another node never arrives.
func TestAPIRunnerPodLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, stop := newAPIEnv(t, 0, apiPod("ns", "a", "i"), apiPodOnNode(apiPod("ns", "x", "i"), "node-b"))
		defer stop()
		checkAPIOps(t, "initial", e.next(t, "initial", "ns/a"), "ADD ns/a")

		e.modify(t, "ns", "a", false, func(p *v1.Pod) { p.Labels = map[string]string{"tier": "web"} })
		checkAPIOps(t, "label", e.next(t, "label", "ns/a"), "UPDATE ns/a")

		e.modify(t, "ns", "a", true, func(p *v1.Pod) { p.Status.Phase = v1.PodRunning })
		checkAPIOps(t, "status", e.next(t, "status", "ns/a"), "RECONCILE ns/a")

		e.delete(t, "ns", "a", 30)
		checkAPIOps(t, "graceful delete", e.next(t, "graceful delete", "ns/a"), "DELETE ns/a")

		// The grace-0 delete writes deletionGracePeriodSeconds 0 first (a DELETE), then removes it.
		e.delete(t, "ns", "a", 0)
		checkAPIOps(t, "grace 0", e.next(t, "grace 0", "ns/a"), "DELETE ns/a")
		checkAPIOps(t, "removed", e.next(t, "removed"), "REMOVE ns/a")

		e.create(t, apiPodOnNode(apiPod("ns", "y", "i"), "node-b"))
		e.create(t, apiPod("ns", "b", "i"))
		checkAPIOps(t, "other node, then b", e.next(t, "other node, then b", "ns/b"), "ADD ns/b")
		e.quiet(t, "end")
		if diff := gocmp.Diff([]string{"watchlist rv="}, e.gate.log()); diff != "" {
			t.Errorf("requests mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestAPIRunnerSurvivesWatchDrop closes the watch, writes while no watch is open, and checks that
// the reflector resumes from its last version and delivers every missed change once, in order.
func TestAPIRunnerSurvivesWatchDrop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, stop := newAPIEnv(t, 0, apiPod("ns", "a", "i"), apiPod("ns", "b", "i"))
		defer stop()
		checkAPIOps(t, "initial", e.next(t, "initial", "ns/a", "ns/b"), "ADD ns/a,ns/b")
		e.create(t, apiPod("ns", "c", "i"))
		checkAPIOps(t, "add c", e.next(t, "add c", "ns/a", "ns/b", "ns/c"), "ADD ns/c")
		synctest.Wait()
		resumeRV := e.runner.LastSyncResourceVersion()

		e.gate.split()
		e.srv.CloseWatches()
		synctest.Wait() // the source is re-watching, held at the partition
		e.create(t, apiPod("ns", "d", "i"))
		e.delete(t, "ns", "a", 0)
		e.modify(t, "ns", "b", false, func(p *v1.Pod) { p.Labels = map[string]string{"l": "v"} })
		e.gate.heal()

		checkAPIOps(t, "add d", e.next(t, "add d", "ns/a", "ns/b", "ns/c", "ns/d"), "ADD ns/d")
		checkAPIOps(t, "delete a", e.next(t, "delete a", "ns/a", "ns/b", "ns/c", "ns/d"), "DELETE ns/a")
		checkAPIOps(t, "remove a", e.next(t, "remove a", "ns/b", "ns/c", "ns/d"), "REMOVE ns/a")
		checkAPIOps(t, "label b", e.next(t, "label b", "ns/b", "ns/c", "ns/d"), "UPDATE ns/b")
		e.quiet(t, "after the drop")
		if diff := gocmp.Diff([]string{"watchlist rv=", "watch rv=" + resumeRV}, e.gate.log()); diff != "" {
			t.Errorf("requests mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestAPIRunnerRelistsAfterGone lets the server's history move past the source's version while
// its watch is down: the resumed watch gets 410 Gone, the reflector relists, and the relist gives
// one SET with exactly the current pods.
func TestAPIRunnerRelistsAfterGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, stop := newAPIEnv(t, 2, apiPod("ns", "a", "i"), apiPod("ns", "b", "i"))
		defer stop()
		checkAPIOps(t, "initial", e.next(t, "initial", "ns/a", "ns/b"), "ADD ns/a,ns/b")
		// One event on the watch, so that its end is a normal close and the reflector resumes
		// from its version rather than relisting at once.
		e.create(t, apiPod("ns", "c", "i"))
		checkAPIOps(t, "add c", e.next(t, "add c", "ns/a", "ns/b", "ns/c"), "ADD ns/c")
		synctest.Wait()
		resumeRV := e.runner.LastSyncResourceVersion()

		e.gate.split()
		e.srv.CloseWatches()
		synctest.Wait()
		// Five writes (a grace-0 delete is two) push resumeRV out of a history of two.
		e.delete(t, "ns", "a", 0)
		e.delete(t, "ns", "b", 0)
		e.create(t, apiPod("ns", "d", "i"))
		e.gate.heal()

		checkAPIOps(t, "relist", e.next(t, "relist", "ns/c", "ns/d"), "REMOVE ns/a,ns/b", "ADD ns/d")
		e.quiet(t, "after the relist")
		want := []string{"watchlist rv=", "watch rv=" + resumeRV, "watchlist rv=" + resumeRV}
		if diff := gocmp.Diff(want, e.gate.log()); diff != "" {
			t.Errorf("requests mismatch (-want +got):\n%s", diff)
		}
	})
}

func ExampleAPI() {
	a, err := NewAPI(APIOptions{Tracer: trace.Discard})
	if err != nil {
		panic(err)
	}
	web := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	db := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"}}
	for _, u := range []podconfig.Update{a.Replace(nil), a.Add(web), a.Add(db), a.Delete(web)} {
		fmt.Println(u.Op, u.Source, apiPodNames(u))
	}
	// Output:
	// SET api []
	// SET api [shop/web]
	// SET api [shop/db shop/web]
	// SET api [shop/db]
}
