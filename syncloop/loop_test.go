package syncloop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/test/podtest"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/pleg"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// calls is the log every fake writes to, so that a test sees the order of the loop's calls.
type calls []string

func (c *calls) add(format string, args ...any) { *c = append(*c, fmt.Sprintf(format, args...)) }

// timed is a Timed collaborator that logs its Advance under name and wakes at next.
type timed struct {
	log  *calls
	name string
	next time.Time
}

func (t *timed) Advance()                    { t.log.add("%s.Advance", t.name) }
func (t *timed) NextWake() (time.Time, bool) { return t.next, !t.next.IsZero() }

// fakeState is a runtime state with settable errors.
type fakeState struct {
	timed
	err error
}

func (s *fakeState) Errors() error { return s.err }

// fakeRuntime removes containers and, being Timed, is advanced first.
type fakeRuntime struct{ timed }

func (r *fakeRuntime) RemoveContainer(id string) error {
	r.log.add("runtime.RemoveContainer %s", id)
	return nil
}

type fakePods struct {
	log  *calls
	pods map[types.UID]*v1.Pod
}

func (p *fakePods) AddPod(pod *v1.Pod)    { p.log.add("pods.AddPod %s", pod.Name); p.pods[pod.UID] = pod }
func (p *fakePods) UpdatePod(pod *v1.Pod) { p.log.add("pods.UpdatePod %s", pod.Name) }
func (p *fakePods) RemovePod(pod *v1.Pod) {
	p.log.add("pods.RemovePod %s", pod.Name)
	delete(p.pods, pod.UID)
}
func (p *fakePods) GetPodByUID(uid types.UID) (*v1.Pod, bool) {
	pod, ok := p.pods[uid]
	return pod, ok
}
func (p *fakePods) GetPodAndMirrorPod(pod *v1.Pod) (*v1.Pod, *v1.Pod, bool) { return pod, nil, false }
func (p *fakePods) GetPods() []*v1.Pod {
	var out []*v1.Pod
	for _, pod := range p.pods {
		out = append(out, pod)
	}
	slices.SortFunc(out, func(a, b *v1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out
}

type fakeWorkers struct {
	log           *calls
	removeContent bool
}

func (w *fakeWorkers) UpdatePod(o podworkers.UpdateOptions) {
	w.log.add("workers.UpdatePod %s %s", o.UpdateType, o.Pod.Name)
}
func (w *fakeWorkers) Step(context.Context)                     { w.log.add("workers.Step") }
func (w *fakeWorkers) NextWake() (time.Time, bool)              { return time.Time{}, false }
func (w *fakeWorkers) ShouldPodContentBeRemoved(types.UID) bool { return w.removeContent }

type fakeQueue struct{ due []types.UID }

func (q *fakeQueue) GetWork() []types.UID { d := q.due; q.due = nil; return d }

type fakePLEG struct {
	timed
	events []pleg.Event
}

func (p *fakePLEG) Relist() []pleg.Event {
	p.log.add("pleg.Relist")
	e := p.events
	p.events = nil
	return e
}

type fakeCache struct{ status *kubecontainer.PodStatus }

func (c *fakeCache) Get(types.UID) (*kubecontainer.PodStatus, error) { return c.status, nil }

type fakeHousekeeper struct{ log *calls }

func (h *fakeHousekeeper) HandlePodCleanups(context.Context) error {
	h.log.add("housekeeping.HandlePodCleanups")
	return nil
}

type fakeStatus struct{ log *calls }

func (s *fakeStatus) Step(context.Context) error  { s.log.add("status.Step"); return nil }
func (s *fakeStatus) NextWake() (time.Time, bool) { return time.Time{}, false }

type fakeNode struct {
	log  *calls
	next time.Time
}

func (n *fakeNode) Register(context.Context) error  { n.log.add("node.Register"); return nil }
func (n *fakeNode) Heartbeat(context.Context) error { n.log.add("node.Heartbeat"); return nil }
func (n *fakeNode) NextWake() (time.Time, bool)     { return n.next, !n.next.IsZero() }

type fixture struct {
	clk   *vclock.Clock
	log   *calls
	state *fakeState
	pleg  *fakePLEG
	queue *fakeQueue
	cache *fakeCache
	pods  *fakePods
	rec   *trace.Recorder
	ready bool
	loop  *Loop
}

// newFixture builds a Loop on fakes; tweak, if not nil, changes the options before New.
func newFixture(t *testing.T, tweak func(*Options)) *fixture {
	t.Helper()
	clk := vclock.New(vclock.Epoch)
	log := &calls{}
	f := &fixture{
		clk: clk, log: log, ready: true,
		state: &fakeState{timed: timed{log: log, name: "state"}},
		pleg:  &fakePLEG{timed: timed{log: log, name: "pleg", next: clk.Now().Add(time.Second)}},
		queue: &fakeQueue{},
		cache: &fakeCache{},
		pods:  &fakePods{log: log, pods: map[types.UID]*v1.Pod{}},
	}
	rec, err := trace.NewRecorder(trace.RecorderOptions{Clock: clk, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	f.rec = rec
	opts := Options{
		Clock: clk, Tracer: f.rec, Pods: f.pods, Workers: &fakeWorkers{log: log}, WorkQueue: f.queue,
		PLEG: f.pleg, Cache: f.cache, Runtime: &fakeRuntime{timed{log: log, name: "runtime"}},
		RuntimeState: f.state, Kills: &timed{log: log, name: "kills"}, Housekeeping: &fakeHousekeeper{log: log},
		Status:       &fakeStatus{log: log},
		SourcesReady: func(sets.Set[string]) bool { return f.ready },
	}
	if tweak != nil {
		tweak(&opts)
	}
	loop, err := New(opts)
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	f.loop = loop
	return f
}

func pod(name string) *v1.Pod { return podtest.New(name) }

func TestNewNamesMissingOptions(t *testing.T) {
	_, err := New(Options{})
	if !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Fatalf("New() error = %v, want %v", err, minikubelet.ErrMissingOption)
	}
	for _, name := range []string{"Clock", "Tracer", "Pods", "Workers", "WorkQueue", "PLEG", "Cache", "Runtime", "RuntimeState", "Kills", "Housekeeping", "Status"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("New() error = %q, want it to name %s", err, name)
		}
	}
}

func TestAdvanceCallsEachCollaboratorInTheKubeletOrder(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Node = &fakeNode{log: o.Housekeeping.(*fakeHousekeeper).log} })
	f.pleg.events = []pleg.Event{{ID: "uid-a", Type: pleg.ContainerStarted}}
	f.pods.pods["uid-a"] = pod("a")
	f.queue.due = []types.UID{"uid-a"}
	f.clk.Set(vclock.Epoch.Add(2 * time.Second)) // PLEG, sync and housekeeping ticks all due
	if err := f.loop.Advance(context.Background()); err != nil {
		t.Fatalf("Advance() error = %v", err)
	}
	want := calls{
		"node.Register", "runtime.Advance", "state.Advance", "kills.Advance",
		"pleg.Relist", "workers.UpdatePod sync a",
		"workers.Step",
		"workers.UpdatePod sync a", // the sync tick: the due work queue entry
		"housekeeping.HandlePodCleanups",
		"status.Step", "node.Heartbeat",
	}
	if diff := cmp.Diff(want, *f.log); diff != "" {
		t.Errorf("Advance() calls (-want +got):\n%s", diff)
	}
}

func TestInputsWaitWhileTheRuntimeStateHasErrors(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	f.state.err = errors.New("container runtime is down")
	add := ConfigUpdate{podconfig.Update{Op: podconfig.ADD, Source: "file", Pods: []*v1.Pod{pod("a")}}}
	for _, in := range []Input{add, SyncTick{}, SyncTick{}} {
		if err := f.loop.Step(ctx, in); err != nil {
			t.Fatalf("Step(%T) error = %v", in, err)
		}
	}
	if len(*f.log) != 0 {
		t.Errorf("calls while the runtime is down = %v, want none", *f.log)
	}
	if next, _ := f.loop.NextWake(); !next.After(f.clk.Now()) {
		t.Errorf("NextWake() with deferred inputs and errors = now, want later")
	}
	f.state.err = nil
	if next, _ := f.loop.NextWake(); !next.Equal(f.clk.Now()) {
		t.Errorf("NextWake() with deferred inputs after recovery = %v, want now", next.Sub(vclock.Epoch))
	}
	*f.log = nil
	if err := f.loop.Advance(ctx); err != nil {
		t.Fatalf("Advance() error = %v", err)
	}
	want := calls{"runtime.Advance", "state.Advance", "kills.Advance", "pods.AddPod a", "workers.UpdatePod create a", "workers.Step", "status.Step"}
	if diff := cmp.Diff(want, *f.log); diff != "" {
		t.Errorf("calls after recovery (-want +got):\n%s", diff)
	}
	var got []string
	for _, e := range f.rec.Events() {
		got = append(got, string(e.Event)+" "+e.Reason)
	}
	if diff := cmp.Diff([]string{"skip RuntimeErrors", "resume ", "config "}, got); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
}

func TestStepRejectsASnapshot(t *testing.T) {
	f := newFixture(t, nil)
	err := f.loop.Step(context.Background(), ConfigUpdate{podconfig.Update{Op: podconfig.SET, Source: "file"}})
	if !errors.Is(err, ErrUnsupportedOp) {
		t.Errorf("Step(SET) error = %v, want %v", err, ErrUnsupportedOp)
	}
	if diff := cmp.Diff([]string{"file"}, f.loop.SourcesSeen()); diff != "" {
		t.Errorf("SourcesSeen() (-want +got):\n%s", diff)
	}
}

func TestHousekeepingWaitsForEverySource(t *testing.T) {
	f := newFixture(t, nil)
	f.ready = false
	ctx := context.Background()
	for range 2 {
		if err := f.loop.Step(ctx, HousekeepingTick{}); err != nil {
			t.Fatalf("Step(HousekeepingTick) error = %v", err)
		}
	}
	f.ready = true
	if err := f.loop.Step(ctx, HousekeepingTick{}); err != nil {
		t.Fatalf("Step(HousekeepingTick) error = %v", err)
	}
	if diff := cmp.Diff(calls{"housekeeping.HandlePodCleanups"}, *f.log); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if n := len(f.rec.Events()); n != 1 {
		t.Errorf("traced %d skips, want 1 (a skip is traced once)", n)
	}
}

func TestContainerDiedPrunesOlderDeadInstances(t *testing.T) {
	for _, tc := range []struct {
		name          string
		removeContent bool
		want          calls
	}{
		{name: "keeps the newest", want: calls{"runtime.RemoveContainer c1"}},
		{name: "removes all when the content goes", removeContent: true, want: calls{"runtime.RemoveContainer c2", "runtime.RemoveContainer c1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.Workers.(*fakeWorkers).removeContent = tc.removeContent })
			at := vclock.Epoch
			f.cache.status = &kubecontainer.PodStatus{ContainerStatuses: []kubecontainer.ContainerStatus{
				{ID: "c3", Name: "app", State: kubecontainer.ContainerStateRunning, CreatedAt: at.Add(3 * time.Second)},
				{ID: "c2", Name: "app", State: kubecontainer.ContainerStateExited, CreatedAt: at.Add(2 * time.Second)},
				{ID: "c1", Name: "app", State: kubecontainer.ContainerStateExited, CreatedAt: at.Add(time.Second)},
				{ID: "s1", Name: "sidecar", State: kubecontainer.ContainerStateExited, CreatedAt: at},
			}}
			// The pod is unknown to the pod manager: only the deletor reacts.
			if err := f.loop.Step(context.Background(), PLEGEvent{pleg.Event{ID: "uid-x", Type: pleg.ContainerDied, Data: "c2"}}); err != nil {
				t.Fatalf("Step(ContainerDied) error = %v", err)
			}
			if diff := cmp.Diff(tc.want, *f.log); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSettleFailsOnALivelock(t *testing.T) {
	// A collaborator that always wants to be woken now.
	f := newFixture(t, func(o *Options) { o.Kills = &timed{log: &calls{}, name: "kills", next: o.Clock.Now()} })
	if err := f.loop.Settle(context.Background()); !errors.Is(err, ErrLivelock) {
		t.Errorf("Settle() error = %v, want %v", err, ErrLivelock)
	}
}

// namedHandler asks for the pods it names.
type namedHandler map[string]bool

func (h namedHandler) ShouldSync(pod *v1.Pod) bool { return h[pod.Name] }

// TestSyncTickAsksSyncLoopHandlers checks getPodsToSync: the due pods first, then the pods a
// handler (the active-deadline handler in the kubelet) asks for, each once.
func TestSyncTickAsksSyncLoopHandlers(t *testing.T) {
	f := newFixture(t, func(o *Options) {
		o.SyncLoopHandlers = []PodSyncLoopHandler{namedHandler{"a": true, "c": true}, namedHandler{"c": true}}
	})
	for _, name := range []string{"a", "b", "c"} {
		f.pods.pods[types.UID("uid-"+name)] = pod(name)
	}
	f.queue.due = []types.UID{"uid-b", "uid-a"}
	if err := f.loop.Step(context.Background(), SyncTick{}); err != nil {
		t.Fatalf("Step(SyncTick) error = %v", err)
	}
	want := calls{"workers.UpdatePod sync b", "workers.UpdatePod sync a", "workers.UpdatePod sync c"}
	if diff := cmp.Diff(want, *f.log); diff != "" {
		t.Errorf("sync tick calls (-want +got):\n%s", diff)
	}
}

// versionedPods is fakePods numbering its changes, as the pod manager does.
type versionedPods struct {
	*fakePods
	version uint64
}

func (p *versionedPods) Version() uint64 { return p.version }

// deadlineHandler asks for the pods it names, and may ask only for those labelled "deadline"
// (as the active-deadline handler only for pods with activeDeadlineSeconds); it counts the pods
// it is asked about.
type deadlineHandler struct {
	names namedHandler
	asked map[string]int
}

func (h *deadlineHandler) MaySync(pod *v1.Pod) bool { return pod.Labels["deadline"] == "yes" }
func (h *deadlineHandler) ShouldSync(pod *v1.Pod) bool {
	h.asked[pod.Name]++
	return h.names.ShouldSync(pod)
}

// TestSyncTickAsksOnlyThePodsAHandlerMaySync checks that with filtering handlers and a pod
// manager that numbers its changes, a sync tick asks the handlers only about the pods they may
// sync, and lists them again once the pod manager changed; the pods synced are those the
// handlers ask for, as when every pod is asked about.
func TestSyncTickAsksOnlyThePodsAHandlerMaySync(t *testing.T) {
	h := &deadlineHandler{names: namedHandler{"a": true, "c": true}, asked: map[string]int{}}
	var pods *versionedPods
	f := newFixture(t, func(o *Options) {
		pods = &versionedPods{fakePods: o.Pods.(*fakePods), version: 1}
		o.Pods = pods
		o.SyncLoopHandlers = []PodSyncLoopHandler{h}
	})
	for _, name := range []string{"a", "b", "c"} {
		p := pod(name)
		if name == "c" {
			p.Labels = map[string]string{"deadline": "yes"}
		}
		pods.pods[types.UID("uid-"+name)] = p
	}
	tick := func() {
		t.Helper()
		*f.log = nil
		if err := f.loop.Step(context.Background(), SyncTick{}); err != nil {
			t.Fatalf("Step(SyncTick) error = %v", err)
		}
	}
	tick()
	tick()
	if want := (map[string]int{"c": 2}); !cmp.Equal(want, h.asked) {
		t.Errorf("handler asked about %v, want %v", h.asked, want)
	}
	if diff := cmp.Diff(calls{"workers.UpdatePod sync c"}, *f.log); diff != "" {
		t.Errorf("sync tick calls (-want +got):\n%s", diff)
	}

	// Pod a's new object may be synced: the pod manager's next version lists it.
	a := pod("a")
	a.Labels = map[string]string{"deadline": "yes"}
	pods.pods["uid-a"] = a
	pods.version++
	tick()
	if want := (map[string]int{"a": 1, "c": 3}); !cmp.Equal(want, h.asked) {
		t.Errorf("handler asked about %v, want %v", h.asked, want)
	}
	if diff := cmp.Diff(calls{"workers.UpdatePod sync a", "workers.UpdatePod sync c"}, *f.log); diff != "" {
		t.Errorf("sync tick calls after the change (-want +got):\n%s", diff)
	}
}

// TestKeyOfFollowsThePod checks the trace key kept for a run of events about one pod: it is
// always the pod's own "namespace/name", for the same pod again, another pod, and a new version
// of the first pod in another namespace.
func TestKeyOfFollowsThePod(t *testing.T) {
	var l Loop
	web, db := pod("web"), pod("db")
	moved := web.DeepCopy()
	moved.Namespace = "other"
	for i, p := range []*v1.Pod{web, web, db, web, moved, moved} {
		if got, want := l.keyOf(p), podkey.Of(p); got != want {
			t.Errorf("event %d: keyOf(%s) = %q, want %q", i, p.Name, got, want)
		}
	}
}
