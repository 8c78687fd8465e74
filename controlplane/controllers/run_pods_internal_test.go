package controllers

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/test/pipenet"
)

// sharedPods is the embedded API server's in-process list and watch of pods (what
// RunnerOptions.Pods is in `run`), recording what it was asked and every pod it handed over,
// with a copy of it as it was then, and holding a new watch while hold is set.
type sharedPods struct {
	direct *fakeapiserver.Direct

	mu      sync.Mutex
	lists   []metav1.ListOptions
	watches []metav1.ListOptions
	current watch.Interface
	hold    chan struct{}
	handed  []handedPod
}

type handedPod struct {
	pod     *v1.Pod
	managed []metav1.ManagedFieldsEntry
	was     *v1.Pod
}

func (p *sharedPods) record(pod *v1.Pod) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handed = append(p.handed, handedPod{pod: pod, managed: pod.ManagedFields, was: pod.DeepCopy()})
}

func (p *sharedPods) List(ctx context.Context, opts metav1.ListOptions) (*v1.PodList, error) {
	p.mu.Lock()
	p.lists = append(p.lists, opts)
	p.mu.Unlock()
	list, err := p.direct.ListPods(ctx, metav1.NamespaceAll, opts)
	for i := range list.Items {
		p.record(&list.Items[i])
	}
	return list, err
}

func (p *sharedPods) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	p.mu.Lock()
	p.watches = append(p.watches, opts)
	hold := p.hold
	p.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	w, err := p.direct.WatchPods(ctx, metav1.NamespaceAll, opts)
	if err != nil {
		return nil, err
	}
	// The pods are recorded as the receiver takes them, before its transform.
	rw := watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if pod, ok := ev.Object.(*v1.Pod); ok && ev.Type != watch.Bookmark {
			p.record(pod)
		}
		return ev, true
	})
	p.mu.Lock()
	p.current = rw
	p.mu.Unlock()
	return rw, nil
}

// dropWatch ends the current watch, as a broken connection does, and holds the next one until
// release is closed.
func (p *sharedPods) dropWatch(release chan struct{}) {
	p.mu.Lock()
	w := p.current
	p.hold = release
	p.mu.Unlock()
	w.Stop()
}

func (p *sharedPods) calls() (lists, watches []metav1.ListOptions) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]metav1.ListOptions(nil), p.lists...), append([]metav1.ListOptions(nil), p.watches...)
}

// changed lists the pods handed over that are not as they were: the receiver may drop the managed
// fields from its own struct, and change nothing else.
func (p *sharedPods) changed() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, h := range p.handed {
		now := *h.pod
		now.ManagedFields = h.managed
		if !apiequality.Semantic.DeepEqual(h.was, &now) {
			out = append(out, fmt.Sprintf("%s/%s@%s:\n%s", h.was.Namespace, h.was.Name, h.was.ResourceVersion, cmp.Diff(h.was, &now)))
		}
	}
	return out
}

// waitFor waits, in a synctest bubble, until cond holds: it checks once every goroutine of the
// bubble is blocked, and lets the bubble's clock move on (the informer's resync, a watch's
// backoff) while it does not, for at most 30 s of that clock.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for synctest.Wait(); !cond(); synctest.Wait() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 30s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// servePipes serves srv over net.Pipe connections, which a synctest bubble can wait on where it
// cannot on a socket, until ctx ends, and returns a clientset that dials them.
func servePipes(t *testing.T, ctx context.Context, srv *fakeapiserver.Server) kubernetes.Interface {
	t.Helper()
	l := pipenet.New()
	ctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l) }()
	tr := &http.Transport{DialContext: l.Dial}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		stop()
		if err := <-served; err != nil {
			t.Errorf("Serve() = %v", err)
		}
	})
	client, err := kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: tr, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func newPod(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{NodeName: "node-1", Containers: []v1.Container{{Name: "c", Image: "nginx"}}}}
}

// TestPodInformerInProcess runs the controllers' pods informer over the embedded API server's
// in-process list and watch (RunnerOptions.Pods) and wants what the HTTP watch gives it: the
// watch-list's initial events and bookmark (or a list, with the feature off), resource versions,
// a resumed watch after a dropped one, a relist after a resume that found the history compacted
// (410 Gone), and the resync; and the stored pods, handed over shared, left as they were, with
// the cache's copies without managed fields.
func TestPodInformerInProcess(t *testing.T) { synctest.Test(t, testPodInformerInProcess) }

func testPodInformerInProcess(t *testing.T) {
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: trace.Discard, HistorySize: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// Only for the watch-list semantics' check (a real clientset supports them); nothing goes
	// through it.
	client, err := kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: srv.Transport(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	direct := srv.Direct("test")
	if _, err := direct.CreatePod(ctx, newPod("p0")); err != nil {
		t.Fatal(err)
	}

	pods := &sharedPods{direct: direct}
	inf := podInformer(pods, client, 100*time.Millisecond)
	if err := inf.SetTransform(cacheTransform(false)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	resyncs := 0
	if _, err := inf.AddEventHandlerWithResyncPeriod(cache.ResourceEventHandlerFuncs{UpdateFunc: func(old, cur any) {
		if old == cur {
			mu.Lock()
			resyncs++
			mu.Unlock()
		}
	}}, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the informer did not sync")
	}
	lists, watches := pods.calls()
	if clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
		// Synced by the initial events' end bookmark of a watch-list, with no list.
		if len(lists) != 0 || len(watches) != 1 || watches[0].SendInitialEvents == nil || !*watches[0].SendInitialEvents || !watches[0].AllowWatchBookmarks {
			t.Errorf("calls to sync: lists %v, watches %v; want one watch-list (sendInitialEvents, bookmarks)", lists, watches)
		}
	} else if len(lists) != 1 {
		t.Errorf("calls to sync: lists %v, watches %v; want one list", lists, watches)
	}
	rvNow := func() string { return strconv.FormatUint(srv.ResourceVersion(), 10) }
	cached := func(name string) *v1.Pod {
		obj, ok, _ := inf.GetIndexer().GetByKey("default/" + name)
		if !ok {
			return nil
		}
		return obj.(*v1.Pod)
	}
	if p := cached("p0"); p == nil || p.ResourceVersion == "" || p.ManagedFields != nil {
		t.Errorf("cached p0 = %v; want it with its resource version and without managed fields", p)
	}

	// A change comes as a watch event; the informer's resource version follows the server's.
	if _, err := direct.CreatePod(ctx, newPod("p1")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "p1 cached", func() bool { return cached("p1") != nil })
	if got, want := inf.LastSyncResourceVersion(), rvNow(); got != want {
		t.Errorf("informer's resource version = %s, want the server's %s", got, want)
	}
	if got, want := cached("p1").ResourceVersion, rvNow(); got != want {
		t.Errorf("cached p1's resource version = %s, want %s", got, want)
	}

	// A dropped watch resumes from the last resource version, with no list.
	release := make(chan struct{})
	_, before := pods.calls()
	pods.dropWatch(release)
	waitFor(t, "a new watch after the dropped one", func() bool { _, w := pods.calls(); return len(w) > len(before) })
	_, after := pods.calls()
	if resumed := after[len(before)]; resumed.ResourceVersion != inf.LastSyncResourceVersion() || (resumed.SendInitialEvents != nil && *resumed.SendInitialEvents) {
		t.Errorf("watch after the drop = %+v; want it resumed from %s without initial events", resumed, inf.LastSyncResourceVersion())
	}
	// While it is held, more writes than the history keeps: the resumed watch gets 410 Gone,
	// and the informer lists everything again.
	for i := 2; i < 40; i++ {
		if _, err := direct.CreatePod(ctx, newPod(fmt.Sprintf("p%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	pods.mu.Lock()
	pods.hold = nil
	pods.mu.Unlock()
	close(release)
	waitFor(t, "every pod cached after the relist", func() bool { return len(inf.GetIndexer().ListKeys()) == 40 })
	waitFor(t, "the informer at the server's resource version", func() bool { return inf.LastSyncResourceVersion() == rvNow() })
	lists, watches = pods.calls()
	relisted := len(lists) > 0
	for _, w := range watches[len(after):] {
		if w.SendInitialEvents != nil && *w.SendInitialEvents {
			relisted = true
		}
	}
	if !relisted {
		t.Errorf("no list or watch-list after the compacted resume: lists %v, watches %v", lists, watches)
	}

	// The resync hands the cached pods to the handlers again.
	waitFor(t, "a resync", func() bool { mu.Lock(); defer mu.Unlock(); return resyncs > 0 })

	for _, c := range pods.changed() {
		t.Errorf("a stored pod handed over was changed: %s", c)
	}
	stored, err := direct.ListPods(ctx, metav1.NamespaceAll, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range stored.Items {
		if p.ManagedFields == nil {
			t.Errorf("stored pod %s lost its managed fields", p.Name)
		}
		if c := cached(p.Name); c == nil || c.ManagedFields != nil || c.ResourceVersion != p.ResourceVersion {
			t.Errorf("cached pod %s = %v; want it at %s without managed fields", p.Name, c, p.ResourceVersion)
		}
	}
}

// TestRunnerWithPodsInProcess runs the controllers as `run` does with the embedded API server:
// client-go informers over HTTP for nodes and leases, the pods informer in process. The
// scheduler binds a pod it read from the store's shared objects, and every pod handed over stays
// as it was (with -race, also across the server's and the runner's goroutines).
func TestRunnerWithPodsInProcess(t *testing.T) { synctest.Test(t, testRunnerWithPodsInProcess) }

func testRunnerWithPodsInProcess(t *testing.T) {
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := servePipes(t, ctx, srv)
	if _, err := client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pending := newPod("x")
	pending.Spec.NodeName = ""
	if _, err := client.CoreV1().Pods("default").Create(ctx, pending, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := &sharedPods{direct: srv.Direct("minikubelet-controllers")}
	r, err := NewRunner(RunnerOptions{Names: Names, Clientset: client, Clock: clock.RealClock{}, Tracer: trace.Discard, Pods: pods})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	bound := func() bool {
		p, err := client.CoreV1().Pods("default").Get(ctx, "x", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName == "node-1"
	}
	waitFor(t, "pod x bound to node-1", bound)
	// The binding comes back through the in-process watch.
	waitFor(t, "the bound pod handed over", func() bool {
		pods.mu.Lock()
		defer pods.mu.Unlock()
		for _, h := range pods.handed {
			if h.was.Name == "x" && h.was.Spec.NodeName == "node-1" {
				return true
			}
		}
		return false
	})
	stop()
	if err := <-done; err != nil {
		t.Errorf("Run() = %v, want nil", err)
	}
	if lists, watches := pods.calls(); len(lists)+len(watches) == 0 {
		t.Error("the runner neither listed nor watched pods in process")
	}
	for _, c := range pods.changed() {
		t.Errorf("a stored pod handed over was changed: %s", c)
	}
}
