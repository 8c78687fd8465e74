package kubelet

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/kubelet/config"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/sim/world"
	"github.com/minikubelet/minikubelet/syncloop"
	"github.com/minikubelet/minikubelet/test/podtest"
)

const (
	testNode = "node-1"
	// staticPodPath and manifestURL are the env's static pod directory and manifest URL, in
	// memory as in a replay.
	staticPodPath = "/etc/kubernetes/manifests"
	manifestURL   = "http://static-pods.invalid/manifests"
)

// env is a whole kubelet built by New on a virtual clock with fake seams (package world's
// in-memory static pod directory, manifest server and API watch, the in-process fake API server),
// driven the way a replay drives one: Settle at each instant, then on to the next wake.
type env struct {
	t         testing.TB
	ctx       context.Context
	clk       *vclock.Clock
	rec       *trace.Recorder       // nil when the trace is discarded
	server    *fakeapiserver.Server // nil when standalone
	client    kubernetes.Interface  // nil when standalone
	files     *world.StaticPods
	manifests *world.Manifests // nil without the http source
	events    *eventLog
	k         *Kubelet
	opts      Options // what built k, for a restart
}

type envOptions struct {
	// standalone runs without an API server: no node, no mirror pods, no api source.
	standalone bool
	// latencies are the runtime's.
	latencies fakeruntime.Latencies
	// httpSource adds the http source, whose server answers 404 until serve is called: until
	// then not every source has been seen.
	httpSource bool
	// noFileSource runs without staticPodPath: pods come from handPods.
	noFileSource bool
	// discard drops the trace instead of keeping it.
	discard bool
	// maxPods is the node's maxPods; zero is the kubelet's 110.
	maxPods int32
	// plugins, when set, is the plugin registry and the plugins behind it.
	plugins *world.Plugins
	// syncFrequency is the pods' resync period; zero is the kubelet's 1m.
	syncFrequency time.Duration
	// routedWatch feeds the api source from a shared pod router, as replay's fleets do, instead
	// of a watch reading the server's history on its own.
	routedWatch bool
	// countEvents makes the event log count the Kubernetes events instead of keeping their
	// text: a benchmark's run of thousands of pods, whose events a real run hands on (client-go's
	// broadcaster, the API server) and does not keep in the kubelet's heap.
	countEvents bool
}

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	e := &env{t: t, ctx: context.Background(), clk: vclock.New(vclock.Epoch), events: &eventLog{count: o.countEvents}, files: world.NewStaticPods(staticPodPath)}
	var tracer trace.Tracer = trace.Discard
	if !o.discard {
		rec, err := trace.NewRecorder(trace.RecorderOptions{Clock: e.clk, Keep: true})
		if err != nil {
			t.Fatal(err)
		}
		e.rec = rec
		tracer = e.rec
	}
	cfg := config.Default()
	if !o.noFileSource {
		cfg.Sources.StaticPodPath = staticPodPath
	}
	if o.maxPods != 0 {
		cfg.Machine.MaxPods = o.maxPods
	}
	if o.syncFrequency != 0 {
		cfg.SyncFrequency = o.syncFrequency
	}
	opts := Options{
		NodeName:  testNode,
		NodeIP:    "192.168.0.10",
		Clock:     e.clk,
		Tracer:    tracer,
		Latencies: o.latencies,
		Config:    cfg,
		World:     World{StaticPods: e.files, Events: e.events},
	}
	if o.httpSource {
		e.manifests = world.NewManifests()
		cfg.Sources.StaticPodURL = manifestURL
		opts.World.ManifestClient = e.manifests.Client()
	}
	if !o.standalone {
		var err error
		if e.server, err = fakeapiserver.New(fakeapiserver.Options{Clock: e.clk, Tracer: tracer}); err != nil {
			t.Fatalf("fakeapiserver.New() = %v", err)
		}
		e.client = inProcessClient(t, e.server)
		opts.World.API = e.client
		opts.World.APIWatch = world.NewAPIWatch(e.server, testNode, nil)
		if o.routedWatch {
			opts.World.APIWatch = world.NewPodRouter(e.server).Watch(testNode, nil)
		}
	}
	if p := o.plugins; p != nil {
		opts.World.Plugins = &PluginWorld{Registry: p.Registry(), DevicePlugins: "/var/lib/kubelet/device-plugins", FS: p, Dialer: p, Devices: p, CSI: p, DRA: p.DRA(),
			Checkpoint: p.Checkpoint(), NewID: p.NewID}
	}
	e.opts = opts
	var err error
	if e.k, err = New(opts); err != nil {
		t.Fatalf("New() = %v", err)
	}
	return e
}

// restart builds the kubelet again with the same world, as a kubelet restart does: the runtime
// and its containers carry over, and so does everything World holds.
func (e *env) restart(plugins *world.Plugins) {
	e.t.Helper()
	if plugins != nil {
		plugins.KubeletStopped()
	}
	e.k.SaveCheckpoints(e.ctx) // as the process stops
	e.opts.World.Runtime = e.k.Runtime
	e.opts.World.APIWatch = nil
	if e.server != nil {
		e.opts.World.APIWatch = world.NewAPIWatch(e.server, testNode, nil)
	}
	var err error
	if e.k, err = New(e.opts); err != nil {
		e.t.Fatalf("New() after a restart = %v", err)
	}
}

// setFile makes the static pod directory hold exactly pods, one manifest each, and hands the
// file source the watch events of the change; the next settle merges what it read.
func (e *env) setFile(pods ...*v1.Pod) {
	e.t.Helper()
	want := map[string][]byte{}
	for _, p := range pods {
		name, data := manifest(e.t, p)
		want[name] = data
	}
	var evs []world.Event
	for _, p := range e.files.Names() {
		if _, ok := want[p]; !ok {
			removed, err := e.files.Remove(p)
			if err != nil {
				e.t.Fatal(err)
			}
			evs = append(evs, removed...)
		}
	}
	for _, p := range pods {
		name, _ := manifest(e.t, p)
		evs = append(evs, e.files.Write(name, want[name])...)
	}
	e.k.StaticPodEvents(evs)
}

// manifest is the file a static pod comes from: the pod as written, before the file source
// suffixes its name with the node's and adds its annotations.
func manifest(t testing.TB, pod *v1.Pod) (string, []byte) {
	t.Helper()
	p := pod.DeepCopy()
	p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	p.Name = strings.TrimSuffix(p.Name, "-"+testNode)
	delete(p.Annotations, kubecontainer.ConfigHashAnnotationKey)
	p.Spec.NodeName = ""
	p.Status = v1.PodStatus{}
	data, err := yaml.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return p.Name + ".yaml", data
}

// handPods hands the sync loop pods as one SET of the file source would after PodConfig, without
// the file source: for a benchmark of the sync side alone (noFileSource).
func (e *env) handPods(pods ...*v1.Pod) {
	e.t.Helper()
	for _, u := range e.k.PodConfig.Merge(podconfig.FileSource, podconfig.Update{Op: podconfig.SET, Source: podconfig.FileSource, Pods: pods}) {
		if err := e.k.Loop.Step(e.ctx, syncloop.ConfigUpdate{Update: u}); err != nil {
			e.t.Errorf("Step(%s %s) = %v", u.Op, u.Source, err)
		}
	}
}

// settle does everything due at the current instant, as a replay's engine does for one node:
// Settle until neither it nor the sync loop has more to do now. A kubelet that keeps making work
// due now fails the test.
func (e *env) settle() {
	e.t.Helper()
	for range syncloop.MaxAdvancesPerInstant {
		progressed := e.k.Settle(e.ctx)
		if wake, _ := e.k.Loop.NextWake(); !progressed && wake.After(e.clk.Now()) {
			return
		}
	}
	e.t.Fatalf("Settle() at %v: %v", e.now(), syncloop.ErrLivelock)
}

// run drives the kubelet from wake-up to wake-up until cond holds (checked once each instant has
// settled) or limit of virtual time has passed. It reports whether cond held.
func (e *env) run(limit time.Duration, cond func() bool) bool {
	e.t.Helper()
	deadline := e.clk.Now().Add(limit)
	for {
		e.settle()
		if cond != nil && cond() {
			return true
		}
		next, _ := e.k.NextWake()
		if next.After(deadline) {
			e.clk.Set(deadline)
			return false
		}
		e.clk.Set(next)
	}
}

// runFor drives the kubelet for d of virtual time.
func (e *env) runFor(d time.Duration) { e.t.Helper(); e.run(d, nil) }

// now is the virtual time since the start.
func (e *env) now() time.Duration { return e.clk.Since(vclock.Epoch) }

// phase is the pod's phase in the status manager ("" when it has no status).
func (e *env) phase(uid types.UID) v1.PodPhase {
	p, _ := e.k.Status.GetPodPhase(uid)
	return p
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
	pod := podtest.New(name+"-"+testNode, podtest.UID(uid), podtest.Annotation(kubecontainer.ConfigHashAnnotationKey, string(uid)),
		podtest.Node(testNode), podtest.RestartPolicy(policy), podtest.TerminationGracePeriod(30),
		podtest.Image("registry.k8s.io/pause:3.10"), podtest.Phase(v1.PodPending))
	// The API's default, which every pod source applies: without it the kubelet cannot build a
	// container's environment.
	pod.Spec.EnableServiceLinks = ptr.To(true)
	pod.Spec.Containers[0].ImagePullPolicy = v1.PullIfNotPresent
	return pod
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

// eventLog is a record.EventRecorder that keeps "Type Reason Message" lines, or only counts the
// events when count is set. The env drives the kubelet from one goroutine, so it needs no lock.
type eventLog struct {
	count  bool
	n      int // the events received, kept or not
	events []string
}

var _ record.EventRecorder = (*eventLog)(nil)

func (l *eventLog) Event(_ runtime.Object, eventType, reason, message string) {
	l.n++
	if !l.count {
		l.events = append(l.events, eventType+" "+reason+" "+message)
	}
}

func (l *eventLog) Eventf(o runtime.Object, eventType, reason, format string, args ...any) {
	if l.count {
		l.n++
		return
	}
	l.Event(o, eventType, reason, fmt.Sprintf(format, args...))
}

func (l *eventLog) AnnotatedEventf(o runtime.Object, _ map[string]string, eventType, reason, format string, args ...any) {
	l.Eventf(o, eventType, reason, format, args...)
}

func (l *eventLog) list() []string { return append([]string(nil), l.events...) }
