package fakeapiserver

import (
	"fmt"
	"mime"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// patch serves PATCH of an object or its status. JSON patch, JSON merge patch and strategic merge
// patch are supported; server-side apply is not.
func (s *Server) patch(w http.ResponseWriter, r *http.Request, t target) error {
	fv, err := parseFieldValidation(r)
	if err != nil {
		return err
	}
	ct := r.Header.Get("Content-Type")
	pt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return unsupportedMediaType(ct)
	}
	switch types.PatchType(pt) {
	case types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType:
	default:
		return unsupportedMediaType(pt)
	}
	data, err := readBody(r)
	if err != nil {
		return err
	}
	var out *entry
	var warnings []string
	err = s.store.locked(func() error {
		old, ok := s.store.get(t.res, t.namespace, t.name)
		if !ok {
			return apierrors.NewNotFound(t.res.groupResource(), t.name)
		}
		patched, err := applyPatch(t.res, types.PatchType(pt), old.raw, data)
		if err != nil {
			return err
		}
		obj, warns, err := decode(t.res, body{data: patched}, fv)
		if err != nil {
			return err
		}
		warnings = warns
		if err := checkIdentity(t, mustMeta(obj)); err != nil {
			return err
		}
		out, err = s.applyUpdate(t, old, obj, isDryRun(r), "PATCH")
		return err
	})
	if err != nil {
		return err
	}
	writeWarnings(w, warnings)
	writeRaw(w, http.StatusOK, out.raw)
	return nil
}

func applyPatch(res *resource, pt types.PatchType, original, patch []byte) ([]byte, error) {
	var out []byte
	var err error
	switch pt {
	case types.JSONPatchType:
		var p jsonpatch.Patch
		if p, err = jsonpatch.DecodePatch(patch); err == nil {
			out, err = p.Apply(original)
		}
	case types.MergePatchType:
		out, err = jsonpatch.MergePatch(original, patch)
	default:
		out, err = strategicpatch.StrategicMergePatch(original, patch, res.newObj())
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body of the request could not be applied as a %s: %v", pt, err))
	}
	return out, nil
}
