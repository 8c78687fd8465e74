package fakeapiserver

import "testing"

// TestMergeNamedPartsFallbackCostsNoMore wants a status patch that mergeNamedParts cannot answer
// for a reason visible from the patch's top-level keys alone to cost no more allocations than the
// whole object's way: a body that mentions "spec" anywhere (keepsSpec is false, so the spec is
// neither named nor cut), or one that names the metadata but not the status. Checking the unnamed
// parts only after the named ones were converted, merged and converted back cost 883 allocations
// against the whole way's 463.
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
			if allocs[0] > allocs[1]*1.1 {
				t.Errorf("falling back from the parts' way costs %.0f allocations, the whole way alone %.0f", allocs[0], allocs[1])
			}
		})
	}
}
