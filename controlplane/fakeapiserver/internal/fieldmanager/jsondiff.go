package fieldmanager

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/compactjson"
)

// The comparison scalarUpdate and statusScalarUpdate prove their writes with: the two objects'
// JSON walked in step beside the schema the library's typed comparison reads, and a cheaper
// check before it that their JSON may have the same keys at all.

// sameKeys is a check, without encoding, that a and b (values of one type) may encode to JSON
// with the same keys: false where they surely do not, a field marked omitempty empty in one and
// not in the other, a pointer or map nil in one only, maps with other keys, a list empty in one
// only, a value with JSON methods of its own zero in one only. A status write that changes
// which fields are set (a pod's from Pending to Running) then spares the encoding of both
// objects that changedScalars would refuse; lists are not looked into (an atomic list may
// change inside), and a false answer only sends the write to the library's path.
func sameKeys(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameKeys(a.Elem(), b.Elem())
	case reflect.Slice:
		return a.IsNil() == b.IsNil() && (a.Len() == 0) == (b.Len() == 0)
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		it := a.MapRange()
		for it.Next() {
			v := b.MapIndex(it.Key())
			if !v.IsValid() || !sameKeys(it.Value(), v) {
				return false
			}
		}
		return true
	case reflect.Struct:
		if compactjson.HasOwnCodec(a.Type()) {
			return a.IsZero() == b.IsZero()
		}
		for _, f := range compactjson.Fields(a.Type()) {
			if f.Skip || f.Refuse {
				continue
			}
			fa, fb := a.Field(f.Index), b.Field(f.Index)
			if f.OmitEmpty && fa.IsZero() != fb.IsZero() {
				return false
			}
			if !sameKeys(fa, fb) {
				return false
			}
		}
	}
	return true
}

// changedScalars returns the paths of the scalars whose values differ between the JSON of live
// and obj, and of the atomic lists that differ, and false if anything else differs (see
// scalarUpdate and jsonDiff.list) or either does not marshal.
func (m *Manager) changedScalars(res *Resource, live, obj any) ([]fieldpath.Path, bool) {
	a, b, ok := comparableJSON(live, obj)
	if !ok {
		return nil, false
	}
	return m.changedScalarsJSON(res, a, b)
}

// changedScalarsJSON is changedScalars of the JSON a and b (comparableJSON's).
func (m *Manager) changedScalarsJSON(res *Resource, a, b []byte) ([]fieldpath.Path, bool) {
	d := jsonDiff{types: &m.fieldTypes}
	var root *smdschema.TypeRef
	if r, ok := m.rootType(res); ok {
		d.schema, root = r.schema, &r.ref
	}
	if !d.value(a, b, nil, root) {
		return nil, false
	}
	return d.changed, true
}

// jsonDiff walks two documents of compact JSON, as encoding/json writes them, in step, beside
// the schema of their type, as the library's typed comparison (typed.Comparison) walks the
// typed values: the path of a changed scalar is the scalar's, that of a changed atomic list is
// the list's, and the elements of an associative list with keys are named by their keys. A
// value whose type the schema does not give (or a walk without a schema) can only be a scalar.
type jsonDiff struct {
	schema  *smdschema.Schema
	changed []fieldpath.Path
	// fields lets the walk find fields added and removed as well (statusFieldsUpdate), into
	// added and removed; changed then holds the typed comparison's modified fields.
	fields         bool
	added, removed []fieldpath.Path
	// members is the stack of the objects' members the fields walk lists (membersOf).
	members []jsonMember
	// types caches the fields' types of the schema's maps (childType).
	types *sync.Map
}

// value compares the values a and b (each exactly one value) at path, whose type is tr (nil if
// unknown).
func (d *jsonDiff) value(a, b []byte, path fieldpath.Path, tr *smdschema.TypeRef) bool {
	if bytes.Equal(a, b) {
		return true
	}
	ka, kb := compactjson.Kind(a[0]), compactjson.Kind(b[0])
	if ka != kb {
		return false
	}
	switch ka {
	case '{':
		if d.fields {
			return d.objectFields(a, b, path, tr)
		}
		return d.object(a, b, path, tr)
	case '[':
		if d.fields {
			return d.listFields(a, b, path, tr)
		}
		return d.list(a, b, path, tr)
	case '"', 't':
	case '0':
		if compactjson.IsInteger(a) != compactjson.IsInteger(b) {
			return false
		}
	default: // null
		return false
	}
	// Every path is a slice of its own (each step appends past a cut capacity), so that the
	// changed paths share no array.
	d.changed = append(d.changed, path)
	return true
}

// object compares two objects key by key; both list their keys in the same order when they have
// the same ones (struct fields in declaration order, map keys sorted).
func (d *jsonDiff) object(a, b []byte, path fieldpath.Path, tr *smdschema.TypeRef) bool {
	var m *smdschema.Map
	if tr != nil && d.schema != nil {
		if atom, ok := d.schema.Resolve(*tr); ok {
			m = atom.Map
		}
	}
	i, j := 1, 1
	for {
		var ka, kb, va, vb []byte
		var ok bool
		for {
			if ka, va, i, ok = compactjson.Member(a, i); !ok {
				return false
			}
			if ka == nil || !skipped(path, ka) {
				break
			}
		}
		for {
			if kb, vb, j, ok = compactjson.Member(b, j); !ok {
				return false
			}
			if kb == nil || !skipped(path, kb) {
				break
			}
		}
		if ka == nil || kb == nil {
			return ka == nil && kb == nil
		}
		if !bytes.Equal(ka, kb) {
			return false
		}
		if bytes.Equal(va, vb) {
			continue
		}
		key, ok := compactjson.Unquote(ka)
		if !ok {
			return false
		}
		// The type of the member as the typed comparison finds it (childType).
		var child *smdschema.TypeRef
		if m != nil {
			child = childType(d.types, m, key)
		}
		if !d.value(va, vb, append(path[:len(path):len(path)], fieldpath.PathElement{FieldName: &key}), child) {
			return false
		}
	}
}

// list compares two lists that differ, of type tr. An atomic list is one leaf, changed as a
// whole (the typed comparison reports it modified where both sides have elements). An
// associative list with keys may differ only inside its elements: the same number of elements,
// each an object, in the same order, with the same keys (every key field present, a string, an
// integer or a boolean, the same bytes on both sides), no two elements with the same keys; the
// typed comparison then pairs the elements by their keys, which are those at the same index,
// and compares each pair. Anything else (an element added, removed or moved, duplicates, which
// the library compares as a whole, a set of scalars, a list the schema does not describe, an
// empty list, which the library compares as a leaf) is refused.
func (d *jsonDiff) list(a, b []byte, path fieldpath.Path, tr *smdschema.TypeRef) bool {
	if tr == nil || d.schema == nil {
		return false
	}
	atom, ok := d.schema.Resolve(*tr)
	if !ok || atom.List == nil {
		return false
	}
	l := atom.List
	ea, ok := compactjson.Elements(a)
	if !ok || len(ea) == 0 {
		return false
	}
	eb, ok := compactjson.Elements(b)
	if !ok || len(eb) == 0 {
		return false
	}
	switch {
	case l.ElementRelationship == smdschema.Atomic:
		d.changed = append(d.changed, path)
		return true
	case l.ElementRelationship != smdschema.Associative || len(l.Keys) == 0 || len(ea) != len(eb):
		return false
	}
	seen := make(map[string]bool, len(ea))
	keys := make([][]byte, len(l.Keys))
	for i := range ea {
		if ea[i][0] != '{' || eb[i][0] != '{' {
			return false
		}
		id := make([]byte, 0, 32)
		for k, name := range l.Keys {
			va, ok := compactjson.MemberValue(ea[i], name)
			if !ok {
				return false
			}
			vb, ok := compactjson.MemberValue(eb[i], name)
			if !ok || !bytes.Equal(va, vb) {
				return false
			}
			if c := compactjson.Kind(va[0]); c != '"' && c != 't' && (c != '0' || !compactjson.IsInteger(va)) {
				return false
			}
			keys[k] = va
			id = append(append(id, va...), 0)
		}
		if seen[string(id)] {
			return false
		}
		seen[string(id)] = true
		if bytes.Equal(ea[i], eb[i]) {
			continue
		}
		pe, ok := keyElement(l.Keys, keys)
		if !ok || !d.object(ea[i], eb[i], append(path[:len(path):len(path)], pe), &l.ElementType) {
			return false
		}
	}
	return true
}

// keyElement is the path element of the list element whose key fields names have the JSON
// values raw, as the library names it: the fields sorted by name.
func keyElement(names []string, raw [][]byte) (fieldpath.PathElement, bool) {
	fields := make(value.FieldList, len(names))
	for i, name := range names {
		var v any
		switch r := raw[i]; compactjson.Kind(r[0]) {
		case '"':
			s, ok := compactjson.Unquote(r)
			if !ok {
				return fieldpath.PathElement{}, false
			}
			v = s
		case 't':
			v = r[0] == 't'
		default:
			n, err := strconv.ParseInt(string(r), 10, 64)
			if err != nil {
				return fieldpath.PathElement{}, false
			}
			v = n
		}
		fields[i] = value.Field{Name: name, Value: value.NewValueInterface(v)}
	}
	fields.Sort()
	return fieldpath.PathElement{Key: &fields}, true
}

// typeRoot is the schema of a resource's objects, as the type converter has it.
type typeRoot struct {
	schema *smdschema.Schema
	ref    smdschema.TypeRef
}

// rootType is the schema and type of res's objects: those of the typed value the type converter
// makes of an empty object, so that the comparison reads the schema the library's walk reads.
func (m *Manager) rootType(res *Resource) (typeRoot, bool) {
	gvk := res.gvk()
	if roots := m.typeRoots.Load(); roots != nil {
		if rt, ok := (*roots)[gvk]; ok {
			return rt, rt.schema != nil
		}
	}
	var rt typeRoot
	if tc, err := m.typeConverter(); err == nil {
		obj := res.New()
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		if tv, err := tc.ObjectToTyped(obj, typed.AllowDuplicates); err == nil {
			rt = typeRoot{schema: tv.Schema(), ref: tv.TypeRef()}
		}
	}
	m.typeRootsMu.Lock()
	defer m.typeRootsMu.Unlock()
	roots := map[schema.GroupVersionKind]typeRoot{}
	if old := m.typeRoots.Load(); old != nil {
		maps.Copy(roots, *old)
	}
	roots[gvk] = rt
	m.typeRoots.Store(&roots)
	return rt, rt.schema != nil
}

// skipped tells whether the member key of the object at path is left out of the comparison:
// apiVersion and kind at the top, metadata.managedFields.
func skipped(path fieldpath.Path, key []byte) bool {
	switch len(path) {
	case 0:
		return string(key) == `"apiVersion"` || string(key) == `"kind"`
	case 1:
		return path[0].FieldName != nil && *path[0].FieldName == "metadata" && string(key) == `"managedFields"`
	}
	return false
}

// comparableJSON is the JSON of live and obj for a comparison of the two, false if either does
// not marshal or holds U+FFFD: encoding/json writes every invalid UTF-8 sequence as the escape
// of U+FFFD (and a valid U+FFFD as itself), so two different invalid strings (a protobuf body is
// not checked for UTF-8) would look equal in the JSON while the library's typed comparison sees
// the change.
func comparableJSON(live, obj any) (a, b []byte, ok bool) {
	if a, ok = comparableOne(live); !ok {
		return nil, nil, false
	}
	if b, ok = comparableOne(obj); !ok {
		return nil, nil, false
	}
	return a, b, true
}

// comparableOne is comparableJSON's answer for one value.
func comparableOne(v any) ([]byte, bool) {
	raw, err := json.Marshal(v)
	if err != nil || compactjson.HasReplacementEscape(raw) {
		return nil, false
	}
	return raw, true
}
