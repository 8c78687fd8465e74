package podconfig

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/record"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// client-go's recorder is what the kubelet passes; Storage must accept it.
var _ EventRecorder = record.EventRecorder(nil)

func TestNewStorageOptions(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	tests := []struct {
		name string
		opts StorageOptions
		want error
	}{
		{"zero mode is incremental", StorageOptions{Clock: clk, Tracer: trace.Discard}, nil},
		{"snapshot", StorageOptions{Mode: Snapshot, Clock: clk, Tracer: trace.Discard}, nil},
		{"unknown mode", StorageOptions{Mode: Mode(3), Clock: clk, Tracer: trace.Discard}, ErrUnknownMode},
		{"negative mode", StorageOptions{Mode: Mode(-1), Clock: clk, Tracer: trace.Discard}, ErrUnknownMode},
		{"no clock", StorageOptions{Tracer: trace.Discard}, ErrNoClock},
		{"no tracer", StorageOptions{Clock: clk}, ErrNoTracer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewStorage(tc.opts)
			if !errors.Is(err, tc.want) {
				t.Fatalf("NewStorage(%+v) error = %v, want %v", tc.opts, err, tc.want)
			}
			if (s == nil) != (tc.want != nil) {
				t.Errorf("NewStorage(%+v) = %v, want a Storage only without error", tc.opts, s)
			}
		})
	}
}

func TestNewNeedsAStorage(t *testing.T) {
	if _, err := New(nil); !errors.Is(err, ErrNoStorage) {
		t.Errorf("New(nil) error = %v, want %v", err, ErrNoStorage)
	}
}

func TestStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{SET.String(), "SET"}, {ADD.String(), "ADD"}, {DELETE.String(), "DELETE"}, {REMOVE.String(), "REMOVE"},
		{UPDATE.String(), "UPDATE"}, {RECONCILE.String(), "RECONCILE"}, {Op(9).String(), "Op(9)"},
		{Incremental.String(), "Incremental"}, {Snapshot.String(), "Snapshot"},
		{SnapshotAndUpdates.String(), "SnapshotAndUpdates"}, {Mode(7).String(), "Mode(7)"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("String() = %q, want %q", tc.got, tc.want)
		}
	}
}

func TestRegisterEmptyNamePanics(t *testing.T) {
	s, _, _ := newStorage(t, Incremental)
	defer func() {
		if recover() == nil {
			t.Errorf("Register(%q) did not panic", "")
		}
	}()
	s.Register("")
}

// TestDuplicateFullName is derived case 6: the first pod with a full name wins, the second is
// dropped with the kubelet's Warning event and a trace event.
func TestDuplicateFullName(t *testing.T) {
	x := with(newPod("n", "ns"), func(p *v1.Pod) { p.UID = "uid1" })
	y := with(newPod("n", "ns"), func(p *v1.Pod) { p.UID = "uid2"; p.Spec.Hostname = "y" })
	rec := &recorder{}
	events := record.NewFakeRecorder(10)
	s, err := NewStorage(StorageOptions{Clock: vclock.New(vclock.Epoch), Tracer: rec, Recorder: events})
	if err != nil {
		t.Fatalf("NewStorage() error = %v", err)
	}
	got := s.Merge(testSource, upd(SET, testSource, x, y))
	if diff := cmp.Diff([]Update{upd(ADD, testSource, stored(x))}, got); diff != "" {
		t.Errorf("Merge(SET [x y]) mismatch (-want +got):\n%s", diff)
	}
	const msg = `Error validating pod n_ns(uid2) from test due to duplicate pod name "n", ignoring`
	select {
	case e := <-events.Events:
		if want := "Warning FailedValidation " + msg; e != want {
			t.Errorf("recorded event = %q, want %q", e, want)
		}
	default:
		t.Errorf("no event recorded for the dropped duplicate")
	}
	wantTrace := []trace.Event{
		{Component: trace.PodConfig, Event: "error", Source: testSource, Pod: "ns/n", UID: "uid2", Reason: "FailedValidation", Message: msg, Func: "filterInvalidPods"},
		{Component: trace.PodConfig, Event: "update", Op: "ADD", Source: testSource, Pods: []string{"ns/n"}, UID: "uid1", Func: "podStorage.merge"},
	}
	if diff := cmp.Diff(wantTrace, rec.events); diff != "" {
		t.Errorf("trace mismatch (-want +got):\n%s", diff)
	}
	// Without a recorder the duplicate is still dropped.
	s2, _, _ := newStorage(t, Incremental)
	if got := s2.Merge(testSource, upd(ADD, testSource, x, y)); len(got) != 1 || len(got[0].Pods) != 1 {
		t.Errorf("Merge(ADD [x y]) without recorder = %v, want one ADD of x", got)
	}
}

// TestDuplicateFullNameKeys: pods are duplicates exactly when their full names ("name_namespace")
// are equal, "_" in a name or namespace included, and each batch is judged on its own.
func TestDuplicateFullNameKeys(t *testing.T) {
	pod := func(name, namespace string, uid types.UID) *v1.Pod {
		return with(newPod(name, namespace), func(p *v1.Pod) { p.UID = uid })
	}
	tests := []struct {
		name  string
		batch []*v1.Pod
		want  []types.UID // the UIDs kept
	}{
		{"different namespaces", []*v1.Pod{pod("a", "b", "1"), pod("a", "c", "2")}, []types.UID{"1", "2"}},
		{"same name and namespace", []*v1.Pod{pod("a", "b", "1"), pod("a", "b", "2")}, []types.UID{"1"}},
		{"one full name from two pairs", []*v1.Pod{pod("a_b", "c", "1"), pod("a", "b_c", "2")}, []types.UID{"1"}},
		{"underscore in one only", []*v1.Pod{pod("a_b", "c", "1"), pod("a", "bc", "2"), pod("ab", "c", "3")}, []types.UID{"1", "2", "3"}},
		{"namespace of an underscore", []*v1.Pod{pod("x_", "", "1"), pod("x", "_", "2"), pod("x", "", "3")}, []types.UID{"1", "3"}},
		{"nil entries", []*v1.Pod{nil, pod("a", "b", "1"), nil, pod("a", "b", "2")}, []types.UID{"1"}},
	}
	s, _, _ := newStorage(t, Incremental)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Twice: the second call must not see the first call's names.
			for range 2 {
				var got []types.UID
				for _, p := range s.filterDuplicates(testSource, tt.batch) {
					got = append(got, p.UID)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("filterDuplicates() kept (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestDuplicateNamesMapLetGo checks that filterDuplicates' map does not keep a large batch's
// room once the source's batches are much smaller, that a source whose batches keep their size
// keeps its map, and that each source has its own.
func TestDuplicateNamesMapLetGo(t *testing.T) {
	batch := func(n int) []*v1.Pod {
		pods := make([]*v1.Pod, n)
		for i := range pods {
			pods[i] = newPod(fmt.Sprintf("p%d", i), "ns")
		}
		return pods
	}
	s, _, _ := newStorage(t, Incremental)
	// mapOf identifies the source's map, 0 when it has none.
	mapOf := func(source string) uintptr {
		if set := s.names[source]; set != nil && set.m != nil {
			return reflect.ValueOf(set.m).Pointer()
		}
		return 0
	}
	big, small := batch(1000), batch(10)
	s.filterDuplicates(testSource, big)
	first := mapOf(testSource)
	s.filterDuplicates(testSource, big)
	if got := mapOf(testSource); got == 0 || got != first {
		t.Errorf("a source whose batches keep their size did not keep its map")
	}
	// Another source's small batches leave the first source's map alone.
	for range 3 {
		s.filterDuplicates("other", small)
	}
	if got := mapOf(testSource); got != first {
		t.Errorf("another source's small batches let %s's map go", testSource)
	}
	s.filterDuplicates(testSource, small)
	if got := mapOf(testSource); got != 0 {
		t.Errorf("after a batch of %d, the map that held %d names is kept", len(small), len(big))
	}
	// The next call makes a map of its own size, and it stays while the batches keep it.
	if got := s.filterDuplicates(testSource, append(small, small[0])); len(got) != len(small) {
		t.Errorf("filterDuplicates after the map was let go kept %d of %d, want %d", len(got), len(small)+1, len(small))
	}
	kept := mapOf(testSource)
	s.filterDuplicates(testSource, small[:1])
	if got := mapOf(testSource); got == 0 || got != kept {
		t.Errorf("a map of %d names or less was let go", keptNames)
	}
}

func TestTraceEvents(t *testing.T) {
	s, rec, _ := newStorage(t, Incremental)
	a, b := newPod("a", "ns"), newPod("b", "ns")
	s.Merge(testSource, upd(SET, testSource))
	s.Merge(testSource, upd(SET, testSource, a, b))
	s.Merge(testSource, upd(SET, testSource, b))
	s.Merge(testSource, upd(Op(42), testSource, a))
	s.Sync()
	want := []trace.Event{
		{Component: trace.PodConfig, Event: "update", Op: "ADD", Source: testSource, Pods: []string{}, Func: "podStorage.merge"},
		{Component: trace.PodConfig, Event: "update", Op: "ADD", Source: testSource, Pods: []string{"ns/a", "ns/b"}, Func: "podStorage.merge"},
		{Component: trace.PodConfig, Event: "update", Op: "REMOVE", Source: testSource, Pods: []string{"ns/a"}, UID: "ans", Func: "podStorage.merge"},
		{Component: trace.PodConfig, Event: "error", Op: "Op(42)", Source: testSource, Reason: "InvalidOp", Message: "received invalid update type Op(42)", Func: "podStorage.merge"},
		{Component: trace.PodConfig, Event: "update", Op: "SET", Source: AllSource, Pods: []string{"ns/b"}, UID: "bns", Func: "podStorage.sync"},
	}
	if diff := cmp.Diff(want, rec.events); diff != "" {
		t.Errorf("trace mismatch (-want +got):\n%s", diff)
	}
	if rec.events[0].Pods == nil {
		t.Errorf("empty ADD traced Pods = nil, want an empty slice")
	}
}

func TestSeenAllSources(t *testing.T) {
	tests := []struct {
		name       string
		registered []string
		sets       []string // sources that send a SET
		adds       []string // sources that send only an ADD
		seen       []string // the argument
		want       bool
	}{
		{name: "nothing registered", want: true},
		{name: "nothing sent", registered: []string{"api", "file"}, seen: []string{"api", "file"}},
		{name: "one SET missing", registered: []string{"api", "file"}, sets: []string{"file"}, seen: []string{"api", "file"}},
		{name: "ADD does not count", registered: []string{"api", "file"}, sets: []string{"file"}, adds: []string{"api"}, seen: []string{"api", "file"}},
		{name: "caller has not seen one", registered: []string{"api", "file"}, sets: []string{"api", "file"}, seen: []string{"file"}},
		{name: "all seen", registered: []string{"api", "file"}, sets: []string{"api", "file"}, seen: []string{"api", "file"}, want: true},
		{name: "unregistered sources ignored", registered: []string{"file"}, sets: []string{"file", "http"}, seen: []string{"file"}, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _, _ := newStorage(t, Incremental)
			for _, r := range tc.registered {
				s.Register(r)
			}
			for _, src := range tc.sets {
				s.Merge(src, upd(SET, src))
			}
			for _, src := range tc.adds {
				s.Merge(src, upd(ADD, src, newPod("a", src)))
			}
			if got := s.SeenAllSources(sets.New(tc.seen...)); got != tc.want {
				t.Errorf("SeenAllSources(%v) = %v, want %v", tc.seen, got, tc.want)
			}
		})
	}
	var nilStorage *Storage
	if nilStorage.SeenAllSources(sets.New[string]()) {
		t.Errorf("SeenAllSources on a nil Storage = true, want false")
	}
}

func TestUnknownOpDoesNotMarkSeen(t *testing.T) {
	s, _, _ := newStorage(t, Incremental)
	s.Register(testSource)
	if got := s.Merge(testSource, upd(Op(-1), testSource)); got != nil {
		t.Errorf("Merge(Op(-1)) = %v, want nothing", got)
	}
	if s.SeenAllSources(sets.New(testSource)) {
		t.Errorf("SeenAllSources after an unknown op = true, want false")
	}
	if got, want := s.Merge(testSource, upd(SET, testSource)), []Update{upd(ADD, testSource)}; !cmp.Equal(want, got) {
		t.Errorf("Merge(SET []) after an unknown op = %v, want %v (still the first SET)", got, want)
	}
}

// TestSyncOrder checks that Sync and the snapshot SETs list pods by source, then namespace/name.
func TestSyncOrder(t *testing.T) {
	s, _, _ := newStorage(t, Snapshot)
	fb, fa := newPod("b", "x"), newPod("a", "y")
	ab := newPod("a", "x")
	s.Merge("file", upd(SET, "file", fa, fb))
	got := s.Merge("api", upd(SET, "api", ab))
	all := []*v1.Pod{storedAt(ab, "api", epochSeen), storedAt(fb, "file", epochSeen), storedAt(fa, "file", epochSeen)}
	if diff := cmp.Diff([]Update{upd(SET, "api", all...)}, got); diff != "" {
		t.Errorf("Merge(api, SET) mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(upd(SET, AllSource, all...), s.Sync()); diff != "" {
		t.Errorf("Sync() mismatch (-want +got):\n%s", diff)
	}
	empty, _, _ := newStorage(t, Incremental)
	if got := empty.Sync(); got.Pods == nil || len(got.Pods) != 0 || got.Op != SET || got.Source != AllSource {
		t.Errorf("Sync() on an empty Storage = %#v, want an empty SET from %q", got, AllSource)
	}
}

// TestSeenAnnotation checks the config.seen format (nine fractional digits, the clock's zone), that
// an update keeps the first-seen time, and that a pod added again after its removal is seen anew.
func TestSeenAnnotation(t *testing.T) {
	start := time.Date(2026, 3, 4, 5, 6, 7, 8, time.FixedZone("X", 3600))
	clk := vclock.New(start)
	s, err := NewStorage(StorageOptions{Clock: clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatalf("NewStorage() error = %v", err)
	}
	p := newPod("p", "ns")
	const first = "2026-03-04T05:06:07.000000008+01:00"
	seenOf := func(us []Update) string { return us[len(us)-1].Pods[0].Annotations["kubernetes.io/config.seen"] }
	if got := seenOf(s.Merge(testSource, upd(SET, testSource, p))); got != first {
		t.Errorf("config.seen of a new pod = %q, want %q", got, first)
	}
	clk.Advance(1500 * time.Millisecond)
	if got := seenOf(s.Merge(testSource, upd(SET, testSource, withContainer(p)))); got != first {
		t.Errorf("config.seen after an update = %q, want %q", got, first)
	}
	s.Merge(testSource, upd(SET, testSource))
	if got, want := seenOf(s.Merge(testSource, upd(SET, testSource, p))), "2026-03-04T05:06:08.500000008+01:00"; got != want {
		t.Errorf("config.seen of a re-added pod = %q, want %q", got, want)
	}
}

// TestMergeDoesNotAlias checks the sharing contract (docs/design/008-shared-pods.md): Merge never
// writes to its input, which it may keep read-only, and what it emits, and what Sync snapshots,
// shares memory neither with what Storage keeps nor with the sources' objects. (Copies of one
// stored pod may share with each other: TestCopiesShareUnchangedParts.)
func TestMergeDoesNotAlias(t *testing.T) {
	ts := &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 9, 0, time.UTC)}
	a := newPod("a", "ns")
	inputs := []Update{
		upd(SET, testSource, a), // add
		upd(SET, testSource, with(a, func(p *v1.Pod) { p.Status.Message = "s" })),                                // reconcile
		upd(ADD, testSource, with(withContainer(a), func(p *v1.Pod) { p.Labels = map[string]string{"k": "v"} })), // update
		upd(DELETE, testSource, with(withContainer(a), func(p *v1.Pod) { p.DeletionTimestamp = ts; p.Labels = map[string]string{"k": "v"} })),
	}
	s, _, _ := newStorage(t, Incremental)
	storedPods := func() []*v1.Pod {
		var out []*v1.Pod
		for _, p := range s.pods[testSource] {
			out = append(out, p.view(testSource).DeepCopy())
		}
		return out
	}
	for i, in := range inputs {
		before := in.Pods[0].DeepCopy()
		out := s.Merge(testSource, in)
		if diff := cmp.Diff(before, in.Pods[0]); diff != "" {
			t.Errorf("input %d: Merge changed its input (-before +after):\n%s", i, diff)
		}
		if len(out) != 1 {
			t.Fatalf("input %d: Merge(%v) = %d updates, want 1", i, in.Op, len(out))
		}
		stored := storedPods()
		scribble(out[0].Pods[0])
		if diff := cmp.Diff(stored, storedPods()); diff != "" {
			t.Errorf("input %d: stored pod changed through an emitted pod (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff(before, in.Pods[0]); diff != "" {
			t.Errorf("input %d: the source's pod changed through an emitted pod (-before +after):\n%s", i, diff)
		}
		// A snapshot is a copy too.
		scribble(s.Sync().Pods[0])
		if diff := cmp.Diff(stored, storedPods()); diff != "" {
			t.Errorf("input %d: stored pod changed through a Sync snapshot (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff(before, in.Pods[0]); diff != "" {
			t.Errorf("input %d: the source's pod changed through a Sync snapshot (-before +after):\n%s", i, diff)
		}
	}
}

// TestCopiesShareUnchangedParts checks what one stored pod's copies share: while only its status
// changes (a RECONCILE, a Sync), each copy is a Pod of its own, with a status of its own, that
// shares the last copy's metadata and spec; a semantic change (UPDATE, DELETE) is copied anew.
// Every copy has the values a deep copy of the stored pod has.
func TestCopiesShareUnchangedParts(t *testing.T) {
	ts := &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 9, 0, time.UTC)}
	a := newPod("a", "ns")
	a.Labels = map[string]string{"app": "a"}
	steps := []struct {
		in    Update
		op    Op
		share bool // the copy shares the previous copy's metadata and spec
	}{
		{in: upd(SET, testSource, a), op: ADD},
		{in: upd(SET, testSource, with(a, func(p *v1.Pod) { p.Status.Message = "one" })), op: RECONCILE, share: true},
		{in: upd(SET, testSource, with(a, func(p *v1.Pod) { p.Status.Message = "two" })), op: RECONCILE, share: true},
		{in: upd(SET, testSource, with(withContainer(a), func(p *v1.Pod) { p.Status.Message = "two" })), op: UPDATE},
		{in: upd(SET, testSource, with(withContainer(a), func(p *v1.Pod) { p.Status.Message = "three" })), op: RECONCILE, share: true},
		{in: upd(SET, testSource, with(withContainer(a), func(p *v1.Pod) { p.DeletionTimestamp = ts; p.Status.Message = "three" })), op: DELETE},
	}
	s, _, _ := newStorage(t, Incremental)
	var last *v1.Pod
	for i, step := range steps {
		out := s.Merge(testSource, step.in)
		if len(out) != 1 || out[0].Op != step.op || len(out[0].Pods) != 1 {
			t.Fatalf("step %d: Merge = %v, want one %v of one pod", i, out, step.op)
		}
		got := out[0].Pods[0]
		stored := storedView(s, testSource, a.UID)
		if diff := cmp.Diff(stored, got); diff != "" {
			t.Errorf("step %d: the copy differs from the stored pod (-stored +copy):\n%s", i, diff)
		}
		if got == stored || got == last {
			t.Errorf("step %d: the copy is not a Pod of its own", i)
		}
		sharesMeta := last != nil && sameMap(got.Labels, last.Labels) && sameMap(got.Annotations, last.Annotations) &&
			&got.Spec.Containers[0] == &last.Spec.Containers[0]
		if sharesMeta != step.share {
			t.Errorf("step %d: the copy shares the last copy's metadata and spec = %v, want %v", i, sharesMeta, step.share)
		}
		if sameMap(got.Labels, stored.Labels) || &got.Spec.Containers[0] == &stored.Spec.Containers[0] {
			t.Errorf("step %d: the copy shares the stored pod's metadata or spec", i)
		}
		if last != nil {
			// Each copy's status is its own: a write to the last one's (which nobody may make)
			// would not reach this one.
			before := got.Status.Message
			last.Status.Message = "scribbled"
			if got.Status.Message != before {
				t.Errorf("step %d: the copy shares the last copy's status", i)
			}
		}
		last = got
	}
	// A snapshot of an unchanged pod shares the last copy's metadata and spec too.
	snap := s.Sync().Pods[0]
	if !sameMap(snap.Labels, last.Labels) || &snap.Spec.Containers[0] != &last.Spec.Containers[0] {
		t.Errorf("Sync's copy does not share the last emitted copy's metadata and spec")
	}
}

// sameMap reports whether a and b are the same map, not only equal ones.
func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// scribble changes p in place, through every map, slice and pointer it holds.
func scribble(p *v1.Pod) {
	for k := range p.Annotations {
		p.Annotations[k] = "scribbled"
	}
	for k := range p.Labels {
		p.Labels[k] = "scribbled"
	}
	p.Spec.Containers[0].Image = "scribbled"
	p.Status.Message = "scribbled"
	if p.DeletionTimestamp != nil {
		p.DeletionTimestamp.Time = time.Time{}
	}
}

// TestNilPodsSkipped checks that nil entries in an update are ignored rather than crashing Merge.
func TestNilPodsSkipped(t *testing.T) {
	a := newPod("a", "ns")
	runSteps(t, Incremental, []step{
		{in: upd(SET, testSource, nil, a, nil), want: []Update{upd(ADD, testSource, stored(a))}},
		{in: upd(REMOVE, testSource, nil, a), want: []Update{upd(REMOVE, testSource, stored(a))}},
	})
}

// TestResentObjectIsNotCompared pins the sources' contract: an object sent again is taken as
// unchanged, while a new object with new content is compared as usual.
func TestResentObjectIsNotCompared(t *testing.T) {
	s, _, _ := newStorage(t, Incremental)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u1"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "i:1"}}}}
	s.Merge("file", Update{Op: SET, Source: "file", Pods: []*v1.Pod{pod}})
	if got := s.Merge("file", Update{Op: SET, Source: "file", Pods: []*v1.Pod{pod}}); len(got) != 0 {
		t.Errorf("Merge(same object again) = %v, want nothing", got)
	}
	changed := pod.DeepCopy()
	changed.Spec.Containers[0].Image = "i:2"
	got := s.Merge("file", Update{Op: SET, Source: "file", Pods: []*v1.Pod{changed}})
	if len(got) != 1 || got[0].Op != UPDATE {
		t.Errorf("Merge(changed copy) = %v, want one UPDATE", got)
	}
	// Removing and re-sending the old object must compare again: the memo went with the pod.
	s.Merge("file", Update{Op: SET, Source: "file"})
	got = s.Merge("file", Update{Op: SET, Source: "file", Pods: []*v1.Pod{pod}})
	if len(got) != 1 || got[0].Op != ADD {
		t.Errorf("Merge(old object after removal) = %v, want one ADD", got)
	}
}

// TestStoredPodHoldsTheNewestObject checks that a pod sent again as a new, equal object (the api
// source sends one at every status write) leaves Storage holding the new object's spec, labels
// and status, not the first object's: the same values, so nothing emitted changes, but the
// object the source replaced can go.
func TestStoredPodHoldsTheNewestObject(t *testing.T) {
	first := with(newPod("a", "ns"), func(p *v1.Pod) {
		p.Labels = map[string]string{"k": "v"}
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}}
	})
	tests := []struct {
		name   string
		next   *v1.Pod
		wantOp []Op // what the second merge emits
	}{
		{name: "unchanged", next: first.DeepCopy()},
		{name: "status changed", next: with(first, func(p *v1.Pod) { p.Status.Message = "new" }), wantOp: []Op{RECONCILE}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _ := newStorage(t, Incremental)
			s.Merge(testSource, upd(SET, testSource, first.DeepCopy()))
			out := s.Merge(testSource, upd(SET, testSource, tt.next))
			var ops []Op
			for _, u := range out {
				ops = append(ops, u.Op)
			}
			if diff := cmp.Diff(tt.wantOp, ops); diff != "" {
				t.Errorf("second Merge ops (-want +got):\n%s", diff)
			}
			if got := s.pods[testSource][tt.next.UID].ref; got != tt.next {
				t.Error("Storage keeps another object than the newest the source sent")
			}
			stored := storedView(s, testSource, tt.next.UID)
			if &stored.Spec.Containers[0] != &tt.next.Spec.Containers[0] {
				t.Error("stored pod holds the first object's spec, want the newest's")
			}
			if reflect.ValueOf(stored.Labels).UnsafePointer() != reflect.ValueOf(tt.next.Labels).UnsafePointer() {
				t.Error("stored pod holds the first object's labels, want the newest's")
			}
			if &stored.Status.Conditions[0] != &tt.next.Status.Conditions[0] {
				t.Error("stored pod holds the first object's status, want the newest's")
			}
			want := with(tt.next, func(p *v1.Pod) {
				p.Annotations = map[string]string{"kubernetes.io/config.source": testSource, "kubernetes.io/config.seen": epochSeen}
			})
			if diff := cmp.Diff(upd(SET, AllSource, want), s.Sync()); diff != "" {
				t.Errorf("Sync() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMergeOfTheLastSetAgain: a SET of the very objects of the source's last SET, which stored
// each of them, is merged without comparing anything; it must emit and trace what a full merge
// emits and traces, in every mode, and leave the Storage as a full merge would.
func TestMergeOfTheLastSetAgain(t *testing.T) {
	a, b, c := newPod("a", "ns"), newPod("b", "ns"), newPod("c", "ns")
	b2 := with(b, func(p *v1.Pod) { p.Spec.Hostname = "b2" })
	a2 := with(a, func(p *v1.Pod) { p.UID = "other" }) // a's name, another UID
	// Newer objects of the same pods: a spec change, a status change (a reconcile), a deletion.
	a3 := with(a, func(p *v1.Pod) { p.Spec.Hostname = "a3" })
	b3 := with(b2, func(p *v1.Pod) { p.Status.Phase = v1.PodRunning })
	b4 := with(b3, func(p *v1.Pod) {
		now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		p.DeletionTimestamp = &now
	})
	bRenamed := with(b4, func(p *v1.Pod) { p.Name = "b-renamed" }) // b's UID, another name
	cRenamed := with(c, func(p *v1.Pod) { p.Name = "b-renamed" })  // c's UID, bRenamed's name
	steps := []Update{
		upd(SET, testSource, a, b),
		upd(SET, testSource, a, b),
		upd(SET, testSource, a, b),
		upd(ADD, testSource, c),
		upd(SET, testSource, a, b), // removes c: the last merge was not this SET
		upd(SET, testSource, a, b),
		upd(SET, "other", c), // another source's merge changes nothing of this one's
		upd(SET, testSource, a, b),
		upd(SET, testSource, a, b2),
		upd(SET, testSource, a, b2),
		upd(SET, testSource, b2, a), // the same objects in another order
		upd(SET, testSource, b2, a),
		upd(SET, testSource, b3, a3), // two newer objects at once
		upd(SET, testSource, b3, a3),
		upd(SET, testSource, b4, a3), // a deletion
		upd(SET, testSource, bRenamed, a3),
		upd(SET, testSource, bRenamed, a),
		upd(SET, testSource, bRenamed, a, c),     // one more pod
		upd(SET, testSource, bRenamed, c),        // one fewer
		upd(SET, testSource, bRenamed, cRenamed), // a rename that makes a duplicate
		upd(SET, testSource, bRenamed, cRenamed),
		upd(SET, testSource, a, a2), // a duplicate name, reported at every SET
		upd(SET, testSource, a, a2),
		upd(SET, testSource, a, a),
		upd(SET, testSource, a, a),
		upd(SET, testSource),
		upd(SET, testSource),
		upd(SET, testSource, c),
	}
	for _, mode := range []Mode{Incremental, Snapshot, SnapshotAndUpdates} {
		t.Run(mode.String(), func(t *testing.T) {
			fast, fastTrace, _ := newStorage(t, mode)
			full, fullTrace, _ := newStorage(t, mode)
			for i, u := range steps {
				got := fast.Merge(u.Source, u)
				clear(full.lastSet) // never the shortcut
				want := full.Merge(u.Source, u)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("step %d: Merge(%v of %d pods) (-full +shortcut):\n%s", i+1, u.Op, len(u.Pods), diff)
				}
				if diff := cmp.Diff(fullTrace.events, fastTrace.events); diff != "" {
					t.Errorf("step %d: trace (-full +shortcut):\n%s", i+1, diff)
				}
				if diff := cmp.Diff(full.Sync(), fast.Sync()); diff != "" {
					t.Errorf("step %d: Sync() (-full +shortcut):\n%s", i+1, diff)
				}
			}
		})
	}
}

// TestMergeOfTheLastSetAgainAllocatesNothing: the file source's SET every 20s of unchanged files
// costs no allocation.
func TestMergeOfTheLastSetAgainAllocatesNothing(t *testing.T) {
	s, _, _ := newStorage(t, Incremental)
	u := upd(SET, testSource, newPod("a", "ns"), newPod("b", "ns"))
	s.Merge(testSource, u)
	if n := testing.AllocsPerRun(50, func() {
		if out := s.Merge(testSource, u); len(out) != 0 {
			t.Fatalf("Merge() of the last SET again = %v, want nothing", out)
		}
	}); n != 0 {
		t.Errorf("Merge() of the last SET again = %v allocations, want 0", n)
	}
}

// TestDeepCopySharesOnlyManagedFieldsEncodings checks storedPod.deepCopy against DeepCopy of the
// pod as the kubelet stores it: the same values, its own metadata, spec, status and managed
// fields entries, and the managed fields' encodings shared with the pod copied.
func TestDeepCopySharesOnlyManagedFieldsEncodings(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 9, 0, time.UTC))
	entry := func(manager string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			Time: &at, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{}}`)}}
	}
	full := with(newPod("a", "ns"), func(p *v1.Pod) {
		p.Labels = map[string]string{"app": "a"}
		p.Annotations = map[string]string{"k": "v"}
		p.ManagedFields = []metav1.ManagedFieldsEntry{entry("kube-controller-manager"), entry("kubelet"), {Manager: "no-time"}}
		p.Status.Message = "m"
	})
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
	}{
		{"managed fields", full},
		{"none", with(full, func(p *v1.Pod) { p.ManagedFields = nil })},
		{"empty", with(full, func(p *v1.Pod) { p.ManagedFields = []metav1.ManagedFieldsEntry{} })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.pod.DeepCopy()
			got := (&storedPod{ref: tc.pod, seen: epochSeen}).deepCopy(testSource)
			if diff := cmp.Diff(stored(tc.pod), got); diff != "" {
				t.Errorf("deepCopy differs from DeepCopy (-want +got):\n%s", diff)
			}
			if (got.ManagedFields == nil) != (tc.pod.ManagedFields == nil) {
				t.Errorf("deepCopy's managed fields nil = %v, want %v", got.ManagedFields == nil, tc.pod.ManagedFields == nil)
			}
			for i := range got.ManagedFields {
				g, p := &got.ManagedFields[i], &tc.pod.ManagedFields[i]
				if g.FieldsV1 != p.FieldsV1 {
					t.Errorf("entry %d: the encoding is not shared", i)
				}
				if g.Time != nil && g.Time == p.Time {
					t.Errorf("entry %d: the time is shared", i)
				}
			}
			if len(got.ManagedFields) > 0 && &got.ManagedFields[0] == &tc.pod.ManagedFields[0] {
				t.Errorf("the managed fields entries are shared")
			}
			scribble(got)
			if diff := cmp.Diff(before, tc.pod); diff != "" {
				t.Errorf("the pod copied changed through its copy (-before +after):\n%s", diff)
			}
		})
	}
}
