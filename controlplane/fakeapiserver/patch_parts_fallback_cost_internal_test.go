package fakeapiserver

import "testing"

// TestMergeNamedPartsFallbackCostsNoMore wants a status patch that mergeNamedParts cannot answer
// for a reason visible from the patch's top-level keys alone to cost no more allocations than the
// whole object's way: a body that mentions "spec" anywhere (keepsSpec is false, so the spec is
// neither named nor cut), or one that names the metadata but not the status. Checking the unnamed
// parts only after the named ones were converted, merged and converted back cost 883 allocations
// against the whole way's 463, and decoding the patch again after a fallback that had not merged
// cost 43 more. A few allocations of slack: the two ways' counts are the same work.
func TestMergeNamedPartsFallbackCostsNoMore(t *testing.T) {
	defer func() { mergeNamedPartsOnly = true }()
	stored := partsStoredObjects()["written"]
	tg := target{res: podsTarget, namespace: "default", name: "web", subresource: "status", manager: "kubelet"}
	for name, body := range map[string]string{
		"spec in a message": `{"metadata":{"uid":"uid-1"},"status":{"message":"inspect","conditions":[{"type":"Ready","status":"True"}]}}`,
		"metadata alone":    `{"metadata":{"labels":{"a":"b"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			p := patchRequest{typ: "application/strategic-merge-patch+json", data: []byte(body)}
			var allocs [2]float64
			for i, parts := range []bool{true, false} {
				mergeNamedPartsOnly = parts
				old := newEntry(stored.DeepCopyObject(), nil)
				allocs[i] = testing.AllocsPerRun(50, func() {
					if _, _, err := p.strategicMerge(tg, old, validationWarn); err != nil {
						t.Fatal(err)
					}
				})
			}
			if allocs[0] > allocs[1]+5 {
				t.Errorf("falling back from the parts' way costs %.0f allocations, the whole way alone %.0f", allocs[0], allocs[1])
			}
		})
	}
}

// TestSameUIDOnly: metadata that holds only the stored UID is taken as unnamed; any other key,
// any other UID, or a UID that is no string is merged, for kube-apiserver's answer. And the
// kubelet's patch, which carries the pod's UID, costs no more than the same patch without it:
// its metadata is not converted.
func TestSameUIDOnly(t *testing.T) {
	stored := partsStoredObjects()["written"]
	for _, tt := range []struct {
		meta any
		want bool
	}{
		{map[string]any{"uid": "uid-1"}, true},
		{map[string]any{"uid": "uid-2"}, false},
		{map[string]any{"uid": ""}, false},
		{map[string]any{"uid": nil}, false},
		{map[string]any{"uid": int64(1)}, false},
		{map[string]any{"UID": "uid-1"}, false},
		{map[string]any{"uid": "uid-1", "labels": map[string]any{"a": "b"}}, false},
		{map[string]any{"uid": "uid-1", "$patch": "replace"}, false},
		{map[string]any{}, false},
		{nil, false},
		{"uid-1", false},
	} {
		if got := sameUIDOnly(tt.meta, stored); got != tt.want {
			t.Errorf("sameUIDOnly(%v) = %v, want %v", tt.meta, got, tt.want)
		}
	}
	if raceEnabled {
		// Under the race detector the counts vary from run to run (its sync.Pool, which
		// encoding/json's buffers go through, drops a share of the puts at random): one run
		// counted six more for the patch with the UID. The comparison is the plain run's.
		return
	}
	tg := target{res: podsTarget, namespace: "default", name: "web", subresource: "status", manager: "kubelet"}
	var allocs [2]float64
	for i, body := range []string{`{"status":{"phase":"Running"}}`, `{"metadata":{"uid":"uid-1"},"status":{"phase":"Running"}}`} {
		p := patchRequest{typ: "application/strategic-merge-patch+json", data: []byte(body)}
		pm, _, err := p.decodeMap(validationWarn)
		if err != nil {
			t.Fatal(err)
		}
		allocs[i] = testing.AllocsPerRun(50, func() {
			if _, ok, _ := mergeNamedParts(tg, stored, p.keepsSpec(tg), pm, validationWarn); !ok {
				t.Fatalf("%s: merged the whole object, want its parts", body)
			}
		})
	}
	if allocs[1] > allocs[0]+5 {
		t.Errorf("the kubelet's patch with the stored UID costs %.0f allocations, without it %.0f: its metadata was converted", allocs[1], allocs[0])
	}
}
