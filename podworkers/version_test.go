package podworkers

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// answers is everything housekeeping reads of the workers, read without changing them.
type answers struct {
	Workers       map[types.UID]workerAnswers
	StartedStatic map[string]types.UID
}

type workerAnswers struct {
	Sync                                  PodWorkerSync
	KnownTerminated, TerminationRequested bool
	RestartRequested                      bool
}

func (h *harness) answers() answers {
	a := answers{Workers: map[types.UID]workerAnswers{}, StartedStatic: maps.Clone(h.w.startedStatic)}
	for uid, s := range h.w.pods {
		a.Workers[uid] = workerAnswers{
			Sync:                 s.sync(false),
			KnownTerminated:      h.w.IsPodKnownTerminated(uid),
			TerminationRequested: h.w.IsPodTerminationRequested(uid),
			RestartRequested:     s.flags.restartRequested,
		}
	}
	return a
}

// TestVersion walks the workers through every kind of change housekeeping reads (creations,
// periodic syncs, static pods waiting for their full name, kills, a restart request, runtime-only
// kills, SyncKnownPods forgetting and orphaning workers), one step at a time, and checks after
// each that Version moved exactly when it should: always when what housekeeping reads changed
// (else housekeeping would miss it), and never for a step the table says leaves it alone (else
// housekeeping would never skip a pass).
func TestVersion(t *testing.T) {
	h := newHarness(t)
	normal := newNamedPod("1", "ns", "normal", false)
	static := func(uid string) *v1.Pod { return newNamedPod(uid, "ns", "static", true) }
	running := &kubecontainer.Pod{ID: "9", Name: "orphan", Namespace: "ns"}
	for _, st := range []struct {
		name string
		do   func()
		// want: whether Version moves; a step whose answers change must move it anyway.
		want bool
	}{
		{"first SyncKnownPods", func() { h.w.SyncKnownPods(nil) }, true},
		{"create a pod", func() { h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: normal}); h.drain() }, true},
		{"SyncKnownPods with every worker desired", func() { h.w.SyncKnownPods([]*v1.Pod{normal}) }, false},
		{"periodic sync", func() { h.update(UpdateOptions{UpdateType: SyncPodSync, Pod: normal}); h.drain() }, false},
		{"update", func() { h.update(UpdateOptions{UpdateType: SyncPodUpdate, Pod: normal}); h.drain() }, false},
		{"steps with nothing due", func() { h.clock.Advance(time.Minute); h.w.Step(context.Background()) }, false},
		{"a static pod is created", func() { h.hold("2"); h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: static("2")}) }, true},
		{"it takes the full name", func() { h.release("2"); h.drain() }, true},
		{"second static pod waits for the full name", func() { h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: static("3")}); h.drain() }, true},
		{"first static pod is killed", func() { h.update(UpdateOptions{UpdateType: SyncPodKill, Pod: static("2")}) }, true},
		{"its worker terminates and the second one starts", func() {
			h.drain()
			for range 5 {
				h.clock.Advance(time.Second)
				for _, uid := range h.queue.GetWork() {
					h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodSync, Pod: static(string(uid))})
				}
				h.drain()
			}
		}, true},
		{"a pod is killed", func() { h.hold("1"); h.update(UpdateOptions{UpdateType: SyncPodKill, Pod: normal}) }, true},
		{"a create for the terminating UID requests a restart", func() { h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: normal}) }, true},
		{"the same create again", func() { h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: normal}) }, false},
		{"the restarted worker finishes", func() { h.release("1"); h.drain() }, true},
		{"a runtime-only kill of a pod nothing knows", func() {
			h.update(UpdateOptions{UpdateType: SyncPodKill, RunningPod: running})
		}, true},
		{"SyncKnownPods forgets the finished workers", func() { h.drain(); h.w.SyncKnownPods([]*v1.Pod{static("3")}) }, true},
		{"SyncKnownPods with every worker desired again", func() { h.w.SyncKnownPods([]*v1.Pod{static("3")}) }, false},
		{"SyncKnownPods orphans the running static pod", func() { h.w.SyncKnownPods(nil); h.drain() }, true},
	} {
		before, v := h.answers(), h.w.Version()
		st.do()
		after, moved := h.answers(), h.w.Version() != v
		if moved != st.want {
			t.Errorf("%s: Version moved = %v, want %v", st.name, moved, st.want)
		}
		if diff := cmp.Diff(before, after); diff != "" && !moved {
			t.Errorf("%s: what housekeeping reads changed and Version did not move (-before +after):\n%s", st.name, diff)
		}
	}
}

// TestVersionConfigPod checks the one change of SyncKnownPods' report that no state transition
// carries: a worker made by a runtime-only kill has no config pod until an update brings one.
func TestVersionConfigPod(t *testing.T) {
	h := newHarness(t)
	h.hold("9")
	h.update(UpdateOptions{UpdateType: SyncPodKill, RunningPod: &kubecontainer.Pod{ID: "9", Name: "p", Namespace: "ns"}})
	if h.w.pods["9"].sync(false).HasConfig {
		t.Fatal("a runtime-only worker reports a config pod")
	}
	v := h.w.Version()
	h.update(UpdateOptions{UpdateType: SyncPodKill, Pod: newNamedPod("9", "ns", "p", false)})
	if !h.w.pods["9"].sync(false).HasConfig {
		t.Fatal("the worker still reports no config pod after an update with one")
	}
	if h.w.Version() == v {
		t.Error("Version did not move when the worker got its config pod")
	}
}
