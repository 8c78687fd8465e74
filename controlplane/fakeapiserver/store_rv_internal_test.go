package fakeapiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestWithRV wants an update's encoding with its new resource version put in place of the old
// one to be byte for byte the encoding of the object with the new version, including objects
// that carry "resourceVersion" elsewhere (an event's involved object, a label, a name that
// quotes it), and wants no splice where the metadata's version may not be the first key of its
// name (an unstructured object, whose keys are sorted, labels first) or is not the one given.
func TestWithRV(t *testing.T) {
	const from, to = "41", "1042"
	withVersion := func(obj runtime.Object, rv string) runtime.Object {
		obj = obj.DeepCopyObject()
		mustMeta(obj).SetResourceVersion(rv)
		return obj
	}
	for _, tc := range []struct {
		name   string
		obj    runtime.Object
		splice bool
	}{
		{"pod", &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u", Labels: map[string]string{"resourceVersion": from}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}, true},
		{"a name that quotes the key", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: `x"resourceVersion":"` + from + `"`}}, true},
		{"event", &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web", ResourceVersion: from}}, true},
		{"unstructured", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "labels": map[string]any{"resourceVersion": from}}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stale, err := json.Marshal(withVersion(tc.obj, from))
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(withVersion(tc.obj, to))
			if err != nil {
				t.Fatal(err)
			}
			if got := metadataFirst(tc.obj); got != tc.splice {
				t.Fatalf("metadataFirst() = %v, want %v", got, tc.splice)
			}
			if !tc.splice {
				return
			}
			if diff := cmp.Diff(string(want), string(withRV(stale, from, to))); diff != "" {
				t.Errorf("withRV() (-encoded +spliced):\n%s", diff)
			}
		})
	}
	if got := spliceRV([]byte(`{"metadata":{"resourceVersion":"4"}}`), "5", "6"); got != nil {
		t.Errorf("spliceRV() of another version = %s, want nil", got)
	}
	if got := withRV([]byte(`{"metadata":{"resourceVersion":"4"}}`), from, to); got != nil {
		t.Errorf("withRV() of another version = %s, want nil", got)
	}
	if got := withRV([]byte(`{"metadata":{"resourceVersion":"4"}}`), "", to); got != nil {
		t.Errorf("withRV() from no version = %s, want nil", got)
	}
}

// TestSpliceRV wants spliceRV's result to be withRV's, byte for byte, for a new version as
// long as the old one (written into the given bytes, which it returns) and for a longer or
// shorter one (a copy, the given bytes unchanged).
func TestSpliceRV(t *testing.T) {
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u", Labels: map[string]string{"resourceVersion": "9"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}
	for _, tc := range []struct {
		from, to string
		inPlace  bool
	}{
		{"9", "8", true},
		{"41", "97", true},
		{"123456", "123457", true},
		{"9", "10", false},
		{"99999", "100000", false},
		{"100", "99", false},
	} {
		encode := func(rv string) []byte {
			p := pod.DeepCopy()
			p.ResourceVersion = rv
			raw, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			return raw
		}
		raw, want := encode(tc.from), encode(tc.to)
		if diff := cmp.Diff(string(want), string(withRV(raw, tc.from, tc.to))); diff != "" {
			t.Fatalf("%s -> %s: withRV() (-encoded +spliced):\n%s", tc.from, tc.to, diff)
		}
		given := string(raw)
		got := spliceRV(raw, tc.from, tc.to)
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s -> %s: spliceRV() (-encoded +spliced):\n%s", tc.from, tc.to, diff)
		}
		if inPlace := &got[0] == &raw[0]; inPlace != tc.inPlace {
			t.Errorf("%s -> %s: spliceRV() wrote into the given bytes: %v, want %v", tc.from, tc.to, inPlace, tc.inPlace)
		}
		if !tc.inPlace && string(raw) != given {
			t.Errorf("%s -> %s: spliceRV() changed the given bytes, which it copies", tc.from, tc.to)
		}
	}
}

// TestStoredEncodingAfterUpdates wants every stored object's encoding, after updates of pods,
// their status, nodes and events through the server, to be the object's own encoding: what
// commitEncoded spliced is what encoding it again gives.
func TestStoredEncodingAfterUpdates(t *testing.T) {
	srv, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	d := srv.Direct("kubelet/v1.35.4")
	if _, err := d.CreatePod(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.CreateNode(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}); err != nil {
		t.Fatal(err)
	}
	ev, err := d.CreateEvent(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web.1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web", ResourceVersion: "1"}, Reason: "Started", Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		for _, w := range []struct {
			res           *resource
			ns, name, sub string
			patch         string
		}{
			{podsTarget, "default", "web", "status", fmt.Sprintf(`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:%02dZ"}]}}`, i)},
			{podsTarget, "default", "web", "", fmt.Sprintf(`{"metadata":{"labels":{"resourceVersion":"%d"}}}`, i)},
			{nodesTarget, "", "node-1", "status", fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2026-01-01T00:00:%02dZ"}]}}`, i)},
			{eventsTarget, "default", ev.Name, "", fmt.Sprintf(`{"count":%d}`, i+2)},
		} {
			e, err := d.patch(ctx, d.target(w.res, w.ns, w.name, w.sub), types.StrategicMergePatchType, []byte(w.patch))
			if err != nil {
				t.Fatalf("patch %s %s: %v", w.res.name, w.name, err)
			}
			// The write's own entry keeps the bytes commitEncoded made (spliced, for every
			// resource here, events included), which its response carries.
			want, err := json.Marshal(e.obj)
			if err != nil {
				t.Fatal(err)
			}
			if e.raw == nil {
				t.Errorf("patch %s %s %d: the write's entry keeps no encoding", w.res.name, w.name, i)
			} else if diff := cmp.Diff(string(want), string(e.raw)); diff != "" {
				t.Errorf("patch %s %s %d: (-encoded +committed):\n%s", w.res.name, w.name, i, diff)
			}
		}
	}
	_ = srv.store.locked(func() error {
		for _, res := range []*resource{podsTarget, nodesTarget, eventsTarget} {
			if res == eventsTarget {
				// A stored event keeps no encoding: encoded() is json.Marshal itself, and the
				// write's own bytes were compared above.
				continue
			}
			for _, e := range srv.store.list(res, "") {
				want, err := json.Marshal(e.obj)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(string(want), string(e.encoded())); diff != "" {
					t.Errorf("stored %s %s (-encoded +stored):\n%s", res.kind, e.meta().GetName(), diff)
				}
				// The comparison means something only if commitEncoded spliced: the encoding
				// of an update of a pod or a node takes the new version in place.
				candidate, err := dryRunEntry(res, e.obj.DeepCopyObject())
				if err != nil {
					t.Fatal(err)
				}
				if withRV(candidate.raw, e.meta().GetResourceVersion(), "1000") == nil {
					t.Errorf("withRV() of the stored %s %s = nil, want the version spliced", res.kind, e.meta().GetName())
				}
			}
		}
		return nil
	})
}

// TestUpdateLeavesEarlierBytes: the bytes an update splices its new version into are its own
// (its check's encoding): a reader that took the stored version before the update, or the write
// before it, keeps the bytes it took.
func TestUpdateLeavesEarlierBytes(t *testing.T) {
	srv, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	d := srv.Direct("kubelet/v1.35.4")
	if _, err := d.CreatePod(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}); err != nil {
		t.Fatal(err)
	}
	var taken []*entry
	var kept []string
	for i := range 12 {
		var e *entry
		_ = srv.store.locked(func() error {
			e, _ = srv.store.get(podsTarget, "default", "web")
			return nil
		})
		taken, kept = append(taken, e), append(kept, string(e.encoded()))
		patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:%02dZ"}]}}`, i)
		w, err := d.patch(ctx, d.target(podsTarget, "default", "web", "status"), types.StrategicMergePatchType, []byte(patch))
		if err != nil {
			t.Fatal(err)
		}
		taken, kept = append(taken, w), append(kept, string(w.raw))
	}
	for i, e := range taken {
		if e.raw != nil && string(e.raw) != kept[i] {
			t.Errorf("version %s: its bytes changed after later writes:\n got %s\nwant %s", e.meta().GetResourceVersion(), e.raw, kept[i])
		}
	}
}
