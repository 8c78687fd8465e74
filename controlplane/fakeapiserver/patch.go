package fakeapiserver

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"net/http"
	"sync/atomic"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// MaxJSONPatchOperations is the most operations one JSON patch may hold. A longer patch is
// refused with 413 before it is applied, as kube-apiserver's maxJSONPatchOperations
// (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go) is.
const MaxJSONPatchOperations = 10000

// MaxJSONPatchCopyBytes bounds, in bytes, how much the copy operations of one JSON patch may add
// to an object: kube-apiserver's default JSONPatchMaxCopyBytes (3 MiB, twice etcd's recommended
// request size), which it sets as json-patch's AccumulatedCopySizeLimit. A patch that copies
// more is refused with 422 at the copy that goes past the bound.
const MaxJSONPatchCopyBytes = 3 << 20

// limitJSONPatchCopies sets json-patch's AccumulatedCopySizeLimit, a process-wide variable, to
// MaxJSONPatchCopyBytes unless a lower limit is already set, the way kube-apiserver's
// GenericAPIServer construction does.
func limitJSONPatchCopies() {
	for {
		existing := atomic.LoadInt64(&jsonpatch.AccumulatedCopySizeLimit)
		if existing > 0 && existing <= MaxJSONPatchCopyBytes {
			return
		}
		if atomic.CompareAndSwapInt64(&jsonpatch.AccumulatedCopySizeLimit, existing, MaxJSONPatchCopyBytes) {
			return
		}
	}
}

// patch serves PATCH of an object or its status. JSON patch, JSON merge patch and strategic merge
// patch are supported here; server-side apply is fieldmanager.go's.
//
// The patch is applied and its result decoded without the store lock, to the version read
// before; the write then commits only if the object is still that version, and otherwise the
// patch is applied again to the newer one, as kube-apiserver's GuaranteedUpdate retries.
func (s *Server) patch(w http.ResponseWriter, r *http.Request, t target) error {
	fv, err := parseFieldValidation(r)
	if err != nil {
		return err
	}
	ct := r.Header.Get("Content-Type")
	pt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return unsupportedMediaType(ct, patchMediaTypes)
	}
	switch types.PatchType(pt) {
	case types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType:
	case types.ApplyYAMLPatchType:
		return s.apply(w, r, t)
	default:
		return unsupportedMediaType(pt, patchMediaTypes)
	}
	data, err := readBody(r)
	if err != nil {
		return err
	}
	out, warnings, err := s.patchObject(r.Context(), t, types.PatchType(pt), data, fv, isDryRun(r))
	if err != nil {
		return err
	}
	writeWarnings(w, warnings)
	return writeEntry(w, answerForm(r), http.StatusOK, out)
}

// patchObject applies a JSON, merge or strategic merge patch, shared by PATCH and the in-process
// client (direct.go): the patch is applied to the stored object's encoding and the result decoded,
// as kube-apiserver's patcher does, with fv's field validation.
func (s *Server) patchObject(ctx context.Context, t target, pt types.PatchType, data []byte, fv fieldValidation, dryRun bool) (*entry, []string, error) {
	p, err := newPatchRequest(pt, data)
	if err != nil {
		return nil, nil, err
	}
	var warnings []string
	out, err := s.guaranteedUpdate(ctx, t, dryRun, "PATCH", func(old *entry) (runtime.Object, error) {
		original := old.encoded()
		if p.keepsManagedFields(t, old) {
			if cut := withoutManagedFields(original); cut != nil {
				original = cut
			}
			if p.keepsSpec(t) {
				if cut := withoutTopLevel(original, "spec"); cut != nil {
					original = cut
				}
			}
		}
		patched, err := p.apply(t.res, original)
		if err != nil {
			return nil, err
		}
		// A strategic merge patch encodes its result from maps: sorted keys.
		obj, w, err := decode(t.res, body{data: patched, sorted: p.typ == types.StrategicMergePatchType}, fv)
		if err != nil {
			return nil, err
		}
		warnings = w
		return obj, checkIdentity(t, mustMeta(obj))
	})
	if err != nil {
		return nil, nil, err
	}
	return out, warnings, nil
}

// patchRequest is a PATCH body, decoded as far as it can be without the object it applies to.
type patchRequest struct {
	typ  types.PatchType
	data []byte
	ops  jsonpatch.Patch // for a JSON patch
}

// newPatchRequest decodes a JSON patch and checks its length, with kube-apiserver's errors: 400
// for a body that is not a JSON patch, 413 for one longer than MaxJSONPatchOperations.
func newPatchRequest(pt types.PatchType, data []byte) (patchRequest, error) {
	p := patchRequest{typ: pt, data: data}
	if pt != types.JSONPatchType {
		return p, nil
	}
	ops, err := jsonpatch.DecodePatch(data)
	if err != nil {
		return p, apierrors.NewBadRequest(err.Error())
	}
	if len(ops) > MaxJSONPatchOperations {
		return p, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
			"The allowed maximum operations in a JSON patch is %d, got %d", MaxJSONPatchOperations, len(ops)))
	}
	p.ops = ops
	return p, nil
}

// keepsManagedFields reports whether the patch, a status write, can be applied to old without its
// managed fields and give the same object but for them. A merge or strategic merge patch merges
// key by key, so the object patched without them differs from the one patched whole in its
// managed fields alone (a directive that replaces or retains keys of the metadata drops them from
// both); the status strategy takes everything but the spec from the patched object, and the
// field manager of a subresource reads the managed fields of old, never the request's, and sets
// those of what it stores; so their absence does not matter. The managed fields are the largest part of a pod (every
// manager's fields, each a nested object), which the patch would decode into maps, encode
// again and the decoder would read a third time. A patch that names them (in any spelling: a
// JSON string may escape its letters) and a JSON patch, whose paths and tests see the whole
// object, are applied to the whole object.
func (p patchRequest) keepsManagedFields(t target, old *entry) bool {
	return patchWithoutManagedFields && t.subresource == "status" && (p.typ == types.StrategicMergePatchType || p.typ == types.MergePatchType) &&
		!bytes.Contains(p.data, []byte("managedFields")) && !bytes.Contains(p.data, []byte(`\u`)) && metadataFirst(old.obj)
}

// keepsSpec reports whether the patch, a status write that keepsManagedFields, can be applied to
// the stored object without its spec and give the same object but for the spec: the patch
// names no spec (in no spelling: keepsManagedFields has refused escapes), and merges key by key
// (a directive at the top that replaces or retains keys drops the spec from both), and the
// subresource is the status, whose strategy (prepareUpdate, keepStoredSpec) replaces the
// patched object's spec with the stored one before anything reads it. The spec is a
// pod's largest part after its managed fields.
func (p patchRequest) keepsSpec(t target) bool {
	sub, _ := t.res.subresource(t.subresource)
	return t.subresource == "status" && sub.prepare == nil && !bytes.Contains(p.data, []byte("spec"))
}

// withoutTopLevel returns raw, an object encoded as compact JSON, without its member key, or nil
// if it has none or raw is not such an object.
func withoutTopLevel(raw []byte, key string) []byte {
	if len(raw) < 2 || raw[0] != '{' {
		return nil
	}
	for i := 1; ; {
		k, _, next, ok := member(raw, i)
		if !ok || k == nil {
			return nil
		}
		if len(k) == len(key)+2 && string(k[1:len(k)-1]) == key {
			start, end := i, next
			// Drop the comma that joined the member to the one before it, or else the one after.
			switch {
			case raw[start] == ',':
			case end < len(raw) && raw[end] == ',':
				end++
			}
			out := make([]byte, 0, len(raw)-(end-start))
			out = append(out, raw[:start]...)
			return append(out, raw[end:]...)
		}
		i = next
	}
}

// patchWithoutManagedFields lets a status patch leave out the managed fields (keepsManagedFields)
// and the spec (keepsSpec); a test turns it off to compare.
var patchWithoutManagedFields = true

// withoutManagedFields returns raw, a typed object (metadataFirst) encoded as JSON, without its
// metadata.managedFields, or nil if it has none. The first "metadata" key is the object's (its
// kind and apiVersion, before it, are strings), and the managed fields are the key of that name
// directly in it, found by reading the metadata outside its strings.
func withoutManagedFields(raw []byte) []byte {
	const meta, key = `"metadata":{`, `"managedFields":[`
	m := bytes.Index(raw, []byte(meta))
	if m < 0 {
		return nil
	}
	depth, inString, start, end := 1, false, -1, -1
	for i := m + len(meta); i < len(raw) && end < 0; i++ {
		c := raw[i]
		if inString {
			switch c {
			case '\\':
				i++ // the escaped character
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			// A string directly in the metadata followed by a colon is a key.
			if depth == 1 && start < 0 && bytes.HasPrefix(raw[i:], []byte(key)) {
				start, depth = i, depth+1
				i += len(key) - 1
				continue
			}
			inString = true
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			switch {
			case depth == 0:
				return nil // the metadata ended without managed fields
			case depth == 1 && start >= 0:
				end = i + 1
			}
		}
	}
	if end < 0 {
		return nil
	}
	// Drop the comma that joined the key to the one before it, or else the one after it.
	switch {
	case raw[start-1] == ',':
		start--
	case raw[start-1] == '{' && end < len(raw) && raw[end] == ',':
		end++
	}
	out := make([]byte, 0, len(raw)-(end-start))
	out = append(out, raw[:start]...)
	return append(out, raw[end:]...)
}

// apply applies the patch to original, an object encoded as JSON.
//
// A JSON patch that does not apply (a missing path, a failed test, a copy past
// MaxJSONPatchCopyBytes) is kube-apiserver's 422, whose message does not say why; the error also
// wraps json-patch's, which does. The other patch types keep a 400 that says why.
func (p patchRequest) apply(res *resource, original []byte) ([]byte, error) {
	var out []byte
	var err error
	switch p.typ {
	case types.JSONPatchType:
		if out, err = p.ops.Apply(original); err != nil {
			st := apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
			return nil, fmt.Errorf("%w: %w", st, err)
		}
		return out, nil
	case types.MergePatchType:
		out, err = jsonpatch.MergePatch(original, p.data)
	default:
		out, err = strategicpatch.StrategicMergePatch(original, p.data, res.newObj())
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body of the request could not be applied as a %s: %v", p.typ, err))
	}
	return out, nil
}
