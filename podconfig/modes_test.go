package podconfig

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestMergeOpsByMode sends every input op, in every mode, to a Storage that already holds
// test:[a b] and other:[z] (both sources seen), and checks what is emitted.
func TestMergeOpsByMode(t *testing.T) {
	a, b, z := newPod("a", "ns"), newPod("b", "ns"), newPod("z", "ns")
	n, m := newPod("n", "ns"), newPod("m", "ns")
	aSpec := withContainer(a)
	aDel := with(a, func(p *v1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)} })
	aStatus := with(a, func(p *v1.Pod) { p.Status.Phase = v1.PodRunning })
	bStatus := with(b, func(p *v1.Pod) { p.Status.Phase = v1.PodRunning })
	zs := storedAt(z, "other", epochSeen)
	set := func(ps ...*v1.Pod) []Update {
		return []Update{upd(SET, testSource, append([]*v1.Pod{zs}, ps...)...)}
	}
	type want struct{ inc, snap, snapUpd []Update }
	tests := []struct {
		name string
		in   Update
		want want
	}{{
		name: "ADD new and unchanged",
		in:   upd(ADD, testSource, a, n),
		want: want{
			inc:     []Update{upd(ADD, testSource, stored(n))},
			snap:    set(stored(a), stored(b), stored(n)),
			snapUpd: set(stored(a), stored(b), stored(n)),
		},
	}, {
		name: "UPDATE spec change",
		in:   upd(UPDATE, testSource, aSpec),
		want: want{
			inc:     []Update{upd(UPDATE, testSource, stored(aSpec))},
			snap:    set(stored(aSpec), stored(b)),
			snapUpd: []Update{upd(UPDATE, testSource, stored(aSpec))},
		},
	}, {
		name: "UPDATE of unknown UID becomes ADD",
		in:   upd(UPDATE, testSource, n),
		want: want{
			inc:     []Update{upd(ADD, testSource, stored(n))},
			snap:    set(stored(a), stored(b), stored(n)),
			snapUpd: set(stored(a), stored(b), stored(n)),
		},
	}, {
		name: "DELETE with deletion timestamp",
		in:   upd(DELETE, testSource, aDel),
		want: want{
			inc:     []Update{upd(DELETE, testSource, stored(aDel))},
			snap:    set(stored(aDel), stored(b)),
			snapUpd: []Update{upd(DELETE, testSource, stored(aDel))},
		},
	}, {
		name: "DELETE without deletion timestamp becomes UPDATE",
		in:   upd(DELETE, testSource, aSpec),
		want: want{
			inc:     []Update{upd(UPDATE, testSource, stored(aSpec))},
			snap:    set(stored(aSpec), stored(b)),
			snapUpd: []Update{upd(UPDATE, testSource, stored(aSpec))},
		},
	}, {
		name: "DELETE unchanged is silent",
		in:   upd(DELETE, testSource, a),
	}, {
		name: "REMOVE known and unknown UIDs",
		in:   upd(REMOVE, testSource, n, a),
		want: want{
			inc:     []Update{upd(REMOVE, testSource, stored(a))},
			snap:    set(stored(b)),
			snapUpd: set(stored(b)),
		},
	}, {
		name: "REMOVE keeps input order",
		in:   upd(REMOVE, testSource, b, a),
		want: want{
			inc:     []Update{upd(REMOVE, testSource, stored(b), stored(a))},
			snap:    set(),
			snapUpd: set(),
		},
	}, {
		name: "SET removes adds and reconciles",
		in:   upd(SET, testSource, bStatus, m),
		want: want{
			inc:     []Update{upd(REMOVE, testSource, stored(a)), upd(ADD, testSource, stored(m)), upd(RECONCILE, testSource, stored(bStatus))},
			snap:    set(stored(bStatus), stored(m)),
			snapUpd: set(stored(bStatus), stored(m)),
		},
	}, {
		name: "SET unchanged is silent",
		in:   upd(SET, testSource, b, a),
	}, {
		name: "status only change",
		in:   upd(ADD, testSource, aStatus),
		want: want{inc: []Update{upd(RECONCILE, testSource, stored(aStatus))}},
	}, {
		name: "unknown op",
		in:   upd(Op(42), testSource, n),
	}}
	for _, tc := range tests {
		for _, mode := range []Mode{Incremental, Snapshot, SnapshotAndUpdates} {
			t.Run(tc.name+"_"+mode.String(), func(t *testing.T) {
				s, _, _ := newStorage(t, mode)
				s.Merge("other", upd(SET, "other", z))
				s.Merge(testSource, upd(SET, testSource, a, b))
				got := s.Merge(testSource, tc.in)
				want := map[Mode][]Update{Incremental: tc.want.inc, Snapshot: tc.want.snap, SnapshotAndUpdates: tc.want.snapUpd}[mode]
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Merge(%q, %v) mismatch (-want +got):\n%s", testSource, tc.in.Op, diff)
				}
			})
		}
	}
}

// TestFirstSetAfterAdds is derived case 1 in every mode: ADD before the first SET, then an empty
// SET, gives REMOVE then the empty ADD (or a snapshot).
func TestFirstSetAfterAdds(t *testing.T) {
	a := newPod("a", "ns")
	tests := []struct {
		mode Mode
		want []Update
	}{
		{Incremental, []Update{upd(REMOVE, testSource, stored(a)), upd(ADD, testSource)}},
		{Snapshot, []Update{upd(SET, testSource)}},
		{SnapshotAndUpdates, []Update{upd(SET, testSource)}},
	}
	for _, tc := range tests {
		t.Run(tc.mode.String(), func(t *testing.T) {
			s, _, _ := newStorage(t, tc.mode)
			s.Merge(testSource, upd(ADD, testSource, a))
			got := s.Merge(testSource, upd(SET, testSource))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Merge(SET []) mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDerivedCases ports the derived conformance cases (no upstream test) in Incremental mode.
func TestDerivedCases(t *testing.T) {
	a := newPod("a", "ns")
	ts := &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)}
	aTerm := with(a, func(p *v1.Pod) { p.DeletionTimestamp = ts })
	aTermLabel := with(aTerm, func(p *v1.Pod) { p.Labels = map[string]string{"x": "y"} })
	aTermStatus := with(aTerm, func(p *v1.Pod) { p.Status.Reason = "Terminating" })
	set := func(ps ...*v1.Pod) Update { return upd(SET, testSource, ps...) }
	r, n, u, d, st := newPod("r", "ns"), newPod("n", "ns"), newPod("u", "ns"), newPod("d", "ns"), newPod("s", "ns")
	tests := []struct {
		name  string
		steps []step
	}{{
		name: "terminating pod changes again",
		steps: []step{
			{in: set(a), want: []Update{upd(ADD, testSource, stored(a))}},
			{in: set(aTerm), want: []Update{upd(DELETE, testSource, stored(aTerm))}},
			{in: set(aTermLabel), want: []Update{upd(DELETE, testSource, stored(aTermLabel))}},
		},
	}, {
		name: "status only change on terminating pod",
		steps: []step{
			{in: set(a), want: []Update{upd(ADD, testSource, stored(a))}},
			{in: set(aTerm), want: []Update{upd(DELETE, testSource, stored(aTerm))}},
			{in: set(aTermStatus), want: []Update{upd(RECONCILE, testSource, stored(aTermStatus))}},
		},
	}, {
		name: "metadata only changes ignored",
		steps: []step{
			{in: set(a), want: []Update{upd(ADD, testSource, stored(a))}},
			{in: set(with(a, func(p *v1.Pod) {
				p.ResourceVersion = "7"
				p.Generation = 3
				p.Finalizers = []string{"f"}
				p.OwnerReferences = []metav1.OwnerReference{{Name: "o"}}
				p.CreationTimestamp = *ts
			}))},
			{sync: true, want: []Update{upd(SET, AllSource, stored(a))}},
		},
	}, {
		name: "local annotations ignored and config hash compared",
		steps: []step{
			{in: set(a), want: []Update{upd(ADD, testSource, stored(a))}},
			{in: set(with(a, func(p *v1.Pod) { p.Annotations = map[string]string{v1.MirrorPodAnnotationKey: "h"} }))},
			{in: set(with(a, func(p *v1.Pod) { p.Annotations = map[string]string{"kubernetes.io/config.seen": "later"} }))},
			{in: set(with(a, func(p *v1.Pod) { p.Annotations = map[string]string{"kubernetes.io/config.hash": "h2"} })),
				want: []Update{upd(UPDATE, testSource, stored(with(a, func(p *v1.Pod) {
					p.Annotations = map[string]string{"kubernetes.io/config.hash": "h2"}
				})))}},
		},
	}, {
		name: "remove of unknown UID",
		steps: []step{
			{in: set(a), want: []Update{upd(ADD, testSource, stored(a))}},
			{in: upd(REMOVE, testSource, newPod("x", "ns"))},
		},
	}, {
		name: "emission order in one merge",
		steps: []step{
			{in: set(r, u, d, st), want: []Update{upd(ADD, testSource, stored(r), stored(u), stored(d), stored(st))}},
			{in: set(
				with(st, func(p *v1.Pod) { p.Status.Message = "m" }),
				with(d, func(p *v1.Pod) { p.DeletionTimestamp = ts }),
				withContainer(u),
				n,
			), want: []Update{
				upd(REMOVE, testSource, stored(r)),
				upd(ADD, testSource, stored(n)),
				upd(UPDATE, testSource, stored(withContainer(u))),
				upd(DELETE, testSource, stored(with(d, func(p *v1.Pod) { p.DeletionTimestamp = ts }))),
				upd(RECONCILE, testSource, stored(with(st, func(p *v1.Pod) { p.Status.Message = "m" }))),
			}},
		},
	}, {
		name: "removes from a SET are sorted",
		steps: []step{
			{in: set(newPod("c", "b"), newPod("b", "b"), newPod("z", "a")), want: []Update{upd(ADD, testSource, stored(newPod("c", "b")), stored(newPod("b", "b")), stored(newPod("z", "a")))}},
			{in: set(), want: []Update{upd(REMOVE, testSource, stored(newPod("z", "a")), stored(newPod("b", "b")), stored(newPod("c", "b")))}},
		},
	}, {
		name: "same name in separate ADDs is kept twice",
		steps: []step{
			{in: upd(ADD, testSource, a), want: []Update{upd(ADD, testSource, stored(a))}},
			{in: upd(ADD, testSource, with(a, func(p *v1.Pod) { p.UID = "other" })), want: []Update{upd(ADD, testSource, stored(with(a, func(p *v1.Pod) { p.UID = "other" })))}},
			{sync: true, want: []Update{upd(SET, AllSource, stored(a), stored(with(a, func(p *v1.Pod) { p.UID = "other" })))}},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, Incremental, tc.steps) })
	}
}

// TestSameUIDTwiceInOneBatch covers the kubelet's handling of one UID under two names in one batch:
// a SET adds both (the second replaces the first), while an ADD merges the second into the first,
// and the ADD and UPDATE it emits both show the pod as it is at the end of the merge.
func TestSameUIDTwiceInOneBatch(t *testing.T) {
	first := newPod("one", "ns")
	second := withContainer(with(first, func(p *v1.Pod) { p.Name = "two" }))
	merged := withContainer(first)

	t.Run("SET", func(t *testing.T) {
		runSteps(t, Incremental, []step{
			{in: upd(SET, testSource, first, second), want: []Update{upd(ADD, testSource, stored(first), stored(second))}},
			{sync: true, want: []Update{upd(SET, AllSource, stored(second))}},
		})
	})
	t.Run("ADD", func(t *testing.T) {
		runSteps(t, Incremental, []step{
			{in: upd(ADD, testSource, first, second), want: []Update{upd(ADD, testSource, stored(merged)), upd(UPDATE, testSource, stored(merged))}},
			{sync: true, want: []Update{upd(SET, AllSource, stored(merged))}},
		})
	})
}
