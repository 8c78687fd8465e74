package trace

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestCauses replays the pipeline's hand-overs for one static pod, from the file write to the
// restart after its container died, and checks the cause of each event.
func TestCauses(t *testing.T) {
	const pod = "default/web-node-1"
	steps := []struct {
		at    time.Duration
		event Event
		// cause is the index in steps of the expected cause, -1 for none.
		cause int
	}{
		{0, Event{Component: Sources, Event: KindSet, Source: "file", Pods: []string{}}, -1},                             // 0 periodic
		{time.Second, Event{Component: Scenario, Event: KindWriteManifest}, -1},                                          // 1
		{time.Second, Event{Component: Sources, Event: KindSet, Source: "file", Pods: []string{pod}}, 1},                 // 2
		{time.Second, Event{Component: Sources, Event: KindSet, Source: "file", Pods: []string{pod}}, 1},                 // 3 the same write
		{time.Second, Event{Component: PodConfig, Event: KindUpdate, Op: "ADD", Source: "file", Pods: []string{pod}}, 3}, // 4
		{time.Second, Event{Component: SyncLoop, Event: KindConfig, Op: "ADD", Source: "file", Pods: []string{pod}}, 4},  // 5
		{time.Second, Event{Component: PodManager, Event: KindAdd, Pod: pod}, 5},                                         // 6
		{time.Second, Event{Component: PodWorkers, Event: KindState, Pod: pod, To: "sync"}, 5},                           // 7
		{time.Second, Event{Component: PodWorkers, Event: KindSync, Pod: pod, Op: "create"}, 5},                          // 8
		{time.Second, Event{Component: Status, Event: KindSet, Pod: pod}, 8},                                             // 9
		{time.Second, Event{Component: Runtime, Event: KindSync, Pod: pod}, 8},                                           // 10
		{time.Second, Event{Component: APIServer, Event: KindStatus, Pod: pod}, 9},                                       // 11
		{time.Second, Event{Component: Status, Event: KindPatch, Pod: pod}, 9},                                           // 12
		{time.Second, Event{Component: Sources, Event: KindSet, Source: "api", Pods: []string{pod}}, 11},                 // 13
		{2 * time.Second, Event{Component: Runtime, Event: KindSandbox, Pod: pod, To: "ready"}, 10},                      // 14
		{2 * time.Second, Event{Component: Runtime, Event: KindPull, Pod: pod, Container: "nginx"}, 14},                  // 15
		{2 * time.Second, Event{Component: Events, Event: KindNormal, Pod: pod, Reason: "Pulling"}, 15},                  // 16
		{3 * time.Second, Event{Component: Runtime, Event: KindPulled, Pod: pod, Container: "nginx"}, 15},                // 17
		{3 * time.Second, Event{Component: Runtime, Event: KindStarted, Pod: pod, Container: "nginx"}, 17},               // 18
		{4 * time.Second, Event{Component: Scenario, Event: KindContainerExit, Pod: pod}, -1},                            // 19
		{4 * time.Second, Event{Component: Runtime, Event: KindExited, Pod: pod, Container: "nginx"}, 19},                // 20
		{4 * time.Second, Event{Component: PLEG, Event: KindContainerDied, Pod: pod, Container: "nginx"}, 20},            // 21
		{4 * time.Second, Event{Component: SyncLoop, Event: KindPLEG, Pod: pod}, 21},                                     // 22
		{4 * time.Second, Event{Component: PodWorkers, Event: KindSync, Pod: pod, Op: "sync"}, 22},                       // 23
		{4 * time.Second, Event{Component: Runtime, Event: KindCreated, Pod: pod, Container: "nginx"}, 23},               // 24
		{4 * time.Second, Event{Component: PodWorkers, Event: KindRequeue, Pod: pod}, 23},                                // 25
		{5 * time.Second, Event{Component: SyncLoop, Event: KindSync, Pod: pod}, 25},                                     // 26
		{5 * time.Second, Event{Component: Runtime, Event: KindExited, Pod: pod, Container: "nginx"}, 24},                // 27 the fault broke one run
		{20 * time.Second, Event{Component: Sources, Event: KindSet, Source: "file", Pods: []string{pod}}, -1},           // 28 periodic
		{20 * time.Second, Event{Component: Housekeeping, Event: KindKill, Pod: pod}, -1},                                // 29
		{20 * time.Second, Event{Component: "prober", Event: "probe", Pod: pod}, 29},                                     // 30 an unknown component
	}
	clk := vclock.New(vclock.Epoch)
	r, err := NewRecorder(RecorderOptions{Clock: clk, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		clk.Set(vclock.Epoch.Add(s.at))
		r.Emit(s.event)
	}
	events := r.Events()
	var got, want []uint64
	for i, s := range steps {
		if events[i].Seq != uint64(i+1) {
			t.Fatalf("event %d: Seq = %d, want %d", i, events[i].Seq, i+1)
		}
		got = append(got, events[i].Cause)
		want = append(want, uint64(s.cause+1))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("causes (seqs) mismatch (-want +got):\n%s", diff)
	}
}

// TestCauseSetByEmitter checks that an emitter's own cause wins over the linker's.
func TestCauseSetByEmitter(t *testing.T) {
	r, err := NewRecorder(RecorderOptions{Clock: vclock.New(vclock.Epoch), Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	r.Emit(Event{Component: Scenario, Event: KindWriteManifest})
	r.Emit(Event{Component: Sources, Event: KindSet, Source: "file"})
	r.Emit(Event{Component: PodConfig, Event: KindUpdate, Source: "file", Cause: 1})
	if got := r.Events()[2].Cause; got != 1 {
		t.Errorf("Cause = %d, want the emitter's 1", got)
	}
}

// TestLinkerForgetsQuietPods checks that what the linker remembers of a pod goes once the pod has
// been quiet for forgetAfter events, so that a long run's memory does not grow with every pod it
// ever saw, and that each thing remembered of a busy pod and its containers is forgotten on its
// own once that old: a PLEG event whose kind of runtime event was forgotten follows the
// container's latest event instead.
func TestLinkerForgetsQuietPods(t *testing.T) {
	l := newLinker()
	var seq uint64
	emit := func(e Event) uint64 {
		seq++
		e.Seq = seq
		return l.link(e)
	}
	emit(Event{Component: PodWorkers, Event: KindSync, Pod: "default/gone"})
	emit(Event{Component: Runtime, Event: KindStarted, Pod: "default/gone", Container: "c"})
	emit(Event{Component: Runtime, Event: KindStarted, Pod: "default/busy", Container: "c"})
	emit(Event{Component: Runtime, Event: KindStarted, Pod: "default/busy", Container: "quiet"})
	for seq < forgetAfter+pruneEvery {
		emit(Event{Component: Runtime, Event: KindCreated, Pod: "default/busy", Container: "c"})
	}
	last := seq
	if _, ok := l.pods["default/gone"]; ok {
		t.Error("the linker still remembers a pod quiet for more than forgetAfter events")
	}
	busy := l.links("default/busy")
	if busy.seqs[runtimeSeq] != last {
		t.Errorf("the busy pod's last runtime event is %d, want %d", busy.seqs[runtimeSeq], last)
	}
	if c := busy.container("quiet"); c != nil {
		t.Errorf("the linker still remembers a container quiet for more than forgetAfter events: %+v", *c)
	}
	if got := emit(Event{Component: PLEG, Event: KindContainerStarted, Pod: "default/busy", Container: "c"}); got != last {
		t.Errorf("a PLEG start after the start was forgotten follows %d, want the container's last event %d", got, last)
	}
	if got := emit(Event{Component: PLEG, Event: KindContainerStarted, Pod: "default/gone", Container: "c"}); got != 0 {
		t.Errorf("a forgotten pod's PLEG start follows %d, want none", got)
	}
}

// TestLinkerForgetsQuietCrashLoop checks that a pod whose last fault step was a crash loop is
// forgotten like any other once quiet for forgetAfter events: the loop outlives an exit, but not
// its step, else the record would never be empty and never be dropped.
func TestLinkerForgetsQuietCrashLoop(t *testing.T) {
	l := newLinker()
	var seq uint64
	emit := func(e Event) {
		seq++
		e.Seq = seq
		l.link(e)
	}
	emit(Event{Component: Scenario, Event: KindCrashLoop, Pod: "default/looping"})
	for seq < forgetAfter+pruneEvery {
		emit(Event{Component: PodWorkers, Event: KindSync, Pod: "default/busy"})
	}
	if p, ok := l.pods["default/looping"]; ok {
		t.Errorf("the linker still remembers a crash-looping pod quiet for more than forgetAfter events: %+v", *p)
	}
}

// TestUnknownPodsLeaveNoRecord checks that looking up pods the linker has no record of (every
// component's rules, with a pod and its containers) makes no record: the lookups read a missing
// record as an empty one.
func TestUnknownPodsLeaveNoRecord(t *testing.T) {
	l := newLinker()
	for i, c := range []Component{SyncLoop, PodManager, PodWorkers, Runtime, PLEG, Status, APIServer, Mirror, DeviceManager, "prober"} {
		for _, k := range []Kind{KindPLEG, KindSkip, KindSync, KindRequeue, KindError, KindExited, KindContainerStarted, KindContainerDied, KindSet, KindStatus} {
			e := Event{Seq: uint64(i + 1), Component: c, Event: k, Pod: "default/unknown", Container: "c", Pods: []string{"default/other"}}
			if got := l.cause(e); got != 0 {
				t.Errorf("%s %s of an unknown pod follows %d, want none", c, k, got)
			}
		}
	}
	if len(l.pods) != 0 {
		t.Errorf("looking up unknown pods made records: %v", l.pods)
	}
}

// TestTextFormHasNoCauses checks that seq and cause leave the text form, and so the golden
// traces, as they were.
func TestTextFormHasNoCauses(t *testing.T) {
	e := Event{T: time.Second, Component: PodConfig, Event: KindUpdate, Op: "ADD", Source: "file", Func: "podStorage.merge"}
	with := e
	with.Seq, with.Cause = 9, 4
	if e.Text() != with.Text() {
		t.Errorf("Text() with a seq and cause = %q, want %q", with.Text(), e.Text())
	}
}

// TestEventsOfNoPodLeaveNoRecord checks that events without a pod (the runtime going down, a
// relist error, a sync loop tick) make no record for the pod "": they are no pod's, and a
// record under "" would link a later event of no pod to them as if they were one pod's. A failed
// relist follows the runtime's outage it falls in, and nothing once the outage is over.
func TestEventsOfNoPodLeaveNoRecord(t *testing.T) {
	l := newLinker()
	var seq uint64
	emit := func(at time.Duration, e Event) uint64 {
		seq++
		e.Seq, e.T = seq, at
		return l.link(e)
	}
	emit(20*time.Second, Event{Component: Scenario, Event: KindRuntimeDown})
	down := seq + 1
	if got := emit(20*time.Second, Event{Component: Runtime, Event: KindDown, Delay: 4 * time.Minute}); got != seq-1 {
		t.Errorf("runtime down follows %d, want the step %d", got, seq-1)
	}
	for _, c := range []Component{SyncLoop, PodManager, PodWorkers, Runtime, PLEG, Status, APIServer, Mirror, Housekeeping, DeviceManager, "prober"} {
		for _, k := range []Kind{KindPLEG, KindSkip, KindSync, KindState, KindRequeue, KindExited, KindStarted, KindSandbox, KindContainerStarted, KindContainerDied, KindSet, KindStatus} {
			emit(21*time.Second, Event{Component: c, Event: k, Pods: []string{}})
		}
	}
	if len(l.pods) != 0 {
		t.Errorf("events of no pod made records: %q", slices.Collect(maps.Keys(l.pods)))
	}
	for _, tc := range []struct {
		at   time.Duration
		want uint64
	}{
		{21 * time.Second, down},
		{259 * time.Second, down},
		{260 * time.Second, 0}, // the runtime answers again
	} {
		if got := emit(tc.at, Event{Component: PLEG, Event: KindError}); got != tc.want {
			t.Errorf("a relist error at %v follows %d, want %d", tc.at, got, tc.want)
		}
	}
}
