package kubelet

import (
	"context"
	"errors"
	"fmt"
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
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/syncloop"
)

const testNode = "node-1"

// env is a whole kubelet sync side built by New on a virtual clock, driven the way the scenario
// engine drives it: config updates go through a real podconfig.Storage, the API is the in-process
// fake API server, and run moves the clock from one wake-up of the Loop to the next.
type env struct {
	t       testing.TB
	ctx     context.Context
	clk     *vclock.Clock
	rec     *trace.Recorder // nil when the trace is discarded
	storage *podconfig.Storage
	server  *fakeapiserver.Server // nil when standalone
	client  kubernetes.Interface  // nil when standalone
	// lastRV is the API server's resource version at the last poll.
	lastRV uint64
	events *eventLog
	n      *Node
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
	// maxPods is the node's maxPods; zero is the kubelet's 110.
	maxPods int32
	// syncFrequency is the pods' resync period; zero is the kubelet's 1m.
	syncFrequency time.Duration
}

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	e := &env{t: t, ctx: context.Background(), clk: vclock.New(vclock.Epoch), events: &eventLog{}}
	var tracer trace.Tracer = trace.Discard
	if !o.discard {
		rec, err := trace.NewRecorder(trace.RecorderOptions{Clock: e.clk, Keep: true})
		if err != nil {
			t.Fatal(err)
		}
		e.rec = rec
		tracer = e.rec
	}
	storage, err := podconfig.NewStorage(podconfig.StorageOptions{Clock: e.clk, Tracer: tracer})
	if err != nil {
		t.Fatalf("NewStorage() = %v", err)
	}
	e.storage = storage
	storage.Register(podconfig.FileSource)

	opts := Options{
		NodeName:      testNode,
		NodeIP:        "10.0.0.10",
		Clock:         e.clk,
		Tracer:        tracer,
		Recorder:      e.events,
		Latencies:     o.latencies,
		SourcesReady:  storage.SeenAllSources,
		MaxPods:       o.maxPods,
		SyncFrequency: o.syncFrequency,
	}
	if o.sourcesReady != nil {
		ready := o.sourcesReady
		opts.SourcesReady = func(sets.Set[string]) bool { return ready() }
	}
	if !o.standalone {
		storage.Register(podconfig.APISource)
		if e.server, err = fakeapiserver.New(fakeapiserver.Options{Clock: e.clk, Tracer: tracer}); err != nil {
			t.Fatalf("fakeapiserver.New() = %v", err)
		}
		e.client = inProcessClient(t, e.server)
		opts.Client = e.client
	}
	if e.n, err = New(opts); err != nil {
		t.Fatalf("New() = %v", err)
	}
	return e
}

// setFile sends the file source's full set, as its relist would, through PodConfig.
func (e *env) setFile(pods ...*v1.Pod) {
	e.t.Helper()
	e.merge(podconfig.FileSource, pods)
}

// merge hands a source's full set to PodConfig and what it emits to the Loop.
func (e *env) merge(source string, pods []*v1.Pod) {
	e.t.Helper()
	for _, u := range e.storage.Merge(source, podconfig.Update{Op: podconfig.SET, Source: source, Pods: pods}) {
		if err := e.n.Loop.Step(e.ctx, syncloop.ConfigUpdate{Update: u}); err != nil {
			e.t.Errorf("Step(%s %s) = %v", u.Op, u.Source, err)
		}
	}
}

// pollAPI plays the api source: after any write it lists this node's pods and merges them. It
// reports whether there was a write to echo.
func (e *env) pollAPI() bool {
	e.t.Helper()
	if e.server == nil {
		return false
	}
	rv := e.server.ResourceVersion()
	if rv == e.lastRV && e.lastRV != 0 {
		return false
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
	return true
}

// settle does everything due at the current instant: the API echo of what was written, then the
// Loop's work (Settle), until an echo after Settle brings nothing new. A Loop that keeps making
// work due now fails the test: that is Settle's ErrLivelock.
func (e *env) settle() {
	e.t.Helper()
	for {
		e.pollAPI()
		err := e.n.Loop.Settle(e.ctx)
		if errors.Is(err, syncloop.ErrLivelock) {
			e.t.Fatalf("Settle() at %v = %v", e.now(), err)
		}
		if err != nil {
			// The kubelet logs a failed step and goes on; so does the driver.
			e.t.Logf("Settle() at %v = %v", e.now(), err)
		}
		if !e.pollAPI() {
			return
		}
	}
}

// run drives the node from wake-up to wake-up until cond holds (checked once each instant has
// settled) or limit of virtual time has passed. It reports whether cond held.
func (e *env) run(limit time.Duration, cond func() bool) bool {
	e.t.Helper()
	deadline := e.clk.Now().Add(limit)
	for {
		e.settle()
		if cond != nil && cond() {
			return true
		}
		next, _ := e.n.Loop.NextWake()
		if next.After(deadline) {
			e.clk.Set(deadline)
			return false
		}
		e.clk.Set(next)
	}
}

// runFor drives the node for d of virtual time.
func (e *env) runFor(d time.Duration) { e.t.Helper(); e.run(d, nil) }

// now is the virtual time since the start.
func (e *env) now() time.Duration { return e.clk.Since(vclock.Epoch) }

// phase is the pod's phase in the status manager.
func (e *env) phase(uid types.UID) v1.PodPhase {
	s, ok := e.n.Status.GetPodStatus(uid)
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

// staticPod builds a pod the way the file source hands it to PodConfig: named after the node, with
// the hash annotation equal to its UID and one container.
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

// eventLog is a record.EventRecorder that keeps "Type Reason Message" lines. The env drives the
// node from one goroutine, so it needs no lock.
type eventLog struct {
	events []string
}

var _ record.EventRecorder = (*eventLog)(nil)

func (l *eventLog) Event(_ runtime.Object, eventType, reason, message string) {
	l.events = append(l.events, eventType+" "+reason+" "+message)
}

func (l *eventLog) Eventf(o runtime.Object, eventType, reason, format string, args ...any) {
	l.Event(o, eventType, reason, fmt.Sprintf(format, args...))
}

func (l *eventLog) AnnotatedEventf(o runtime.Object, _ map[string]string, eventType, reason, format string, args ...any) {
	l.Eventf(o, eventType, reason, format, args...)
}

func (l *eventLog) list() []string { return append([]string(nil), l.events...) }
