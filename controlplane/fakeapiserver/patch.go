package fakeapiserver

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	kjson "sigs.k8s.io/json"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/compactjson"
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
// patch are supported here; server-side apply is managedfields.go's.
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
		if p.typ == types.StrategicMergePatchType && strategicMergeByMaps {
			obj, w, err := p.strategicMerge(t, old, fv)
			if err != nil {
				return nil, err
			}
			warnings = w
			return obj, checkIdentity(t, mustMeta(obj))
		}
		original := old.encodedForWrite()
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

// strategicMergeByMaps makes a strategic merge patch merge the stored object converted to maps
// (strategicMerge) rather than its JSON encoding; a test turns it off to compare.
var strategicMergeByMaps = true

// strategicMerge applies a strategic merge patch to old's object as kube-apiserver's
// strategicPatchObject and applyPatchToObject do (staging/src/k8s.io/apiserver/pkg/endpoints/
// handlers/patch.go): the object converted to maps by the unstructured converter, the patch
// decoded into maps (strictly, reporting duplicate fields, unless fv is Ignore), merged, and the
// result converted back with the converter's field validation. No JSON is encoded or decoded
// but the patch's. Its errors are kube-apiserver's: a patch that is not a JSON object is 400
// with the decoder's message; the merge's errors are interpreted as
// interpretStrategicMergePatchError does (400 for a malformed patch, 422 for a list of lists
// or retained keys that do not match, and any other, an unknown $patch directive for one,
// kube-apiserver's answer to an error that is no Status: 500 with the bare message); a result
// that does not fit the type, and with Strict an unknown or duplicate field, is 422 Invalid
// naming the patch ("patch: Invalid value: "map[...]": ..."), and with Warn those fields are
// warnings. The object's apiVersion and kind are the resource's whatever the patch says:
// kube-apiserver converts the patched object by its Go type, not by its kind.
func (p patchRequest) strategicMerge(t target, old *entry, fv fieldValidation) (runtime.Object, []string, error) {
	src, keepsManagedFields, cutSpec := old.obj, p.keepsManagedFields(t, old), false
	if keepsManagedFields {
		cutSpec = p.keepsSpec(t)
	}
	patchMap, strictErrs, err := p.decodeMap(fv)
	if err != nil {
		return nil, nil, err
	}
	if keepsManagedFields && mergeNamedPartsOnly && len(strictErrs) == 0 {
		obj, ok, merged := mergeNamedParts(t, old.obj, cutSpec, patchMap, fv)
		if ok {
			return obj, nil, nil
		}
		// A merge that ran may have changed the patch's maps (it takes directives out): the
		// whole object's merge then starts from the patch again.
		if merged {
			if patchMap, strictErrs, err = p.decodeMap(fv); err != nil {
				return nil, nil, err
			}
		}
	}
	if keepsManagedFields {
		src = withoutManagedFieldsOrSpec(src, cutSpec)
	}
	original, err := runtime.DefaultUnstructuredConverter.ToUnstructured(src)
	if err != nil {
		return nil, nil, err
	}
	if cutSpec {
		delete(original, "spec")
	}
	merged, err := strategicpatch.StrategicMergeMapPatch(original, patchMap, t.res.newObj())
	if err != nil {
		return nil, nil, strategicMergeError(err)
	}
	obj := t.res.newObj()
	invalid := func(err error) error {
		return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
			field.Invalid(field.NewPath("patch"), fmt.Sprintf("%+v", patchMap), err.Error())})
	}
	// The converter's field validation keeps a set of the keys it matched for every object it
	// converts; merged maps whose every key names a field have no unknown field to report, so
	// their conversion needs none. The check reads the merged maps, what the converter reads,
	// not the patch: the merge deletes from the patch what it merged (a list that
	// $setElementOrder orders, the directive itself), and keeps the directives of a value it
	// takes whole (a key or list element the original lacks, a map under $patch: replace),
	// which the converter then reports as unknown fields.
	validate := fv != validationIgnore && !(skipKnownFieldValidation && onlyKnownFields(reflect.TypeOf(obj), map[string]any(merged)))
	var warnings []string
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(merged, obj, validate); err != nil {
		strictErr, isStrict := runtime.AsStrictDecodingError(err)
		switch {
		case !isStrict:
			// A value that does not fit its field wins over the strict errors, which may be
			// incomplete, as in kube-apiserver.
			return nil, nil, invalid(err)
		case fv == validationWarn:
			strictErrs = append(strictErrs, strictErr.Errors()...)
		default:
			return nil, nil, invalid(runtime.NewStrictDecodingError(append(strictErrs, strictErr.Errors()...)))
		}
	} else if len(strictErrs) > 0 && fv == validationStrict {
		return nil, nil, invalid(runtime.NewStrictDecodingError(strictErrs))
	}
	if fv == validationWarn {
		for _, e := range strictErrs {
			warnings = append(warnings, e.Error())
		}
	}
	obj.GetObjectKind().SetGroupVersionKind(t.res.gvk())
	return obj, warnings, nil
}

// decodeMap decodes a strategic merge patch into maps, strictly (the duplicate fields it finds
// returned as errors) unless fv is Ignore; a body that is not a JSON object is 400 with the
// decoder's message.
func (p patchRequest) decodeMap(fv fieldValidation) (map[string]any, []error, error) {
	patchMap := map[string]any{}
	var strictErrs []error
	var err error
	if fv == validationIgnore {
		err = kjson.UnmarshalCaseSensitivePreserveInts(p.data, &patchMap)
	} else {
		strictErrs, err = kjson.UnmarshalStrict(p.data, &patchMap)
	}
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	return patchMap, strictErrs, nil
}

// mergeNamedPartsOnly lets strategicMerge merge only the parts of the object that a status patch
// names (mergeNamedParts); a test turns it off to compare.
var mergeNamedPartsOnly = true

// mergeNamedParts is strategicMerge for a status patch that keepsManagedFields, converting only
// the top-level parts the patch names (the status, maybe the metadata) rather than the whole
// object: a strategic merge merges key by key, so without a directive at the top (which may
// replace or retain keys of the whole object) each named part merges with the stored part of
// that name alone, and the parts it does not name come out of the converter as they went in. A
// kubelet's status patch names the status and, for a pod, the metadata with only its UID (the
// precondition of status/patch.go); metadata that holds only the stored UID merges to the stored
// metadata, so it is taken as unnamed (sameUIDOnly). For the parts taken as unnamed the result
// holds what the converter's round trip gives (convertedMeta), without converting them, and the
// spec is left out as keepsSpec lets it be. Metadata with any other key, or a UID that is not
// the stored one, is converted and merged like the status, giving kube-apiserver's answer.
//
// It reports ok false, and the caller takes the whole object's way, for anything whose answer
// that way is not plainly the same: a key at the top that is no
// struct field of the object (a directive, apiVersion or kind, an unknown field), a part left
// unnamed that it cannot reproduce, a merge or conversion that fails, merged maps with a field
// the converter's validation would report (the whole way reports it in its words); the caller
// has already left out patches with duplicate fields. merged reports whether the merge ran, which
// may have changed patchMap's maps; before it, patchMap is only read. stored is the stored
// object, which it only reads.
func mergeNamedParts(t target, stored runtime.Object, cutSpec bool, patchMap map[string]any, fv fieldValidation) (obj runtime.Object, ok, merged bool) {
	sv := reflect.ValueOf(stored).Elem()
	names := topLevelFields(sv.Type())
	// The parts the patch does not name: the type's meta (set at the end, as strategicMerge sets
	// it), the metadata as the converter's round trip gives it, a spec that keepsSpec leaves out;
	// anything else is taken the whole object's way. This reads only the patch's top-level keys,
	// so it comes before any conversion: a patch that falls back costs no more than the whole way.
	for i := 2; i < sv.NumField(); i++ {
		name, _ := jsonName(sv.Type().Field(i))
		if _, named := patchMap[name]; named {
			continue
		}
		if !(cutSpec && name == "spec") {
			return nil, false, false
		}
	}
	metaUnnamed := true
	if m, named := patchMap["metadata"]; named {
		metaUnnamed = sameUIDOnly(m, stored)
		if metaUnnamed {
			// Merge the rest alone: a copy of the patch without its metadata, not to change the
			// caller's.
			rest := make(map[string]any, len(patchMap)-1)
			for k, v := range patchMap {
				if k != "metadata" {
					rest[k] = v
				}
			}
			patchMap = rest
		}
	}
	original := make(map[string]any, len(patchMap))
	for k := range patchMap {
		i, ok := names[k]
		if !ok {
			return nil, false, false
		}
		f := sv.Field(i)
		part := f.Addr().Interface()
		if m, ok := part.(*metav1.ObjectMeta); ok {
			cut := *m
			cut.ManagedFields = nil
			part = &cut
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(part)
		if err != nil {
			return nil, false, false
		}
		original[k] = u
	}
	// The merge reads only the type of its last argument: a nil pointer of the stored type.
	mergedMap, err := strategicpatch.StrategicMergeMapPatch(original, patchMap, reflect.Zero(reflect.TypeOf(stored)).Interface())
	if err != nil {
		return nil, false, true
	}
	if fv != validationIgnore && !(skipKnownFieldValidation && onlyKnownFields(reflect.TypeOf(stored), map[string]any(mergedMap))) {
		return nil, false, true
	}
	obj = t.res.newObj()
	ov := reflect.ValueOf(obj).Elem()
	if ov.Type() != sv.Type() {
		return nil, false, true
	}
	for k, v := range mergedMap {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false, true
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(m, ov.Field(names[k]).Addr().Interface(), false); err != nil {
			return nil, false, true
		}
	}
	if metaUnnamed {
		meta, ok := convertedMeta(sv.Field(1).Addr().Interface().(*metav1.ObjectMeta))
		if !ok {
			return nil, false, true
		}
		ov.Field(1).Set(reflect.ValueOf(meta))
	}
	obj.GetObjectKind().SetGroupVersionKind(t.res.gvk())
	return obj, true, true
}

// sameUIDOnly reports whether meta, the metadata of a strategic merge patch, holds nothing but a
// uid equal to the stored object's (a kubelet's precondition): merged, it leaves the stored
// metadata as it is. A null, a number or another string is a change, which the merge makes.
func sameUIDOnly(meta any, stored runtime.Object) bool {
	m, ok := meta.(map[string]any)
	if !ok || len(m) != 1 {
		return false
	}
	uid, ok := m["uid"].(string)
	if !ok {
		return false
	}
	o, ok := stored.(metav1.Object)
	return ok && uid == string(o.GetUID())
}

// topLevelFieldsCache holds topLevelFields' answer for each struct type.
var topLevelFieldsCache sync.Map // reflect.Type -> map[string]int

// topLevelFields maps the JSON names of the struct type t's fields that hold a struct under a
// key of their own (a typed object's metadata, spec and status, not its inlined type meta) to
// their indexes.
func topLevelFields(t reflect.Type) map[string]int {
	if f, ok := topLevelFieldsCache.Load(t); ok {
		return f.(map[string]int)
	}
	fields := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, tagged := jsonName(f)
		if (f.Anonymous && !tagged) || f.Type.Kind() != reflect.Struct {
			continue
		}
		fields[name] = i
	}
	topLevelFieldsCache.Store(t, fields)
	return fields
}

// jsonName is the name the unstructured converter matches the field f by: its JSON name, or its
// Go name where the tag names none; tagged reports whether the tag names one (an embedded struct
// whose tag names none is inlined).
func jsonName(f reflect.StructField) (name string, tagged bool) {
	name, _, _ = strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name, false
	}
	return name, true
}

// convertedMeta returns what converting m without its managed fields to maps and back gives
// (runtime.DefaultUnstructuredConverter's ToUnstructured, then FromUnstructured), without the
// maps: a copy sharing nothing with m, whose empty lists and maps are nil (their JSON tags omit
// them when empty) and whose times are whole seconds in the local zone (metav1.Time's JSON
// form), or false for a value whose round trip it does not reproduce (a deletion timestamp that
// points at a zero time). TestConvertedMetaAsTheConverter holds it to the converter's answer,
// field by field.
func convertedMeta(m *metav1.ObjectMeta) (metav1.ObjectMeta, bool) {
	out := *m
	out.ManagedFields = nil
	out.Labels = copyStrings(m.Labels)
	out.Annotations = copyStrings(m.Annotations)
	out.Finalizers = nil
	if len(m.Finalizers) > 0 {
		out.Finalizers = append([]string(nil), m.Finalizers...)
	}
	out.OwnerReferences = nil
	if len(m.OwnerReferences) > 0 {
		out.OwnerReferences = make([]metav1.OwnerReference, len(m.OwnerReferences))
		for i := range m.OwnerReferences {
			m.OwnerReferences[i].DeepCopyInto(&out.OwnerReferences[i])
		}
	}
	var ok bool
	if out.CreationTimestamp, ok = convertedTime(m.CreationTimestamp); !ok {
		return out, false
	}
	if m.DeletionTimestamp != nil {
		if m.DeletionTimestamp.IsZero() {
			return out, false
		}
		t, ok := convertedTime(*m.DeletionTimestamp)
		if !ok {
			return out, false
		}
		out.DeletionTimestamp = &t
	}
	if m.DeletionGracePeriodSeconds != nil {
		out.DeletionGracePeriodSeconds = ptr.To(*m.DeletionGracePeriodSeconds)
	}
	return out, true
}

// copyStrings copies m, or returns nil for an empty m.
func copyStrings(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// convertedTime is t through its JSON form, as the converter takes it: a zero time stays zero.
func convertedTime(t metav1.Time) (metav1.Time, bool) {
	if t.IsZero() {
		return metav1.Time{}, true
	}
	raw, err := t.MarshalJSON()
	if err != nil {
		return metav1.Time{}, false
	}
	var out metav1.Time
	if err := out.UnmarshalJSON(raw); err != nil {
		return metav1.Time{}, false
	}
	return out, true
}

// skipKnownFieldValidation lets strategicMerge convert the merged maps without field validation
// when the patch names only known fields (onlyKnownFields); a test turns it off to compare.
var skipKnownFieldValidation = true

// onlyKnownFields reports whether v, an object of type t converted to maps (the merged maps of a
// strategic merge patch), names only fields of t at every level: a directive the merge left in
// them ($patch, $retainKeys, ...) is no field and makes it false. Map keys are free; a scalar
// has no fields; a value the type cannot hold is the conversion's error whatever the
// validation, so it is not looked into; a value of a type that decodes itself (times,
// quantities, raw extensions) is converted by its own decoding, which reports no unknown field;
// an interface field may hold any object, so one there is not known. The merged maps hold the
// whole stored object but what keepsManagedFields and keepsSpec leave out, so the walk reads
// each type's shape from a cache (knownShapeOf) rather than asking reflect at every value.
func onlyKnownFields(t reflect.Type, v any) bool {
	switch v := v.(type) {
	case map[string]any:
		sh := knownShapeOf(t)
		switch {
		case sh.decodesItself:
			return true
		case sh.kind == reflect.Struct:
			for k, fv := range v {
				ft, ok := sh.fields[k]
				if !ok || !onlyKnownFields(ft, fv) {
					return false
				}
			}
		case sh.kind == reflect.Map:
			for _, fv := range v {
				if !onlyKnownFields(sh.elem, fv) {
					return false
				}
			}
		case sh.kind == reflect.Interface:
			return false
		}
	case []any:
		sh := knownShapeOf(t)
		switch {
		case sh.decodesItself:
			return true
		case sh.kind == reflect.Slice || sh.kind == reflect.Array:
			for _, e := range v {
				if !onlyKnownFields(sh.elem, e) {
					return false
				}
			}
		case sh.kind == reflect.Interface:
			return false
		}
	}
	return true
}

// typeShape is what onlyKnownFields needs of a type, its pointers followed: its kind, whether it
// decodes itself, its fields (a struct's, by jsonFields) and its elements' type (a map's, a
// slice's or an array's).
type typeShape struct {
	kind          reflect.Kind
	decodesItself bool
	fields        map[string]reflect.Type
	elem          reflect.Type
}

// typeShapes holds knownShapeOf's answer for each type.
var typeShapes sync.Map // reflect.Type -> *typeShape

// knownShapeOf returns t's typeShape.
func knownShapeOf(t reflect.Type) *typeShape {
	if sh, ok := typeShapes.Load(t); ok {
		return sh.(*typeShape)
	}
	et := t
	for et.Kind() == reflect.Pointer {
		et = et.Elem()
	}
	sh := &typeShape{kind: et.Kind(), decodesItself: reflect.PointerTo(et).Implements(jsonUnmarshaler)}
	switch sh.kind {
	case reflect.Struct:
		sh.fields = jsonFields(et)
	case reflect.Map, reflect.Slice, reflect.Array:
		sh.elem = et.Elem()
	}
	typeShapes.Store(t, sh)
	return sh
}

// jsonFieldsCache holds jsonFields' answer for each struct type.
var jsonFieldsCache sync.Map // reflect.Type -> map[string]reflect.Type

// jsonFields is the fields of the struct type t by the names the unstructured converter matches
// them by (their JSON names, the Go name where a tag names none), with the fields of the
// structs it inlines (an embedded struct without a name) among them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if f, ok := jsonFieldsCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, tagged := jsonName(f)
		switch {
		case !tagged && f.Anonymous:
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() != reflect.Struct {
				continue // the converter inlines only a struct
			}
			for k, v := range jsonFields(ft) {
				fields[k] = v
			}
			continue
		}
		fields[name] = f.Type
	}
	jsonFieldsCache.Store(t, fields)
	return fields
}

// strategicMergeError is kube-apiserver's interpretStrategicMergePatchError: the merge's errors
// for a malformed patch are 400, a list of lists and retained keys that do not match the
// patch 422, each with the bare message; any other is an error that is no Status, which
// kube-apiserver answers with 500, no reason and the bare message.
func strategicMergeError(err error) error {
	switch err {
	case mergepatch.ErrBadJSONDoc, mergepatch.ErrBadPatchFormatForPrimitiveList, mergepatch.ErrBadPatchFormatForRetainKeys,
		mergepatch.ErrBadPatchFormatForSetElementOrderList, mergepatch.ErrUnsupportedStrategicMergePatchFormat:
		return apierrors.NewBadRequest(err.Error())
	case mergepatch.ErrNoListOfLists, mergepatch.ErrPatchContentNotMatchRetainKeys:
		return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	default:
		return statusError(http.StatusInternalServerError, metav1.StatusReasonUnknown, err.Error())
	}
}

// withoutManagedFieldsOrSpec returns a shallow copy of obj, a typed object (metadataFirst),
// without its managed fields and, if spec, without its spec: what keepsManagedFields and
// keepsSpec let a status patch leave out. The copy shares everything else with obj, which
// it only reads.
func withoutManagedFieldsOrSpec(obj runtime.Object, spec bool) runtime.Object {
	v := reflect.ValueOf(obj).Elem()
	cp := reflect.New(v.Type())
	cp.Elem().Set(v)
	cp.Elem().Field(1).FieldByName("ManagedFields").SetZero()
	if f := cp.Elem().FieldByName("Spec"); spec && f.IsValid() {
		f.SetZero()
	}
	return cp.Interface().(runtime.Object)
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
		k, _, next, ok := compactjson.Member(raw, i)
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
