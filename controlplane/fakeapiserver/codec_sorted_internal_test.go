package fakeapiserver

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	k8sjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// sameInterpretation compares sortedMetaFactory with the default factory on data.
func sameInterpretation(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := k8sjson.DefaultMetaFactory.Interpret(data)
	got, err := sortedMetaFactory{}.Interpret(data)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("Interpret(%s) error = %v, want %v", data, err, wantErr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Interpret(%s) (-default +sorted):\n%s", data, diff)
	}
}

// TestSortedMetaFactory wants the kind read off the start of a document encoded from a map to be
// the one the default factory decodes, including documents with other spellings of the keys (in
// other cases, or with a letter outside ASCII that folds to an ASCII one), escapes and
// versions that do not parse.
func TestSortedMetaFactory(t *testing.T) {
	for _, doc := range []map[string]any{
		{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"}, "status": map[string]any{"phase": "Running"}},
		{"apiVersion": "apps/v1", "kind": "Deployment"},
		{"apiVersion": "v1", "kind": "Node", "spec": map[string]any{}},
		{"apiVersion": "v1"},
		{"kind": "Pod"},
		{},
		{"apiVersion": "v1", "kind": "Pod", "\u212aind": "Node"},
		{"apiVersion": "v1", "kind": "Pod", "Kind": "Node"},
		{"apiVersion": "v1", "kind": "Pod", "apiversion": "v2"},
		{"apiVersion": "v1", "kind": "Pod", "APIVERSION": "v2"},
		{"apiVersion": "v\u00e9", "kind": "Pod"},
		{"apiVersion": "v1", "kind": "P\"od"},
		{"apiVersion": "a/b/c", "kind": "Pod"},
		{"apiVersion": 1, "kind": "Pod"},
		{"apiVersion": "v1", "kind": nil},
		{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"annotations": map[string]any{"é": "ünïcode"}}},
	} {
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		sameInterpretation(t, data)
	}
	// Documents that do not start so are the default factory's, valid or not (what a strategic
	// merge patch encodes is valid JSON).
	sameInterpretation(t, []byte(`not json`))
}

// FuzzSortedMetaFactory builds documents from maps of three keys and values, as a strategic merge
// patch's result is encoded, and wants sortedMetaFactory to read them as the default factory does.
func FuzzSortedMetaFactory(f *testing.F) {
	f.Add("apiVersion", "v1", "kind", "Pod", "metadata", "x")
	f.Add("apiVersion", "v1", "kind", "Pod", "\u212aind", "Node")
	f.Add("apiVersion", "v1", "kind", "Pod", "apiversion", "v2")
	f.Add("apiVersion", "apps/v1", "kind", "Deployment", "Kind", "x")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string) {
		data, err := json.Marshal(map[string]any{k1: v1, k2: v2, k3: v3})
		if err != nil {
			t.Skip()
		}
		sameInterpretation(t, data)
	})
}

// TestDecodeRoutesSortedBodies wants decode to read a sorted body's kind with sortedMetaFactory:
// a document whose first kind differs from a later duplicate is a Pod to that factory (it reads
// the start) and a Node to the default one (the last key wins), so the answer tells which ran.
func TestDecodeRoutesSortedBodies(t *testing.T) {
	doc := []byte(`{"apiVersion":"v1","kind":"Pod","kind":"Node","metadata":{"name":"x"}}`)
	obj, warnings, err := decode(podsTarget, body{data: doc, sorted: true}, validationWarn)
	if err != nil {
		t.Fatalf("decode(sorted) = %v, want the pod the start of the document names", err)
	}
	if _, ok := obj.(*corev1.Pod); !ok {
		t.Errorf("decode(sorted) = %T, want *v1.Pod", obj)
	}
	if want := []string{`duplicate field "kind"`}; !cmp.Equal(warnings, want) {
		t.Errorf("decode(sorted) warnings = %q, want %q", warnings, want)
	}
	if _, _, err := decode(podsTarget, body{data: doc}, validationWarn); err == nil {
		t.Error("decode(unsorted) of a document whose last kind is Node = nil error, want the kind mismatch")
	}
}
