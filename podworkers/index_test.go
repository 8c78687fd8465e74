package podworkers

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// scanStep is Step without the indexes: every pass scans and sorts every worker, and a worker
// waiting for the cache is asked again at every pass. It is the reference the indexed Step must
// match event for event.
func scanStep(w *Workers, ctx context.Context) {
	for {
		var callbacks []func()
		c, progressed := scanAdvance(w, &callbacks)
		for _, fn := range callbacks {
			fn()
		}
		if c == nil {
			if !progressed {
				return
			}
			continue
		}
		res, err := w.invoke(ctx, c)
		callbacks = nil
		w.finishCall(c, res, err, &callbacks)
		for _, fn := range callbacks {
			fn()
		}
	}
}

func scanAdvance(w *Workers, callbacks *[]func()) (*call, bool) {
	now := w.clock.Now()
	progressed := false
	var due []*podStatus
	for _, s := range w.pods {
		if wk := s.work; wk != nil && wk.called && !wk.done.IsZero() && !wk.done.After(now) {
			due = append(due, s)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		a, b := due[i].work, due[j].work
		if !a.done.Equal(b.done) {
			return a.done.Before(b.done)
		}
		return a.seq < b.seq
	})
	for _, s := range due {
		w.complete(s, callbacks)
		progressed = true
	}
	var cands []*podStatus
	key := map[*podStatus]uint64{}
	for _, s := range w.pods {
		switch {
		case s.state == Finished || w.held[s.uid]:
		case s.work == nil && s.flags.signalled:
			cands, key[s] = append(cands, s), s.pendingSeq
		case s.work != nil && !s.work.called:
			cands, key[s] = append(cands, s), s.work.seq
		}
	}
	sort.Slice(cands, func(i, j int) bool { return key[cands[i]] < key[cands[j]] })
	for _, s := range cands {
		if s.work == nil {
			w.startPodSync(s, now)
			progressed = true
			if s.work == nil {
				continue
			}
		}
		c := &call{}
		if ready, done := w.prepare(c, s, now, callbacks); ready {
			return c, true
		} else if done {
			progressed = true
		}
	}
	return nil, progressed
}

func scanNextWake(w *Workers) (time.Time, bool) {
	now := w.clock.Now()
	var next time.Time
	found := false
	for _, s := range w.pods {
		var t time.Time
		switch {
		case s.work != nil && s.work.called && !s.work.done.IsZero():
			t = s.work.done
		case s.work == nil && s.flags.signalled && s.state != Finished && !w.held[s.uid]:
			t = now
		default:
			continue
		}
		if !found || t.Before(next) {
			next, found = t, true
		}
	}
	return next, found
}

// sim is one Workers driven by the random workload, with everything it does written to log.
type sim struct {
	w       *Workers
	clock   *vclock.Clock
	cache   *simCache
	rand    *rand.Rand // the syncer's choices
	log     []string
	indexed bool
}

// simCache is ready for a time strictly before now unless blocked, and fails for err UIDs.
type simCache struct {
	clock   *vclock.Clock
	blocked map[types.UID]bool
	err     map[types.UID]bool
}

func (c *simCache) GetNewerThan(uid types.UID, minTime time.Time) (*kubecontainer.PodStatus, error, bool) {
	if c.blocked[uid] || !c.clock.Now().After(minTime) {
		return nil, nil, false
	}
	if c.err[uid] {
		return nil, errNotFound, true
	}
	return &kubecontainer.PodStatus{UID: uid}, nil, true
}

func newSim(t *testing.T, seed uint64, indexed bool) *sim {
	t.Helper()
	clock := vclock.New(vclock.Epoch)
	m := &sim{clock: clock, rand: rand.New(rand.NewPCG(seed, 2)), indexed: indexed,
		cache: &simCache{clock: clock, blocked: map[types.UID]bool{}, err: map[types.UID]bool{}}}
	w, err := New(Options{
		Syncer: m, Cache: m.cache, Queue: m, Clock: clock,
		Rand:   rand.New(rand.NewPCG(seed, 3)),
		Tracer: trace.Func(func(e trace.Event) { m.logf("%+v", e) }),
	})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	m.w = w
	return m
}

func (m *sim) logf(format string, args ...any) {
	m.log = append(m.log, m.clock.Since(vclock.Epoch).String()+" "+fmt.Sprintf(format, args...))
}

func (m *sim) Enqueue(uid types.UID, delay time.Duration) { m.logf("enqueue %s %v", uid, delay) }

// result picks the sync's outcome; now and then it kills another pod from inside the sync, as a
// sync function calling back into the workers would.
func (m *sim) result(fn string, uid types.UID) (Result, error) {
	m.logf("%s %s", fn, uid)
	now := m.clock.Now()
	res := Result{Done: now.Add([]time.Duration{0, 0, 300 * time.Millisecond, time.Second, 3 * time.Second}[m.rand.IntN(5)])}
	if m.rand.IntN(20) == 0 {
		m.w.UpdatePod(UpdateOptions{UpdateType: SyncPodKill, Pod: simPod(m.rand.IntN(simPods), false, false)})
	}
	switch m.rand.IntN(12) {
	case 0:
		return res, errors.New(networkNotReadyErrorMsg)
	case 1:
		return res, &kubecontainer.BackoffError{Err: kubecontainer.ErrCrashLoopBackOff, Expiry: now.Add(5 * time.Second)}
	case 2:
		res.IsTerminal = true
	}
	return res, nil
}

func (m *sim) SyncPod(_ context.Context, t SyncPodType, pod, _ *v1.Pod, _ *kubecontainer.PodStatus) (Result, error) {
	return m.result("SyncPod/"+t.String(), pod.UID)
}

func (m *sim) SyncTerminatingPod(_ context.Context, pod *v1.Pod, _ *kubecontainer.PodStatus, grace *int64, fn func(*v1.PodStatus)) (Result, error) {
	if fn != nil {
		fn(&v1.PodStatus{})
	}
	return m.result(fmt.Sprintf("SyncTerminatingPod/%v", grace != nil), pod.UID)
}

func (m *sim) SyncTerminatingRuntimePod(_ context.Context, running *kubecontainer.Pod) (Result, error) {
	return m.result("SyncTerminatingRuntimePod", running.ID)
}

func (m *sim) SyncTerminatedPod(_ context.Context, pod *v1.Pod, _ *kubecontainer.PodStatus) (Result, error) {
	return m.result("SyncTerminatedPod", pod.UID)
}

const simPods = 10

// simPod is pod i: the first three are static pods sharing one full name, so they exclude each
// other.
func simPod(i int, deleted, terminal bool) *v1.Pod {
	name := fmt.Sprintf("p%d", i)
	static := i < 3
	if static {
		name = "static"
	}
	pod := newNamedPod(fmt.Sprintf("u%d", i), "ns", name, static)
	if deleted {
		pod.DeletionTimestamp = &metav1.Time{Time: vclock.Epoch}
		pod.DeletionGracePeriodSeconds = int64p(int64(1 + i%4))
	}
	if terminal {
		pod.Status.Phase = v1.PodSucceeded
	}
	return pod
}

// op applies one step of the workload to m.
type op func(m *sim)

// randomOp draws the next step of the workload.
func randomOp(r *rand.Rand) (string, op) {
	i := r.IntN(simPods)
	uid := types.UID(fmt.Sprintf("u%d", i))
	switch n := r.IntN(100); {
	case n < 30:
		t := []SyncPodType{SyncPodCreate, SyncPodUpdate, SyncPodSync}[r.IntN(3)]
		deleted, terminal := r.IntN(8) == 0, r.IntN(10) == 0
		return fmt.Sprintf("update %s %v deleted=%v terminal=%v", uid, t, deleted, terminal), func(m *sim) {
			m.w.UpdatePod(UpdateOptions{UpdateType: t, Pod: simPod(i, deleted, terminal)})
		}
	case n < 38:
		grace, evict := int64(r.IntN(4)), r.IntN(3) == 0
		return fmt.Sprintf("kill %s grace=%d evict=%v", uid, grace, evict), func(m *sim) {
			k := &KillPodOptions{Evict: evict, OnTerminated: func() { m.logf("onTerminated %s", uid) },
				PodStatusFunc: func(*v1.PodStatus) { m.logf("statusFunc %s", uid) }}
			if grace > 0 {
				k.PodTerminationGracePeriodSecondsOverride = &grace
			}
			m.w.UpdatePod(UpdateOptions{UpdateType: SyncPodKill, Pod: simPod(i, false, false), KillPodOptions: k})
		}
	case n < 41:
		ruid := types.UID(fmt.Sprintf("r%d", i%3))
		return "runtime kill " + string(ruid), func(m *sim) {
			m.w.UpdatePod(UpdateOptions{UpdateType: SyncPodKill, RunningPod: &kubecontainer.Pod{ID: ruid, Name: string(ruid), Namespace: "ns"}})
		}
	case n < 45:
		keep := r.Uint32()
		return fmt.Sprintf("SyncKnownPods %b", keep%(1<<simPods)), func(m *sim) {
			var desired []*v1.Pod
			for j := range simPods {
				if keep&(1<<j) != 0 {
					desired = append(desired, simPod(j, false, false))
				}
			}
			m.logf("known %v", m.w.SyncKnownPods(desired))
		}
	case n < 52:
		return "block " + string(uid), func(m *sim) { m.cache.blocked[uid] = !m.cache.blocked[uid] }
	case n < 55:
		return "cache error " + string(uid), func(m *sim) { m.cache.err[uid] = !m.cache.err[uid] }
	case n < 57:
		return "hold " + string(uid), func(m *sim) {
			if m.w.held == nil {
				m.w.held = map[types.UID]bool{}
			}
			m.w.held[uid] = !m.w.held[uid]
		}
	case n < 70:
		d := []time.Duration{100 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second}[r.IntN(4)]
		return fmt.Sprintf("advance %v", d), func(m *sim) { m.clock.Advance(d) }
	case n < 80:
		return "advance to NextWake", func(m *sim) {
			if t, ok := m.w.NextWake(); ok && t.After(m.clock.Now()) {
				m.clock.Set(t)
			}
		}
	default:
		return "step", func(m *sim) {
			if m.indexed {
				m.w.Step(context.Background())
			} else {
				scanStep(m.w, context.Background())
			}
		}
	}
}

// TestStepMatchesScan drives the indexed Step and the scanning reference with the same random
// workloads and requires the same syncs, requeues, callbacks and trace, in the same order, and the
// same NextWake after every step.
func TestStepMatchesScan(t *testing.T) {
	for seed := range uint64(300) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 1))
			indexed, scan := newSim(t, seed, true), newSim(t, seed, false)
			var ops []string
			for range 300 {
				name, apply := randomOp(r)
				ops = append(ops, name)
				apply(indexed)
				apply(scan)
				gotT, gotOK := indexed.w.NextWake()
				wantT, wantOK := scanNextWake(scan.w)
				if gotOK != wantOK || !gotT.Equal(wantT) {
					t.Fatalf("after %s: NextWake() = %v, %v, want %v, %v", strings.Join(ops, "; "), gotT, gotOK, wantT, wantOK)
				}
				if i := firstDifference(indexed.log, scan.log); i >= 0 {
					t.Fatalf("after %s:\nlog[%d:] = %q\nwant %q", strings.Join(ops, "; "), i, tail(indexed.log, i), tail(scan.log, i))
				}
			}
			if len(indexed.log) < 50 {
				t.Errorf("the workload logged %d lines, want a workload that does something", len(indexed.log))
			}
		})
	}
}

func firstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func tail(s []string, i int) []string { return s[i:min(len(s), i+5)] }
