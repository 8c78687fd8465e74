package fakeapiserver

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// TestNestedCopyStopsAtCopyLimit checks why the nested-copy patch is refused: json-patch stops it
// at the copy that takes the copied bytes past MaxJSONPatchCopyBytes, so the object it builds
// never grows much past that.
func TestNestedCopyStopsAtCopyLimit(t *testing.T) {
	limitJSONPatchCopies()
	ops := make([]string, 30)
	for i := range ops {
		ops[i] = fmt.Sprintf(`{"op":"copy","from":"/metadata/annotations","path":"/metadata/annotations/k%02d"}`, i)
	}
	p, err := newPatchRequest(types.JSONPatchType, []byte("["+strings.Join(ops, ",")+"]"))
	if err != nil {
		t.Fatalf("newPatchRequest() = %v", err)
	}
	pod := []byte(`{"metadata":{"name":"p","annotations":{"a":"` + strings.Repeat("x", 100) + `"}}}`)
	_, err = p.apply(podResource(), pod)
	var copyErr *jsonpatch.AccumulatedCopySizeError
	if !errors.As(err, &copyErr) || !apierrors.IsInvalid(err) {
		t.Fatalf("apply(nested copies) = %v, want Invalid wrapping an AccumulatedCopySizeError", err)
	}
	if want := fmt.Sprintf("exceeding the limit %d", MaxJSONPatchCopyBytes); !strings.Contains(copyErr.Error(), want) {
		t.Errorf("apply(nested copies) = %v, want %q", copyErr, want)
	}
}
