package podconfig

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCheckAndUpdate resends one stored pod changed in one way and checks which update, if any,
// comes out and what the stored pod looks like afterwards.
func TestCheckAndUpdate(t *testing.T) {
	base := with(newPod("p", "ns"), func(p *v1.Pod) {
		p.ResourceVersion = "1"
		p.Generation = 1
		p.Annotations = map[string]string{"team": "a"}
	})
	ts := &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)}
	grace := int64(30)
	tests := []struct {
		name   string
		change func(*v1.Pod)
		op     Op // the emitted op; unset (with none) for no update
		none   bool
		// want is the stored pod afterwards, built from the stored base.
		want func(*v1.Pod)
	}{
		{name: "identical", change: func(*v1.Pod) {}, none: true},
		{name: "image", op: UPDATE,
			change: func(p *v1.Pod) { p.Spec.Containers[0].Image = "image:2" },
			want:   func(p *v1.Pod) { p.Spec.Containers[0].Image = "image:2" }},
		{name: "spec nil slice to empty", op: UPDATE,
			change: func(p *v1.Pod) { p.Spec.Volumes = []v1.Volume{} },
			want:   func(p *v1.Pod) { p.Spec.Volumes = []v1.Volume{} }},
		{name: "labels nil to empty", op: UPDATE,
			change: func(p *v1.Pod) { p.Labels = map[string]string{} },
			want:   func(p *v1.Pod) { p.Labels = map[string]string{} }},
		{name: "annotations equal after nil", none: true,
			change: func(p *v1.Pod) { p.Annotations = map[string]string{"team": "a", v1.MirrorPodAnnotationKey: "m"} }},
		{name: "annotation removed", op: UPDATE,
			change: func(p *v1.Pod) { p.Annotations = nil },
			want:   func(p *v1.Pod) { delete(p.Annotations, "team") }},
		{name: "annotation value", op: UPDATE,
			change: func(p *v1.Pod) { p.Annotations["team"] = "b" },
			want:   func(p *v1.Pod) { p.Annotations["team"] = "b" }},
		{name: "config hash", op: UPDATE,
			change: func(p *v1.Pod) { p.Annotations["kubernetes.io/config.hash"] = "h" },
			want:   func(p *v1.Pod) { p.Annotations["kubernetes.io/config.hash"] = "h" }},
		{name: "source annotation", none: true,
			change: func(p *v1.Pod) { p.Annotations["kubernetes.io/config.source"] = "file" }},
		{name: "resource version", none: true, change: func(p *v1.Pod) { p.ResourceVersion = "2" }},
		{name: "generation", none: true, change: func(p *v1.Pod) { p.Generation = 2 }},
		{name: "name", none: true, change: func(p *v1.Pod) { p.Name = "renamed" }},
		{name: "status", op: RECONCILE,
			change: func(p *v1.Pod) { p.Status.Phase = v1.PodRunning },
			want:   func(p *v1.Pod) { p.Status.Phase = v1.PodRunning }},
		{name: "status and labels", op: UPDATE,
			change: func(p *v1.Pod) { p.Status.Phase = v1.PodRunning; p.Labels = map[string]string{"k": "v"} },
			want:   func(p *v1.Pod) { p.Status.Phase = v1.PodRunning; p.Labels = map[string]string{"k": "v"} }},
		{name: "deletion timestamp", op: DELETE,
			change: func(p *v1.Pod) { p.DeletionTimestamp = ts; p.DeletionGracePeriodSeconds = &grace },
			want:   func(p *v1.Pod) { p.DeletionTimestamp = ts; p.DeletionGracePeriodSeconds = &grace }},
		{name: "deletion grace period only", op: UPDATE,
			change: func(p *v1.Pod) { p.DeletionGracePeriodSeconds = &grace },
			want:   func(p *v1.Pod) { p.DeletionGracePeriodSeconds = &grace }},
		{name: "update copies generation but not resource version", op: UPDATE,
			change: func(p *v1.Pod) { p.Generation = 5; p.ResourceVersion = "9"; p.Spec.Hostname = "h" },
			want:   func(p *v1.Pod) { p.Generation = 5; p.Spec.Hostname = "h" }},
		{name: "update keeps stored seen and takes a new mirror", op: UPDATE,
			change: func(p *v1.Pod) {
				p.Spec.Hostname = "h"
				p.Annotations["kubernetes.io/config.seen"] = "later"
				p.Annotations[v1.MirrorPodAnnotationKey] = "m"
			},
			want: func(p *v1.Pod) { p.Spec.Hostname = "h"; p.Annotations[v1.MirrorPodAnnotationKey] = "m" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _, _ := newStorage(t, Incremental)
			s.Merge(testSource, upd(SET, testSource, base))
			wantPod := stored(base)
			if tc.want != nil {
				tc.want(wantPod)
			}
			var want []Update
			if !tc.none {
				want = []Update{upd(tc.op, testSource, wantPod)}
			}
			got := s.Merge(testSource, upd(SET, testSource, with(base, tc.change)))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Merge(SET) mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(upd(SET, AllSource, wantPod), s.Sync()); diff != "" {
				t.Errorf("Sync() after merge mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUpdateKeepsStoredMirrorAnnotation checks that an update keeps a mirror annotation the stored
// pod has even when the new pod lacks it.
func TestUpdateKeepsStoredMirrorAnnotation(t *testing.T) {
	mirror := with(newPod("p", "ns"), func(p *v1.Pod) { p.Annotations = map[string]string{v1.MirrorPodAnnotationKey: "m"} })
	changed := withContainer(newPod("p", "ns"))
	s, _, _ := newStorage(t, Incremental)
	s.Merge(testSource, upd(SET, testSource, mirror))
	got := s.Merge(testSource, upd(SET, testSource, changed))
	want := []Update{upd(UPDATE, testSource, stored(with(changed, func(p *v1.Pod) {
		p.Annotations = map[string]string{v1.MirrorPodAnnotationKey: "m"}
	})))}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Merge(SET) mismatch (-want +got):\n%s", diff)
	}
}

func TestAnnotationsEqual(t *testing.T) {
	tests := []struct {
		name          string
		existing, ref map[string]string
		want          bool
	}{
		{"both nil", nil, nil, true},
		{"nil and empty", nil, map[string]string{}, true},
		{"only local keys differ", map[string]string{"kubernetes.io/config.source": "file", "kubernetes.io/config.seen": "t"}, map[string]string{v1.MirrorPodAnnotationKey: "m"}, true},
		{"extra key in ref", map[string]string{}, map[string]string{"a": "1"}, false},
		{"extra key in existing", map[string]string{"a": "1"}, nil, false},
		{"empty value counts", map[string]string{"a": ""}, map[string]string{"a": ""}, true},
		{"value differs", map[string]string{"a": "1"}, map[string]string{"a": "2"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := annotationsEqual(tc.existing, tc.ref); got != tc.want {
				t.Errorf("annotationsEqual(%v, %v) = %v, want %v", tc.existing, tc.ref, got, tc.want)
			}
		})
	}
}

// TestTypedDeepEqual checks the typed comparisons against the reflect.DeepEqual they replace.
func TestTypedDeepEqual(t *testing.T) {
	maps := []map[string]string{nil, {}, {"a": "1"}, {"a": "2"}, {"a": "1", "b": ""}, {"b": ""}}
	for _, a := range maps {
		for _, b := range maps {
			if got, want := labelsDeepEqual(a, b), reflect.DeepEqual(a, b); got != want {
				t.Errorf("labelsDeepEqual(%#v, %#v) = %v, want %v", a, b, got, want)
			}
		}
	}
	one, one2, two := int64(1), int64(1), int64(2)
	ptrs := []*int64{nil, &one, &one2, &two}
	for _, a := range ptrs {
		for _, b := range ptrs {
			if got, want := int64PtrDeepEqual(a, b), reflect.DeepEqual(a, b); got != want {
				t.Errorf("int64PtrDeepEqual(%v, %v) = %v, want %v", a, b, got, want)
			}
		}
	}
}
