package fakeapiserver

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestStatusPatchesWithoutManagedFields makes the same status patches on two servers, one that
// applies them to the stored object without its managed fields (keepsManagedFields) and spec
// (keepsSpec) and one to the whole object, and wants the same errors, warnings and stored
// objects: patches of each type, with unknown fields, wrong types, directives on the metadata and
// at the top, a stale resource version, another name, the managed fields named plainly or with an
// escaped letter, the spec changed, mistyped, ordered or nulled, "spec" in a value or an unknown
// field, and a node's labels and spec.
func TestStatusPatchesWithoutManagedFields(t *testing.T) {
	defer func() { patchWithoutManagedFields = true }()
	ctx := context.Background()
	start := time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
	newServer := func() *Server {
		s, err := New(Options{Clock: clocktesting.NewFakeClock(start), Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Direct("kubectl/v1").CreatePod(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web",
			Labels: map[string]string{"managedFields": "x"}, Annotations: map[string]string{"note": `"managedFields":[{`}},
			Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Direct("kubelet/v1").CreateNode(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1",
			Labels: map[string]string{"kubernetes.io/hostname": "node-1"}}}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	type write struct {
		manager, ns, name string
		pt                types.PatchType
		body              string
	}
	pod := func(manager string, pt types.PatchType, body string) write {
		return write{manager, "default", "web", pt, body}
	}
	smp, merge, jsonPatch := types.StrategicMergePatchType, types.MergePatchType, types.JSONPatchType
	steps := []write{
		pod("kubelet", smp, `{"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"}]}}`),
		pod("kubelet", smp, `{"status":{"phase":"Running","podIP":"10.0.0.5","containerStatuses":[{"name":"app","image":"nginx:1.27","imageID":"","ready":true,"restartCount":0,"state":{"running":{"startedAt":"2026-01-01T00:00:02Z"}}}]}}`),
		pod("controller", merge, `{"status":{"conditions":[{"type":"DisruptionTarget","status":"True","lastTransitionTime":"2026-01-01T00:00:03Z"}]}}`),
		pod("kubelet", smp, `{"status":{"phase":"Running","bogus":1}}`),
		pod("kubelet", smp, `{"status":{"phase":7}}`),
		pod("kubelet", smp, `{"metadata":{"$patch":"replace","name":"web","namespace":"default"},"status":{"podIP":"10.0.0.6"}}`),
		pod("kubelet", smp, `{"metadata":{"$retainKeys":["name"]},"status":{"podIP":"10.0.0.7"}}`),
		pod("kubelet", smp, `{"metadata":{"resourceVersion":"1"},"status":{"podIP":"10.0.0.8"}}`),
		pod("kubelet", merge, `{"metadata":{"name":"other"},"status":{"podIP":"10.0.0.9"}}`),
		pod("kubelet", smp, `{"metadata":{"managedFields":null},"status":{"podIP":"10.0.0.10"}}`),
		pod("kubelet", smp, `{"metadata":{"managed\u0046ields":[{"manager":"x"}]},"status":{"podIP":"10.0.0.11"}}`),
		pod("kubelet", merge, `{"metadata":{"labels":{"managedFields":"y"}},"status":{"podIP":"10.0.0.12"}}`),
		pod("kubelet", jsonPatch, `[{"op":"test","path":"/metadata/labels/managedFields","value":"x"},{"op":"replace","path":"/status/podIP","value":"10.0.0.13"}]`),
		pod("kubelet", smp, `{"status":{"podIP":null}}`),
		pod("kubelet", smp, `{"spec":{"nodeName":"node-2"},"status":{"podIP":"10.0.0.14"}}`),
		pod("kubelet", smp, `{"spec":{"containers":"x"},"status":{"podIP":"10.0.0.15"}}`),
		pod("kubelet", smp, `{"spec":{"$setElementOrder/containers":[{"name":"other"}]},"status":{"podIP":"10.0.0.16"}}`),
		pod("kubelet", smp, `{"$setElementOrder/conditions":[{"type":"Ready"}],"status":{"podIP":"10.0.0.17"}}`),
		pod("kubelet", smp, `{"$retainKeys":["metadata","status"],"status":{"podIP":"10.0.0.18"}}`),
		pod("kubelet", smp, `{"$patch":"replace","metadata":{"name":"web","namespace":"default"},"status":{"podIP":"10.0.0.19"}}`),
		pod("kubelet", merge, `{"spec":null,"status":{"podIP":"10.0.0.20"}}`),
		pod("kubelet", merge, `{"status":{"podIP":"10.0.0.21","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:04Z","reason":"spec"}]}}`),
		pod("kubelet", smp, `{"status":{"bogus":{"spec":1}}}`),
		{"kubelet", "", "node-1", smp, `{"metadata":{"labels":{"zone":"a"}},"status":{"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2026-01-01T00:00:10Z"}]}}`},
		{"kubelet", "", "node-1", smp, `{"spec":{"unschedulable":true},"status":{"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2026-01-01T00:00:15Z"}]}}`},
		{"kubelet", "", "node-1", merge, `{"status":{"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2026-01-01T00:00:20Z"}]}}`},
	}
	whole, cut := newServer(), newServer()
	// The comparison means something only if the plain kubelet patch leaves the managed fields
	// out: the pod has some, and the patch is one the shortcut takes.
	var stored *entry
	_ = cut.store.locked(func() error {
		stored, _ = cut.store.get(podsTarget, "default", "web")
		return nil
	})
	plain, err := newPatchRequest(smp, []byte(steps[0].body))
	if err != nil {
		t.Fatal(err)
	}
	if !plain.keepsManagedFields(target{res: podsTarget, namespace: "default", name: "web", subresource: "status"}, stored) {
		t.Errorf("keepsManagedFields(%s) = false, want true", steps[0].body)
	}
	if withoutManagedFields(stored.encoded()) == nil {
		t.Errorf("withoutManagedFields(stored pod) = nil, want the encoding without them")
	}
	if !plain.keepsSpec(target{res: podsTarget, namespace: "default", name: "web", subresource: "status"}) {
		t.Errorf("keepsSpec(%s) = false, want true", steps[0].body)
	}
	for _, w := range steps {
		res := podsTarget
		if w.ns == "" {
			res = nodesTarget
		}
		var raws, errs [2]string
		var warnings [2][]string
		for i, s := range []*Server{whole, cut} {
			patchWithoutManagedFields = i == 1
			tg := target{res: res, namespace: w.ns, name: w.name, subresource: "status", manager: w.manager}
			out, warns, err := s.patchObject(ctx, tg, w.pt, []byte(w.body), validationWarn, false)
			if err != nil {
				errs[i] = err.Error()
			} else {
				raws[i] = string(out.raw)
			}
			warnings[i] = warns
		}
		patchWithoutManagedFields = true
		if diff := cmp.Diff(errs[0], errs[1]); diff != "" {
			t.Errorf("%s: error (-whole +without managed fields):\n%s", w.body, diff)
		}
		if diff := cmp.Diff(warnings[0], warnings[1]); diff != "" {
			t.Errorf("%s: warnings (-whole +without managed fields):\n%s", w.body, diff)
		}
		if diff := cmp.Diff(raws[0], raws[1]); diff != "" {
			t.Errorf("%s: stored (-whole +without managed fields):\n%s", w.body, diff)
		}
	}
}

// TestWithoutTopLevel wants an encoded object without a member to be the encoding of the object
// without it, wherever the member is, and no cut where there is no such member at the top.
func TestWithoutTopLevel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"kind":"Pod","spec":{"a":1},"status":{"spec":2}}`, `{"kind":"Pod","status":{"spec":2}}`},
		{`{"spec":{"a":[1,"}"]},"status":{}}`, `{"status":{}}`},
		{`{"kind":"Pod","spec":{}}`, `{"kind":"Pod"}`},
		{`{"spec":{}}`, `{}`},
		{`{"status":{"spec":{}}}`, ""},
		{`{"kind":"spec"}`, ""},
	} {
		got := withoutTopLevel([]byte(tc.in), "spec")
		if string(got) != tc.want || (got == nil) != (tc.want == "") {
			t.Errorf("withoutTopLevel(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestWithoutManagedFields wants an encoded object without its managed fields to decode to the
// object without them, where other keys and strings say "managedFields", and no cut where the
// metadata has none.
func TestWithoutManagedFields(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:containers":{"k:{\"name\":\"app]\"}":{".":{}}}}}`)}}}
	for _, tc := range []struct {
		name string
		obj  metav1.Object
	}{
		{"pod", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"managedFields": "x"},
			Annotations: map[string]string{"a": `"managedFields":[{]`}, ManagedFields: managed},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app]"}}}}},
		{"only managed fields", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ManagedFields: managed}, Data: map[string]string{"managedFields": "["}}},
		{"none", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"k": `"managedFields":[]`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := json.Marshal(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			had := len(tc.obj.GetManagedFields()) > 0
			tc.obj.SetManagedFields(nil)
			want, err := json.Marshal(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			got := withoutManagedFields(raw)
			if !had {
				if got != nil {
					t.Errorf("withoutManagedFields() = %s, want nil", got)
				}
				return
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("withoutManagedFields() (-encoded without +cut):\n%s", diff)
			}
		})
	}
}
