package controllers

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/api/listwatch"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/test/pipenet"
)

// shared is the embedded API server's in-process list and watch of one kind (what
// RunnerOptions.Pods, Nodes and Leases are in `run`), recording what it was asked and every
// object it handed over, with a copy of it as it was then, and holding a new watch while hold is
// set.
type shared[L runtime.Object] struct {
	in listwatch.Interface[L]

	mu      sync.Mutex
	lists   []metav1.ListOptions
	watches []metav1.ListOptions
	current watch.Interface
	hold    chan struct{}
	handed  []handedObject
}

// handedObject is an object handed over, the stored managed fields it came with (the receiver
// may drop them from its own struct, never change them), and a copy of it as it was then.
type handedObject struct {
	obj     runtime.Object
	managed []metav1.ManagedFieldsEntry
	was     runtime.Object
}

func sharedPods(direct *fakeapiserver.Direct) *shared[*v1.PodList] {
	return &shared[*v1.PodList]{in: directPodLW(direct)}
}

func sharedNodes(direct *fakeapiserver.Direct) *shared[*v1.NodeList] {
	return &shared[*v1.NodeList]{in: directNodeLW(direct)}
}

func sharedLeases(direct *fakeapiserver.Direct) *shared[*coordinationv1.LeaseList] {
	return &shared[*coordinationv1.LeaseList]{in: directLeaseLW(direct)}
}

func handOver(obj runtime.Object) handedObject {
	return handedObject{obj: obj, managed: mustAccessor(obj).GetManagedFields(), was: obj.DeepCopyObject()}
}

// changed says how a shared object differs from what it was when handed over, "" when it does
// not: the receiver may drop the managed fields from its own struct, and change nothing else.
func (h handedObject) changed() string {
	now := h.obj.DeepCopyObject()
	mustAccessor(now).SetManagedFields(h.managed)
	if apiequality.Semantic.DeepEqual(h.was, now) {
		return ""
	}
	return cmp.Diff(h.was, now)
}

// String names the object as it was handed over.
func (h handedObject) String() string {
	m := mustAccessor(h.was)
	return fmt.Sprintf("%T %s/%s (resourceVersion %s)", h.was, m.GetNamespace(), m.GetName(), m.GetResourceVersion())
}

func mustAccessor(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(err)
	}
	return m
}

func mustListAccessor(obj runtime.Object) metav1.ListInterface {
	m, err := meta.ListAccessor(obj)
	if err != nil {
		panic(err)
	}
	return m
}

func (p *shared[L]) record(obj runtime.Object) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handed = append(p.handed, handOver(obj))
}

func (p *shared[L]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	p.mu.Lock()
	p.lists = append(p.lists, opts)
	p.mu.Unlock()
	list, err := p.in.List(ctx, opts)
	items, _ := meta.ExtractList(list)
	for _, item := range items {
		p.record(item)
	}
	return list, err
}

func (p *shared[L]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
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
	w, err := p.in.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	// The objects are recorded as the receiver takes them, before its transform.
	rw := watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if ev.Type != watch.Bookmark && ev.Type != watch.Error {
			p.record(ev.Object)
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
func (p *shared[L]) dropWatch(release chan struct{}) {
	p.mu.Lock()
	w := p.current
	p.hold = release
	p.mu.Unlock()
	w.Stop()
}

func (p *shared[L]) calls() (lists, watches []metav1.ListOptions) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]metav1.ListOptions(nil), p.lists...), append([]metav1.ListOptions(nil), p.watches...)
}

// changed lists the objects handed over that are not as they were: the receiver may drop the
// managed fields from its own struct, and change nothing else.
func (p *shared[L]) changed() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, h := range p.handed {
		if diff := h.changed(); diff != "" {
			out = append(out, fmt.Sprintf("%s:\n%s", h, diff))
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

	pods := sharedPods(direct)
	inf := listWatchInformer[*v1.PodList](pods, &v1.Pod{}, client, 100*time.Millisecond)
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

// TestRunnerInProcess runs the controllers as `run` does with the embedded API server: the pods,
// nodes and leases informers in process. The scheduler binds a pod it read from the store's
// shared objects; the node lifecycle controller, seeing the node's lease go stale, writes the
// node's Ready condition Unknown and taints it, each write built from the shared node; and
// every object handed over stays as it was (with -race, also across the server's and the
// runner's goroutines).
func TestRunnerInProcess(t *testing.T) { synctest.Test(t, testRunnerInProcess) }

func testRunnerInProcess(t *testing.T) {
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := servePipes(t, ctx, srv)
	node, err := client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Ready once, then never again: the lease is not renewed.
	then := metav1.NewTime(time.Now().Add(-time.Minute))
	node.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: then, LastTransitionTime: then}}
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Namespace: "kube-node-lease"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1"), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: ptr.To(metav1.NewMicroTime(then.Time))}}
	if _, err := client.CoordinationV1().Leases("kube-node-lease").Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pending := newPod("x")
	pending.Spec.NodeName = ""
	if _, err := client.CoreV1().Pods("default").Create(ctx, pending, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	direct := srv.Direct("minikubelet-controllers")
	pods, nodes, leases := sharedPods(direct), sharedNodes(direct), sharedLeases(direct)
	r, err := NewRunner(RunnerOptions{Names: Names, Clientset: client, Clock: clock.RealClock{}, Tracer: trace.Discard,
		NodeMonitorPeriod: 100 * time.Millisecond, NodeMonitorGracePeriod: time.Second,
		Pods: pods, Nodes: nodes, Leases: leases})
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
			if pod := h.was.(*v1.Pod); pod.Name == "x" && pod.Spec.NodeName == "node-1" {
				return true
			}
		}
		return false
	})
	// The node's status and taints written, and the writes handed back through the watch.
	unreachable := func(n *v1.Node) bool {
		tainted := slices.ContainsFunc(n.Spec.Taints, func(t v1.Taint) bool {
			return t.Key == v1.TaintNodeUnreachable && t.Effect == v1.TaintEffectNoSchedule
		})
		for _, c := range n.Status.Conditions {
			if c.Type == v1.NodeReady {
				return tainted && c.Status == v1.ConditionUnknown
			}
		}
		return false
	}
	waitFor(t, "node-1 Unknown and tainted, handed over", func() bool {
		nodes.mu.Lock()
		defer nodes.mu.Unlock()
		return slices.ContainsFunc(nodes.handed, func(h handedObject) bool { return unreachable(h.was.(*v1.Node)) })
	})
	stop()
	if err := <-done; err != nil {
		t.Errorf("Run() = %v, want nil", err)
	}
	for name, lw := range map[string]interface {
		calls() ([]metav1.ListOptions, []metav1.ListOptions)
		changed() []string
	}{"pods": pods, "nodes": nodes, "leases": leases} {
		if lists, watches := lw.calls(); len(lists)+len(watches) == 0 {
			t.Errorf("the runner neither listed nor watched %s in process", name)
		}
		for _, c := range lw.changed() {
			t.Errorf("a stored object handed over was changed: %s", c)
		}
	}
	leases.mu.Lock()
	defer leases.mu.Unlock()
	if len(leases.handed) == 0 {
		t.Error("no lease handed over")
	}
}
