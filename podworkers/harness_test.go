package podworkers

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/test/podtest"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// syncRecord is one sync function call, as the kubelet's tests record it.
type syncRecord struct {
	Name       string
	UpdateType SyncPodType
	Grace      *int64
	RunningPod bool
	Terminated bool
}

// fakeSyncer records every call. terminal marks UIDs whose SyncPod reports a terminal pod; result
// supplies a Result and error per UID and sync function.
type fakeSyncer struct {
	processed map[types.UID][]syncRecord
	terminal  map[types.UID]bool
	result    func(fn string, uid types.UID) (Result, error)
	statusFns int
	pods      []*v1.Pod
	mirrors   []*v1.Pod
	statuses  []*kubecontainer.PodStatus
}

func newFakeSyncer() *fakeSyncer {
	return &fakeSyncer{processed: map[types.UID][]syncRecord{}, terminal: map[types.UID]bool{}}
}

func (f *fakeSyncer) res(fn string, uid types.UID) (Result, error) {
	if f.result == nil {
		return Result{}, nil
	}
	return f.result(fn, uid)
}

func (f *fakeSyncer) SyncPod(_ context.Context, t SyncPodType, pod, mirror *v1.Pod, status *kubecontainer.PodStatus) (Result, error) {
	f.processed[pod.UID] = append(f.processed[pod.UID], syncRecord{Name: pod.Name, UpdateType: t})
	f.pods, f.mirrors, f.statuses = append(f.pods, pod), append(f.mirrors, mirror), append(f.statuses, status)
	r, err := f.res("SyncPod", pod.UID)
	r.IsTerminal = r.IsTerminal || f.terminal[pod.UID]
	return r, err
}

func (f *fakeSyncer) SyncTerminatingPod(_ context.Context, pod *v1.Pod, _ *kubecontainer.PodStatus, grace *int64, fn func(*v1.PodStatus)) (Result, error) {
	f.processed[pod.UID] = append(f.processed[pod.UID], syncRecord{Name: pod.Name, UpdateType: SyncPodKill, Grace: grace})
	if fn != nil {
		f.statusFns++
		fn(&v1.PodStatus{})
	}
	return f.res("SyncTerminatingPod", pod.UID)
}

func (f *fakeSyncer) SyncTerminatingRuntimePod(_ context.Context, running *kubecontainer.Pod) (Result, error) {
	f.processed[running.ID] = append(f.processed[running.ID], syncRecord{Name: running.Name, UpdateType: SyncPodKill, RunningPod: true})
	return f.res("SyncTerminatingRuntimePod", running.ID)
}

func (f *fakeSyncer) SyncTerminatedPod(_ context.Context, pod *v1.Pod, _ *kubecontainer.PodStatus) (Result, error) {
	f.processed[pod.UID] = append(f.processed[pod.UID], syncRecord{Name: pod.Name, Terminated: true})
	return f.res("SyncTerminatedPod", pod.UID)
}

// fakeCache behaves like a pod cache that a PLEG relists at every instant: it is newer than any
// time strictly before now. err makes every read fail; status is returned when set.
type fakeCache struct {
	clock   *vclock.Clock
	err     error
	status  map[types.UID]*kubecontainer.PodStatus
	blocked map[types.UID]bool
}

func (c *fakeCache) GetNewerThan(uid types.UID, minTime time.Time) (*kubecontainer.PodStatus, error, bool) {
	if c.blocked[uid] || !c.clock.Now().After(minTime) {
		return nil, nil, false
	}
	if c.err != nil {
		return nil, c.err, true
	}
	if s, ok := c.status[uid]; ok {
		return s, nil, true
	}
	return &kubecontainer.PodStatus{UID: uid}, nil, true
}

type queued struct {
	UID   types.UID
	Delay time.Duration
}

// fakeQueue is the kubelet tests' fakeQueue: it keeps every Enqueue; GetWork returns the UIDs
// enqueued since the previous GetWork.
type fakeQueue struct {
	items []queued
	since int
}

func (q *fakeQueue) Enqueue(uid types.UID, delay time.Duration) {
	q.items = append(q.items, queued{uid, delay})
}

func (q *fakeQueue) GetWork() []types.UID {
	var out []types.UID
	for _, it := range q.items[q.since:] {
		if !slices.Contains(out, it.UID) {
			out = append(out, it.UID)
		}
	}
	q.since = len(q.items)
	slices.Sort(out)
	return out
}

// harness is the kubelet tests' createPodWorkers with timeIncrementingWorkers: the clock starts at
// 1s, each UpdatePod moves it 1s, and each Step while draining moves it 1s first.
type harness struct {
	t      *testing.T
	clock  *vclock.Clock
	syncer *fakeSyncer
	cache  *fakeCache
	queue  *fakeQueue
	events []trace.Event
	w      *Workers
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, clock: vclock.New(time.Unix(1, 0)), syncer: newFakeSyncer(), queue: &fakeQueue{}}
	h.cache = &fakeCache{clock: h.clock, status: map[types.UID]*kubecontainer.PodStatus{}, blocked: map[types.UID]bool{}}
	w, err := New(Options{
		Syncer:         h.syncer,
		Cache:          h.cache,
		Queue:          h.queue,
		Clock:          h.clock,
		ResyncInterval: time.Second,
		BackOffPeriod:  time.Millisecond,
		Rand:           rand.New(rand.NewPCG(7, 7)),
		Tracer:         trace.Func(func(e trace.Event) { h.events = append(h.events, e) }),
	})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	h.w = w
	return h
}

// update calls UpdatePod and then moves the clock 1s.
func (h *harness) update(opts UpdateOptions) {
	h.w.UpdatePod(opts)
	h.clock.Advance(time.Second)
}

// drain steps the workers, 1s apart, until every worker not held is idle.
func (h *harness) drain() {
	h.t.Helper()
	for range 100 {
		if !h.working() {
			return
		}
		h.clock.Advance(time.Second)
		h.w.Step(context.Background())
	}
	h.t.Fatal("workers did not drain in 100 steps")
}

// working reports whether a worker that is not held has something to do.
func (h *harness) working() bool {
	for _, s := range h.w.pods {
		if h.w.held[s.uid] || s.state == Finished {
			continue
		}
		if s.work != nil || s.flags.signalled {
			return true
		}
	}
	return false
}

func (h *harness) hold(uid types.UID) {
	if h.w.held == nil {
		h.w.held = map[types.UID]bool{}
	}
	h.w.held[uid] = true
}

func (h *harness) release(uid types.UID) {
	delete(h.w.held, uid)
}

// snapshot is the part of a worker the kubelet's TestUpdatePod compares.
type snapshot struct {
	Fullname                                  string
	State                                     State
	Synced, Started, Terminating, Terminated  time.Time
	GracePeriod                               int64
	StartedTerminating, Deleted, Evicted      bool
	RestartRequested, ObservedRuntime, Signal bool
	Pending, Active                           *UpdateOptions
}

func (h *harness) snapshot(uid types.UID) *snapshot {
	s, ok := h.w.pods[uid]
	if !ok {
		return nil
	}
	return &snapshot{
		Fullname: s.fullname, State: s.state,
		Synced: s.times.synced, Started: s.times.started, Terminating: s.times.terminating, Terminated: s.times.terminated,
		GracePeriod:        s.gracePeriod,
		StartedTerminating: s.flags.startedTerminating, Deleted: s.flags.deleted, Evicted: s.flags.evicted,
		RestartRequested: s.flags.restartRequested, ObservedRuntime: s.flags.observedRuntime, Signal: s.flags.signalled,
		Pending: clonePending(s.pending), Active: s.active,
	}
}

func (h *harness) started() map[string]types.UID {
	return maps2(h.w.startedStatic)
}

func (h *harness) waiting() map[string][]types.UID {
	out := map[string][]types.UID{}
	for k, v := range h.w.waitingStatic {
		out[k] = slices.Clone(v)
	}
	return out
}

func maps2(m map[string]types.UID) map[string]types.UID {
	out := map[string]types.UID{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func newNamedPod(uid, namespace, name string, static bool) *v1.Pod {
	opts := []podtest.Option{podtest.UID(types.UID(uid)), podtest.Namespace(namespace), podtest.TerminationGracePeriod(30)}
	if static {
		opts = append(opts, podtest.Source("file"))
	}
	return podtest.New(name, opts...)
}

func newStaticPod(uid, name string) *v1.Pod { return newNamedPod(uid, "", name, true) }

func newPodWithPhase(uid, name string, phase v1.PodPhase) *v1.Pod {
	pod := newNamedPod(uid, "ns", name, false)
	pod.Status.Phase = phase
	return pod
}

func int64p(v int64) *int64 { return &v }

func unix(sec int64) time.Time { return time.Unix(sec, 0) }

var errNotFound = errors.New("pod status not found")

// clonePending copies the pending update: the worker keeps it in storage the next update reuses.
func clonePending(p *UpdateOptions) *UpdateOptions {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
