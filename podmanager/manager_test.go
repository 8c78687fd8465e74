package podmanager

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newManager returns an empty Manager that traces to tracer.
func newManager(t *testing.T, tracer trace.Tracer) *Manager {
	t.Helper()
	m, err := New(Options{Tracer: tracer})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	return m
}

// The kubelet test fixtures, all in namespace default.
func fixtures() (mirror, static, normal *v1.Pod) {
	mirror = &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		UID: "mirror-pod-uid", Name: "mirror-static-pod-name", Namespace: metav1.NamespaceDefault,
		Annotations: map[string]string{
			kubecontainer.ConfigSourceAnnotationKey: "api",
			kubecontainer.ConfigMirrorAnnotationKey: "mirror",
			kubecontainer.ConfigHashAnnotationKey:   "mirror",
		},
	}}
	static = &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		UID: "static-pod-uid", Name: "mirror-static-pod-name", Namespace: metav1.NamespaceDefault,
		Annotations: map[string]string{kubecontainer.ConfigSourceAnnotationKey: "file"},
	}}
	normal = &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "normal-pod-uid", Name: "normal-pod-name", Namespace: metav1.NamespaceDefault}}
	return mirror, static, normal
}

func TestAddOrUpdatePod(t *testing.T) {
	mirror, static, normal := fixtures()
	tests := []struct {
		name     string
		pod      *v1.Pod
		isMirror bool
	}{
		{name: "mirror pod", pod: mirror, isMirror: true},
		{name: "static pod", pod: static},
		{name: "normal pod", pod: normal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t, trace.Discard)
			verify := func(want *v1.Pod) {
				t.Helper()
				if tt.isMirror {
					got, ok := m.GetMirrorPodByPod(want)
					if !ok || !cmp.Equal(want, got) {
						t.Errorf("GetMirrorPodByPod() = %v, %v, want the mirror pod, true", got, ok)
					}
					_, mirrors, _ := m.GetPodsAndMirrorPods()
					if diff := cmp.Diff([]*v1.Pod{want}, mirrors); diff != "" {
						t.Errorf("mirror pods (-want +got):\n%s", diff)
					}
					return
				}
				if got, ok := m.GetPodByUID(want.UID); !ok || !cmp.Equal(want, got) {
					t.Errorf("GetPodByUID(%s) = %v, %v, want the pod, true", want.UID, got, ok)
				}
				if got, ok := m.GetPodByFullName(kubecontainer.GetPodFullName(want)); !ok || !cmp.Equal(want, got) {
					t.Errorf("GetPodByFullName() = %v, %v, want the pod, true", got, ok)
				}
			}
			m.AddPod(tt.pod)
			verify(tt.pod)
			updated := tt.pod.DeepCopy()
			if updated.Annotations == nil {
				updated.Annotations = map[string]string{}
			}
			updated.Annotations["updated"] = "true"
			m.UpdatePod(updated)
			verify(updated)
		})
	}
}

func TestGetSetPods(t *testing.T) {
	mirror, static, normal := fixtures()
	tests := []struct {
		name              string
		pod               *v1.Pod
		wantPod           *v1.Pod
		wantUID           types.UID
		wantMirror        *v1.Pod
		wantIsMirrorPodOf bool
		isMirrorPodOfArgs [2]*v1.Pod
	}{
		{name: "Get normal pod", pod: normal, wantPod: normal, wantUID: "normal-pod-uid",
			isMirrorPodOfArgs: [2]*v1.Pod{normal, mirror}},
		{name: "Get static pod", pod: static, wantPod: static, wantUID: "static-pod-uid", wantMirror: mirror,
			isMirrorPodOfArgs: [2]*v1.Pod{static, mirror}},
		{name: "Get mirror pod", pod: mirror, wantPod: static, wantUID: "static-pod-uid", wantMirror: mirror,
			isMirrorPodOfArgs: [2]*v1.Pod{mirror, mirror}, wantIsMirrorPodOf: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t, trace.Discard)
			m.SetPods([]*v1.Pod{mirror, static, normal})
			// Sorted by namespace and name: mirror-static-pod-name before normal-pod-name.
			if diff := cmp.Diff([]*v1.Pod{static, normal}, m.GetPods()); diff != "" {
				t.Errorf("GetPods() (-want +got):\n%s", diff)
			}
			if got := m.TranslatePodUID(tt.pod.UID); got != tt.wantUID {
				t.Errorf("TranslatePodUID(%s) = %s, want %s", tt.pod.UID, got, tt.wantUID)
			}
			if got, ok := m.GetPodByFullName(kubecontainer.GetPodFullName(tt.pod)); !ok || !cmp.Equal(tt.wantPod, got) {
				t.Errorf("GetPodByFullName() = %v, %v, want %v, true", got, ok, tt.wantPod)
			}
			if got, ok := m.GetPodByName(tt.pod.Namespace, tt.pod.Name); !ok || !cmp.Equal(tt.wantPod, got) {
				t.Errorf("GetPodByName() = %v, %v, want %v, true", got, ok, tt.wantPod)
			}
			if got, ok := m.GetPodByUID(tt.wantUID); !ok || !cmp.Equal(tt.wantPod, got) {
				t.Errorf("GetPodByUID(%s) = %v, %v, want %v, true", tt.wantUID, got, ok, tt.wantPod)
			}
			podToMirror, mirrorToPod := m.GetUIDTranslations()
			if diff := cmp.Diff(map[types.UID]types.UID{"static-pod-uid": "mirror-pod-uid"}, podToMirror); diff != "" {
				t.Errorf("GetUIDTranslations() podToMirror (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[types.UID]types.UID{"mirror-pod-uid": "static-pod-uid"}, mirrorToPod); diff != "" {
				t.Errorf("GetUIDTranslations() mirrorToPod (-want +got):\n%s", diff)
			}
			gotMirror, ok := m.GetMirrorPodByPod(tt.pod)
			if ok != (tt.wantMirror != nil) || !cmp.Equal(tt.wantMirror, gotMirror) {
				t.Errorf("GetMirrorPodByPod() = %v, %v, want %v", gotMirror, ok, tt.wantMirror)
			}
			gotPod, gotMirror, wasMirror := m.GetPodAndMirrorPod(tt.pod)
			if !cmp.Equal(tt.wantPod, gotPod) || !cmp.Equal(tt.wantMirror, gotMirror) || wasMirror != (tt.pod == mirror) {
				t.Errorf("GetPodAndMirrorPod() = %v, %v, %v, want %v, %v, %v", gotPod, gotMirror, wasMirror, tt.wantPod, tt.wantMirror, tt.pod == mirror)
			}
			if got := IsMirrorPodOf(tt.isMirrorPodOfArgs[0], tt.isMirrorPodOfArgs[1]); got != tt.wantIsMirrorPodOf {
				t.Errorf("IsMirrorPodOf() = %v, want %v", got, tt.wantIsMirrorPodOf)
			}
			if tt.pod == mirror {
				if got, ok := m.GetPodByMirrorPod(mirror); !ok || !cmp.Equal(static, got) {
					t.Errorf("GetPodByMirrorPod() = %v, %v, want the static pod, true", got, ok)
				}
			}
		})
	}
}

func TestRemovePods(t *testing.T) {
	mirror, static, normal := fixtures()
	tests := []struct {
		name         string
		remove       *v1.Pod
		wantPods     []*v1.Pod
		wantMirrors  []*v1.Pod
		wantOrphaned []string
	}{
		{name: "Remove mirror pod", remove: mirror, wantPods: []*v1.Pod{static, normal}, wantMirrors: []*v1.Pod{}},
		{name: "Remove static pod", remove: static, wantPods: []*v1.Pod{normal}, wantMirrors: []*v1.Pod{mirror},
			wantOrphaned: []string{"mirror-static-pod-name_default"}},
		{name: "Remove normal pod", remove: normal, wantPods: []*v1.Pod{static}, wantMirrors: []*v1.Pod{mirror}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t, trace.Discard)
			m.SetPods([]*v1.Pod{mirror, static, normal})
			m.RemovePod(tt.remove)
			pods, mirrors, orphaned := m.GetPodsAndMirrorPods()
			if diff := cmp.Diff(m.GetPods(), pods); diff != "" {
				t.Errorf("GetPods() and GetPodsAndMirrorPods() differ (-GetPods +GetPodsAndMirrorPods):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantPods, pods); diff != "" {
				t.Errorf("pods (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantMirrors, mirrors); diff != "" {
				t.Errorf("mirror pods (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantOrphaned, orphaned); diff != "" {
				t.Errorf("orphaned mirror full names (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGetStaticPodToMirrorPodMap(t *testing.T) {
	mirror, static, normal := fixtures()
	m := newManager(t, trace.Discard)
	m.SetPods([]*v1.Pod{mirror, static, normal})
	got := m.GetStaticPodToMirrorPodMap()
	if len(got) != 1 {
		t.Fatalf("len(GetStaticPodToMirrorPodMap()) = %d, want 1", len(got))
	}
	for pod, mirrorPod := range got {
		if pod.UID != static.UID || mirrorPod == nil || mirrorPod.UID != "mirror-pod-uid" {
			t.Errorf("GetStaticPodToMirrorPodMap() = {%v: %v}, want {static-pod-uid: mirror-pod-uid}", pod.UID, mirrorPod)
		}
	}
	m.RemovePod(mirror)
	for pod, mirrorPod := range m.GetStaticPodToMirrorPodMap() {
		if mirrorPod != nil {
			t.Errorf("GetStaticPodToMirrorPodMap()[%s] = %v after removing the mirror, want nil", pod.UID, mirrorPod)
		}
	}
}

// TestTranslationOutlivesStaticPod checks the kubelet's asymmetry: removing a static pod keeps the
// mirror translation; removing the mirror pod drops it.
func TestTranslationOutlivesStaticPod(t *testing.T) {
	mirror, static, _ := fixtures()
	m := newManager(t, trace.Discard)
	m.AddPod(static)
	m.AddPod(mirror)
	m.RemovePod(static)
	if got := m.TranslatePodUID(mirror.UID); got != static.UID {
		t.Errorf("TranslatePodUID(mirror) after removing the static pod = %s, want %s", got, static.UID)
	}
	podToMirror, _ := m.GetUIDTranslations()
	if diff := cmp.Diff(map[types.UID]types.UID{static.UID: mirror.UID}, podToMirror); diff != "" {
		t.Errorf("GetUIDTranslations() podToMirror (-want +got):\n%s", diff)
	}
	m.RemovePod(mirror)
	if got := m.TranslatePodUID(mirror.UID); got != mirror.UID {
		t.Errorf("TranslatePodUID(mirror) after removing the mirror = %s, want it unchanged", got)
	}
	if got := m.TranslatePodUID(""); got != "" {
		t.Errorf(`TranslatePodUID("") = %q, want ""`, got)
	}
	// A static pod with no mirror maps to "".
	m.AddPod(static)
	podToMirror, mirrorToPod := m.GetUIDTranslations()
	if diff := cmp.Diff(map[types.UID]types.UID{static.UID: ""}, podToMirror); diff != "" || len(mirrorToPod) != 0 {
		t.Errorf("GetUIDTranslations() = %v, %v, want {static-pod-uid: \"\"}, {}", podToMirror, mirrorToPod)
	}
}

func TestIsMirrorPodOf(t *testing.T) {
	pod := func(name, namespace string, ann map[string]string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Annotations: ann}}
	}
	static := pod("etcd", "kube-system", map[string]string{kubecontainer.ConfigHashAnnotationKey: "h1"})
	tests := []struct {
		name   string
		mirror *v1.Pod
		want   bool
	}{
		{name: "matching hash", mirror: pod("etcd", "kube-system", map[string]string{kubecontainer.ConfigMirrorAnnotationKey: "h1"}), want: true},
		{name: "outdated hash", mirror: pod("etcd", "kube-system", map[string]string{kubecontainer.ConfigMirrorAnnotationKey: "h0"})},
		{name: "no mirror annotation", mirror: pod("etcd", "kube-system", nil)},
		{name: "other name", mirror: pod("etcd2", "kube-system", map[string]string{kubecontainer.ConfigMirrorAnnotationKey: "h1"})},
		{name: "other namespace", mirror: pod("etcd", "default", map[string]string{kubecontainer.ConfigMirrorAnnotationKey: "h1"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsMirrorPodOf(tt.mirror, static); got != tt.want {
				t.Errorf("IsMirrorPodOf() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestShares checks the sharing contract (docs/design/008-shared-pods.md): the manager keeps the
// very pod it is given, as the kubelet's does, never changes it, and an update replaces it.
func TestShares(t *testing.T) {
	_, static, _ := fixtures()
	before := static.DeepCopy()
	m := newManager(t, trace.Discard)
	m.AddPod(static)
	got, _ := m.GetPodByUID(static.UID)
	if got != static {
		t.Errorf("GetPodByUID() = %p, want the pod AddPod was given, %p", got, static)
	}
	if diff := cmp.Diff(before, static); diff != "" {
		t.Errorf("AddPod changed the pod it was given (-before +after):\n%s", diff)
	}
	// Readers share the stored object, so an update must replace it, never change it in place:
	// a reader holding the old pointer keeps seeing the old pod.
	updated := got.DeepCopy()
	updated.Labels = map[string]string{"version": "2"}
	m.UpdatePod(updated)
	if got.Labels != nil {
		t.Errorf("a pod read before UpdatePod has labels %v, want the old none", got.Labels)
	}
	again, _ := m.GetPodByUID(static.UID)
	if again.Labels["version"] != "2" {
		t.Errorf("GetPodByUID() after UpdatePod has labels %v, want version=2", again.Labels)
	}
}

func TestTrace(t *testing.T) {
	mirror, static, normal := fixtures()
	var events []trace.Event
	m := newManager(t, trace.Func(func(e trace.Event) { events = append(events, e) }))
	m.AddPod(static)
	m.AddPod(mirror)
	m.UpdatePod(normal)
	m.RemovePod(mirror)
	ev := func(event trace.Kind, pod *v1.Pod, reason, fn string) trace.Event {
		return trace.Event{Component: trace.PodManager, Event: event, Pod: "default/" + pod.Name, UID: string(pod.UID), Reason: reason, Func: fn}
	}
	want := []trace.Event{
		ev("add", static, "static", "AddPod"),
		ev("add", mirror, "mirror", "AddPod"),
		ev("update", normal, "", "UpdatePod"),
		ev("remove", mirror, "mirror", "RemovePod"),
	}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
}

func TestNewRequiresTracer(t *testing.T) {
	m, err := New(Options{})
	if !errors.Is(err, minikubelet.ErrMissingOption) || !strings.Contains(err.Error(), "Tracer") {
		t.Errorf("New(Options{}) = %v, %v, want an error wrapping minikubelet.ErrMissingOption naming Tracer", m, err)
	}
}

// TestKeyAndFullNameOfOneString checks that a pod added or updated is filed under its full name
// and traced under its key, both cut from one string, for names whose separators could confuse
// the cut, and that RemovePod (which builds its own) finds it under the same full name.
func TestKeyAndFullNameOfOneString(t *testing.T) {
	for _, tc := range []struct{ namespace, name string }{
		{"default", "web"},
		{"a_b", "c"},
		{"a", "b_c"},
		{"ns/x", "y"},
	} {
		var events []trace.Event
		m := newManager(t, trace.Func(func(e trace.Event) { events = append(events, e) }))
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "uid-1", Namespace: tc.namespace, Name: tc.name}}
		m.AddPod(pod)
		m.UpdatePod(pod)
		if got, ok := m.GetPodByFullName(tc.name + "_" + tc.namespace); !ok || got != pod {
			t.Errorf("%s/%s: GetPodByFullName() = %v, %v, want the pod", tc.namespace, tc.name, got, ok)
		}
		m.RemovePod(pod)
		if got, ok := m.GetPodByFullName(tc.name + "_" + tc.namespace); ok {
			t.Errorf("%s/%s: GetPodByFullName() after RemovePod = %v, want none", tc.namespace, tc.name, got)
		}
		for _, e := range events {
			if want := tc.namespace + "/" + tc.name; e.Pod != want {
				t.Errorf("%s/%s: %s traced for pod %q, want %q", tc.namespace, tc.name, e.Event, e.Pod, want)
			}
		}
		if len(events) != 3 {
			t.Errorf("%s/%s: %d events, want 3", tc.namespace, tc.name, len(events))
		}
	}
}
