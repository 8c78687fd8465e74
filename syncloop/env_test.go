package syncloop

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/fakeapiserver"
	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/pleg"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/podmanager"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/status"
	"github.com/minikubelet/minikubelet/trace"
	"github.com/minikubelet/minikubelet/vclock"
	"github.com/minikubelet/minikubelet/workqueue"
)

const testNode = "node-1"

// env is a whole kubelet sync side on a virtual clock, driven the way the scenario engine drives
// it: config updates go through a real podconfig.Storage, the API is the in-process fake API
// server, and run advances the clock from one wake-up to the next.
type env struct {
	t       testing.TB
	ctx     context.Context
	clk     *vclock.Clock
	rec     *trace.Recorder
	storage *podconfig.Storage
	server  *fakeapiserver.Server // nil when standalone
	client  kubernetes.Interface
	lastRV  uint64
	rt      *fakeruntime.Runtime
	pm      *podmanager.Manager
	events  *eventLog
	loop    *Loop
}

type envOptions struct {
	// standalone runs without an API server: no node, no mirror pods, no api source.
	standalone bool
	// latencies are the runtime's.
	latencies fakeruntime.Latencies
	// sourcesReady overrides PodConfig's SeenAllSources.
	sourcesReady func() bool
	// discard drops the trace instead of keeping it.
	discard bool
	// mirror replaces the mirror client (standalone only).
	mirror MirrorClient
	// clock replaces the virtual clock (runner tests); run must not be used then.
	clock clock.WithTicker
}

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	e := &env{t: t, ctx: context.Background(), events: &eventLog{}}
	var clk clock.PassiveClock
	if o.clock != nil {
		clk = o.clock
	} else {
		e.clk = vclock.New(vclock.Epoch)
		clk = e.clk
	}
	var tracer trace.Tracer = trace.Discard
	if !o.discard {
		e.rec = trace.NewRecorder(trace.RecorderOptions{Clock: clk, Keep: true})
		tracer = e.rec
	}
	storage, err := podconfig.NewStorage(podconfig.StorageOptions{Clock: clk, Tracer: tracer})
	if err != nil {
		t.Fatalf("NewStorage() = %v", err)
	}
	e.storage = storage
	storage.Register(podconfig.FileSource)

	opts := Options{
		NodeName:     testNode,
		NodeIP:       "10.0.0.10",
		Clock:        clk,
		Tracer:       tracer,
		WorkQueue:    workqueue.New(clk),
		Recorder:     e.events,
		SourcesReady: storage.SeenAllSources,
	}
	if o.sourcesReady != nil {
		ready := o.sourcesReady
		opts.SourcesReady = func(sets.Set[string]) bool { return ready() }
	}
	if !o.standalone {
		storage.Register(podconfig.APISource)
		e.server = fakeapiserver.New(fakeapiserver.Options{Clock: clk, Tracer: tracer})
		e.client = inProcessClient(t, e.server)
		opts.NodeClient = ClientsetNodeClient{Client: e.client}
		opts.MirrorClient = podmanager.NewMirrorClient(podmanager.MirrorClientOptions{Client: e.client, NodeName: testNode, Tracer: tracer})
		opts.Status = status.Options{Client: status.ClientsetAdapter{Client: e.client}}
	} else if o.mirror != nil {
		opts.MirrorClient = o.mirror
	}
	e.rt = fakeruntime.New(fakeruntime.Options{Clock: clk, Latencies: o.latencies, Tracer: RuntimeEvents{Next: tracer, Recorder: e.events}})
	cache := pleg.NewCache()
	e.pm = podmanager.New(podmanager.Options{Tracer: tracer})
	opts.PodManager = e.pm
	opts.Runtime = e.rt
	opts.Cache = cache
	opts.PLEG = pleg.New(pleg.Options{Runtime: e.rt, Cache: cache, Clock: clk, Tracer: tracer})
	opts.Workers = podworkers.Options{}
	loop, err := New(opts)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	e.loop = loop
	return e
}

// setFile sends the file source's full set, as its relist would, through PodConfig.
func (e *env) setFile(pods ...*v1.Pod) {
	e.t.Helper()
	e.merge(podconfig.FileSource, pods)
}

func (e *env) merge(source string, pods []*v1.Pod) {
	e.t.Helper()
	for _, u := range e.storage.Merge(source, podconfig.Update{Op: podconfig.SET, Source: source, Pods: pods}) {
		if err := e.loop.Step(e.ctx, ConfigUpdate{u}); err != nil {
			e.t.Errorf("Step(%s %s) = %v", u.Op, u.Source, err)
		}
	}
}

// pollAPI plays the api source: after any write it lists this node's pods and merges them.
func (e *env) pollAPI() {
	if e.server == nil {
		return
	}
	rv := e.server.ResourceVersion()
	if rv == e.lastRV && e.lastRV != 0 {
		return
	}
	e.lastRV = rv
	list, err := e.client.CoreV1().Pods("").List(e.ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + testNode})
	if err != nil {
		e.t.Fatalf("list pods: %v", err)
	}
	pods := make([]*v1.Pod, len(list.Items))
	for i := range list.Items {
		pods[i] = &list.Items[i]
	}
	e.merge(podconfig.APISource, pods)
}

// run drives the loop from wake-up to wake-up until cond holds (checked after every Advance) or
// limit of virtual time has passed. It reports whether cond held.
func (e *env) run(limit time.Duration, cond func() bool) bool {
	e.t.Helper()
	deadline := e.clk.Now().Add(limit)
	spins := 0
	for {
		e.pollAPI()
		if err := e.loop.Advance(e.ctx); err != nil {
			e.t.Logf("Advance() at %v: %v", e.clk.Since(vclock.Epoch), err)
		}
		e.pollAPI()
		if cond != nil && cond() {
			return true
		}
		next := e.loop.NextWake()
		if !next.After(e.clk.Now()) {
			spins++
			if spins > 10000 {
				e.t.Fatalf("no progress at %v", e.clk.Since(vclock.Epoch))
			}
			continue
		}
		spins = 0
		if next.After(deadline) {
			e.clk.Set(deadline)
			return false
		}
		e.clk.Set(next)
	}
}

// runFor drives the loop for d of virtual time.
func (e *env) runFor(d time.Duration) { e.t.Helper(); e.run(d, nil) }

// now is the virtual time since the start.
func (e *env) now() time.Duration { return e.clk.Since(vclock.Epoch) }

// phase is the pod's phase in the status manager.
func (e *env) phase(uid types.UID) v1.PodPhase {
	s, ok := e.loop.StatusManager().GetPodStatus(uid)
	if !ok {
		return ""
	}
	return s.Phase
}

// apiPod reads a pod from the API, nil when it does not exist.
func (e *env) apiPod(namespace, name string) *v1.Pod {
	e.t.Helper()
	pod, err := e.client.CoreV1().Pods(namespace).Get(e.ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		e.t.Fatalf("get pod %s/%s: %v", namespace, name, err)
	}
	return pod
}

// trace returns the events recorded so far.
func (e *env) trace() []trace.Event { return e.rec.Events() }

// staticPod builds a pod the way the file source and PodConfig hand it over: named after the node,
// with the hash annotation equal to its UID and one container.
func staticPod(name string, uid types.UID, policy v1.RestartPolicy) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name + "-" + testNode,
			Namespace: metav1.NamespaceDefault,
			UID:       uid,
			Annotations: map[string]string{
				kubecontainer.ConfigHashAnnotationKey: string(uid),
			},
		},
		Spec: v1.PodSpec{
			NodeName:                      testNode,
			RestartPolicy:                 policy,
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			Containers:                    []v1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10", ImagePullPolicy: v1.PullIfNotPresent}},
		},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
}

// inProcessClient is a clientset whose requests the fake API server serves in the calling
// goroutine.
func inProcessClient(t testing.TB, srv *fakeapiserver.Server) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: srv.Transport(), QPS: -1})
	if err != nil {
		t.Fatalf("NewForConfig() = %v", err)
	}
	return c
}

// eventLog is a record.EventRecorder that keeps "Type Reason Message" lines.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) Event(_ runtime.Object, eventType, reason, message string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, eventType+" "+reason+" "+message)
}

func (l *eventLog) Eventf(o runtime.Object, eventType, reason, format string, args ...any) {
	l.Event(o, eventType, reason, fmt.Sprintf(format, args...))
}

func (l *eventLog) AnnotatedEventf(o runtime.Object, _ map[string]string, eventType, reason, format string, args ...any) {
	l.Eventf(o, eventType, reason, format, args...)
}

func (l *eventLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}
