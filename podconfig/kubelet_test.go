package podconfig

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// step is one input to a Storage and the updates it must emit. With sync set, the step calls Sync
// instead of Merge and in is ignored.
type step struct {
	in   Update
	sync bool
	want []Update
}

// runSteps feeds steps to a fresh Storage in mode, input from the test source, and checks every
// step's output.
func runSteps(t *testing.T, mode Mode, steps []step) {
	t.Helper()
	s, _, _ := newStorage(t, mode)
	for i, st := range steps {
		if st.sync {
			if diff := cmp.Diff(st.want, []Update{s.Sync()}); diff != "" {
				t.Errorf("step %d: Sync() mismatch (-want +got):\n%s", i, diff)
			}
			continue
		}
		got := s.Merge(testSource, st.in)
		if diff := cmp.Diff(st.want, got); diff != "" {
			t.Errorf("step %d: Merge(%q, %v) mismatch (-want +got):\n%s", i, testSource, st.in.Op, diff)
		}
	}
}

// TestKubeletV135 ports the v1.35 generation of the kubelet's config_test.go (the PodUpdate inputs
// with notification modes and Sync).
func TestKubeletV135(t *testing.T) {
	fooNew := newPod("foo", "new")
	fooNewBar := withContainer(fooNew)
	fooNewDeleted := with(fooNew, func(p *v1.Pod) {
		p.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 5, 0, time.UTC)}
	})
	foo2, foo3, foo4 := newPod("foo2", "new"), newPod("foo3", "new"), newPod("foo4", "new")
	tests := []struct {
		name  string
		mode  Mode
		steps []step
	}{{
		name: "TestNewPodAdded",
		steps: []step{
			{in: upd(ADD, testSource, fooNew), want: []Update{upd(ADD, testSource, stored(fooNew))}},
			{sync: true, want: []Update{upd(SET, AllSource, stored(fooNew))}},
		},
	}, {
		name: "TestNewPodAddedInvalidNamespace",
		steps: []step{
			{in: upd(ADD, testSource, newPod("foo", "")), want: []Update{upd(ADD, testSource, stored(newPod("foo", "")))}},
			{sync: true, want: []Update{upd(SET, AllSource, stored(newPod("foo", "")))}},
		},
	}, {
		name: "TestNewPodAddedDefaultNamespace",
		steps: []step{
			{in: upd(ADD, testSource, newPod("foo", "default")), want: []Update{upd(ADD, testSource, stored(newPod("foo", "default")))}},
			{sync: true, want: []Update{upd(SET, AllSource, stored(newPod("foo", "default")))}},
		},
	}, {
		name: "TestNewPodAddedDifferentNamespaces",
		steps: []step{
			{in: upd(ADD, testSource, newPod("foo", "default")), want: []Update{upd(ADD, testSource, stored(newPod("foo", "default")))}},
			{in: upd(ADD, testSource, fooNew), want: []Update{upd(ADD, testSource, stored(fooNew))}},
			{sync: true, want: []Update{upd(SET, AllSource, stored(newPod("foo", "default")), stored(fooNew))}},
		},
	}, {
		name: "TestInvalidPodFiltered",
		steps: []step{
			{in: upd(ADD, testSource, fooNew), want: []Update{upd(ADD, testSource, stored(fooNew))}},
			{in: upd(ADD, testSource, fooNew.DeepCopy())},
		},
	}, {
		name: "TestNewPodAddedSnapshotAndUpdates",
		mode: SnapshotAndUpdates,
		steps: []step{
			{in: upd(ADD, testSource, fooNew), want: []Update{upd(SET, testSource, stored(fooNew))}},
			{sync: true, want: []Update{upd(SET, AllSource, stored(fooNew))}},
			{in: upd(ADD, testSource, fooNewBar), want: []Update{upd(UPDATE, testSource, stored(fooNewBar))}},
		},
	}, {
		name: "TestNewPodAddedSnapshot",
		mode: Snapshot,
		steps: []step{
			{in: upd(ADD, testSource, fooNew), want: []Update{upd(SET, testSource, stored(fooNew))}},
			{sync: true, want: []Update{upd(SET, AllSource, stored(fooNew))}},
			{in: upd(ADD, testSource, fooNewBar), want: []Update{upd(SET, testSource, stored(fooNewBar))}},
		},
	}, {
		name: "TestNewPodAddedUpdatedRemoved",
		steps: []step{
			{in: upd(ADD, testSource, fooNew), want: []Update{upd(ADD, testSource, stored(fooNew))}},
			{in: upd(ADD, testSource, fooNewBar), want: []Update{upd(UPDATE, testSource, stored(fooNewBar))}},
			{in: upd(REMOVE, testSource, fooNew), want: []Update{upd(REMOVE, testSource, stored(fooNewBar))}},
		},
	}, {
		name: "TestNewPodAddedDelete",
		steps: []step{
			{in: upd(ADD, testSource, fooNew), want: []Update{upd(ADD, testSource, stored(fooNew))}},
			{in: upd(DELETE, testSource, fooNewDeleted), want: []Update{upd(DELETE, testSource, stored(fooNewDeleted))}},
		},
	}, {
		name: "TestNewPodAddedUpdatedSet",
		steps: []step{
			{in: upd(ADD, testSource, fooNew, foo2, foo3), want: []Update{upd(ADD, testSource, stored(fooNew), stored(foo2), stored(foo3))}},
			{in: upd(SET, testSource, withContainer(foo2), foo3, foo4), want: []Update{
				upd(REMOVE, testSource, stored(fooNew)),
				upd(ADD, testSource, stored(foo4)),
				upd(UPDATE, testSource, stored(withContainer(foo2))),
			}},
		},
	}, {
		name: "TestPodUpdateAnnotations",
		steps: func() []step {
			blah := func(ann map[string]string) *v1.Pod {
				return with(foo2, func(p *v1.Pod) { p.Annotations = ann })
			}
			v1p, v2p := blah(map[string]string{"kubernetes.io/blah": "blah"}), blah(map[string]string{"kubernetes.io/blah": "superblah"})
			v3p := blah(map[string]string{"kubernetes.io/blah": "superblah", "kubernetes.io/otherblah": "doh"})
			v4p := blah(map[string]string{"kubernetes.io/otherblah": "doh"})
			foo1 := newPod("foo1", "new")
			return []step{
				{in: upd(SET, testSource, foo1, v1p, foo3), want: []Update{upd(ADD, testSource, stored(foo1), stored(v1p), stored(foo3))}},
				{in: upd(SET, testSource, foo1, v2p, foo3), want: []Update{upd(UPDATE, testSource, stored(v2p))}},
				{in: upd(SET, testSource, foo1, v3p, foo3), want: []Update{upd(UPDATE, testSource, stored(v3p))}},
				{in: upd(SET, testSource, foo1, v4p, foo3), want: []Update{upd(UPDATE, testSource, stored(v4p))}},
			}
		}(),
	}, {
		name: "TestPodUpdateLabels",
		steps: func() []step {
			a := with(foo2, func(p *v1.Pod) { p.Labels = map[string]string{"key": "value"} })
			b := with(foo2, func(p *v1.Pod) { p.Labels = map[string]string{"key": "newValue"} })
			return []step{
				{in: upd(SET, testSource, a), want: []Update{upd(ADD, testSource, stored(a))}},
				{in: upd(SET, testSource, b), want: []Update{upd(UPDATE, testSource, stored(b))}},
			}
		}(),
	}}
	for _, op := range []Op{ADD, SET} {
		tests = append(tests, struct {
			name  string
			mode  Mode
			steps []step
		}{name: "TestNewPodAddedSetReconciled_" + op.String(), steps: reconciledSteps(op)})
	}
	for _, mode := range []Mode{Incremental, Snapshot, SnapshotAndUpdates} {
		empty := []Update{upd(ADD, testSource)}
		added := []Update{upd(ADD, testSource, stored(fooNew))}
		if mode != Incremental {
			empty = []Update{upd(SET, testSource)}
			added = []Update{upd(SET, testSource, stored(fooNew))}
		}
		tests = append(tests, struct {
			name  string
			mode  Mode
			steps []step
		}{name: "TestInitialEmptySet_" + mode.String(), mode: mode, steps: []step{
			{in: upd(SET, testSource), want: empty},
			{in: upd(SET, testSource)},
			{in: upd(ADD, testSource, fooNew), want: added},
		}})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, tc.mode, tc.steps) })
	}
}

// reconciledSteps is TestNewPodAddedSetReconciled with op as the input after the first SET: an
// unchanged resend is silent, a status change is a RECONCILE, and a status plus spec change is an
// UPDATE only. Fixed values stand in for the kubelet test's random ones.
func reconciledSteps(op Op) []step {
	batch := func(p0 *v1.Pod) Update {
		return upd(op, testSource, p0, newPod("constant-pod-1", "new"), newPod("constant-pod-2", "new"))
	}
	p0 := newPod("changeable-pod-0", "new")
	status := with(p0, func(p *v1.Pod) { p.Status.Message = "4242" })
	both := with(p0, func(p *v1.Pod) {
		p.Status.Message = "1717"
		p.Spec.Containers[0].Name = "ctr-99"
	})
	first := batch(p0)
	first.Op = SET
	return []step{
		{in: first, want: []Update{upd(ADD, testSource, stored(p0), stored(newPod("constant-pod-1", "new")), stored(newPod("constant-pod-2", "new")))}},
		{in: batch(p0.DeepCopy())},
		{in: batch(status), want: []Update{upd(RECONCILE, testSource, stored(status))}},
		{in: batch(both), want: []Update{upd(UPDATE, testSource, stored(both))}},
	}
}

// TestKubeletV136 ports the v1.36 generation of config_test.go, where every input is a full set:
// here, a SET from the test source in Incremental mode.
func TestKubeletV136(t *testing.T) {
	fooNew := newPod("foo", "new")
	fooDefault := newPod("foo", "default")
	foo2, foo3, foo4 := newPod("foo2", "new"), newPod("foo3", "new"), newPod("foo4", "new")
	deleted := with(fooNew, func(p *v1.Pod) {
		p.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 5, 0, time.UTC)}
	})
	set := func(ps ...*v1.Pod) Update { return upd(SET, testSource, ps...) }
	out := func(op Op, ps ...*v1.Pod) Update {
		for i, p := range ps {
			ps[i] = stored(p)
		}
		return upd(op, testSource, ps...)
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"TestNewPodAdded", []step{{in: set(fooNew), want: []Update{out(ADD, fooNew)}}}},
		{"TestNewPodAddedInvalidNamespace", []step{{in: set(newPod("foo", "")), want: []Update{out(ADD, newPod("foo", ""))}}}},
		{"TestNewPodAddedDefaultNamespace", []step{{in: set(fooDefault), want: []Update{out(ADD, fooDefault)}}}},
		{"TestNewPodAddedDifferentNamespaces", []step{
			{in: set(fooDefault), want: []Update{out(ADD, fooDefault)}},
			{in: set(fooDefault, fooNew), want: []Update{out(ADD, fooNew)}},
		}},
		{"TestInvalidPodFiltered", []step{
			{in: set(fooNew), want: []Update{out(ADD, fooNew)}},
			{in: set(fooNew)},
		}},
		{"TestNewPodAddedUpdatedRemoved", []step{
			{in: set(fooNew), want: []Update{out(ADD, fooNew)}},
			{in: set(withContainer(fooNew)), want: []Update{out(UPDATE, withContainer(fooNew))}},
			{in: set(), want: []Update{out(REMOVE, withContainer(fooNew))}},
		}},
		{"TestNewPodAddedDelete", []step{
			{in: set(fooNew), want: []Update{out(ADD, fooNew)}},
			{in: set(deleted), want: []Update{out(DELETE, deleted)}},
		}},
		{"TestNewPodAddedUpdatedSet", []step{
			{in: set(fooNew, foo2, foo3), want: []Update{out(ADD, fooNew, foo2, foo3)}},
			{in: set(fooNew, foo2, foo3)},
			{in: set(withContainer(foo2), foo3, foo4), want: []Update{out(REMOVE, fooNew), out(ADD, foo4), out(UPDATE, withContainer(foo2))}},
		}},
		{"TestNewPodAddedSetReconciled", reconciledSteps(SET)},
		{"TestInitialEmptySet", []step{
			{in: set(), want: []Update{out(ADD)}},
			{in: set()},
			{in: set(fooNew), want: []Update{out(ADD, fooNew)}},
		}},
		{"TestPodUpdateAnnotations", func() []step {
			a := func(kv ...string) *v1.Pod {
				return with(foo2, func(p *v1.Pod) {
					p.Annotations = map[string]string{}
					for i := 0; i < len(kv); i += 2 {
						p.Annotations[kv[i]] = kv[i+1]
					}
				})
			}
			foo1 := newPod("foo1", "new")
			return []step{
				{in: set(foo1, a("kubernetes.io/blah", "blah"), foo3), want: []Update{out(ADD, foo1, a("kubernetes.io/blah", "blah"), foo3)}},
				{in: set(foo1, a("kubernetes.io/blah", "superblah"), foo3), want: []Update{out(UPDATE, a("kubernetes.io/blah", "superblah"))}},
				{in: set(foo1, a("kubernetes.io/blah", "superblah", "kubernetes.io/otherblah", "doh"), foo3), want: []Update{out(UPDATE, a("kubernetes.io/blah", "superblah", "kubernetes.io/otherblah", "doh"))}},
				{in: set(foo1, a("kubernetes.io/otherblah", "doh"), foo3), want: []Update{out(UPDATE, a("kubernetes.io/otherblah", "doh"))}},
			}
		}()},
		{"TestPodUpdateLabels", func() []step {
			l := func(v string) *v1.Pod { return with(foo2, func(p *v1.Pod) { p.Labels = map[string]string{"key": v} }) }
			return []step{
				{in: set(l("value")), want: []Update{out(ADD, l("value"))}},
				{in: set(l("newValue")), want: []Update{out(UPDATE, l("newValue"))}},
			}
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, Incremental, tc.steps) })
	}
}
