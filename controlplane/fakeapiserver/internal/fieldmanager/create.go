package fieldmanager

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/compactjson"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/registry"
)

// The managed fields of a create are the library's comparison of an empty object with the new
// one: every field the new object sets, by path, under the writer's entry (less the metadata the
// library strips and the fields the resource resets). The paths depend on the object's shape
// alone: the names of its fields and its maps' keys, the keys of its associative lists'
// elements, the elements of its sets, and the kinds of its scalars (which the library's
// validation checks against the schema), but not the values of the other scalars. Creates of one
// shape (a fleet's pods from one template, a node's mirror pods, its kubelet's events) then share
// one computation: createShape writes the shape of the object's JSON, walked beside the schema as
// jsonDiff walks it, and createFields keeps the library's managed fields by the resource, the
// writer and the shape, for every later create of that shape. A create that sends managed fields
// (the library reads them), or whose JSON cannot be read beside the schema, takes the library's
// path every time.
//
// The shape writes, at each place: an object's members in order, each key as it is (a field's
// name or a map's key, both path elements) with its value's shape; an atomic list's elements'
// shapes in order (the library's comparison reports the list as one leaf, its validation walks
// the elements); an associative list's elements, each an object whose key fields are written as
// they are (the elements' path elements; equal keys make the library compare duplicates as a
// whole, which equal bytes then show); a set of scalars, or anything the schema does not describe,
// as it is; a scalar as its JSON kind, an integer apart from other numbers. Two objects of one
// shape thus convert to typed values with the same paths, and validate alike. encoding/json
// writes every invalid UTF-8 sequence as the escape of U+FFFD, so two keys that differ could look
// alike: JSON with that escape is not shaped. TestCreateFieldsMatchTheLibrary creates random
// objects with and without it and compares the stored bytes.

// createFields maps a create's key (createFieldsKey) to the managed fields the library gave it,
// before their times were stamped; createFieldsBytes counts the bytes of its keys, roughly
// (racing writers may each clear it).
var (
	createFields      sync.Map
	createFieldsBytes atomic.Int64
)

// maxCreateFieldsBytes bounds the bytes of createFields' keys (the entries they keep are about as
// large again): a pod's shape is one to a few kilobytes, so a few thousand shapes (a fleet's
// nodes each give their mirror pods an owner reference of their own).
const maxCreateFieldsBytes = 4 << 20

// CreatesShared counts the creates served from createFields, for the tests that check it serves
// them.
var CreatesShared atomic.Int64

// createFieldsKey is the key of a create of obj through t in createFields, and false where the
// create cannot share its managed fields (see createFields).
func (m *Manager) createFieldsKey(t Write, obj runtime.Object) (string, bool) {
	if !Shortcuts.On() || t.Subresource != "" || registry.MustMeta(obj).GetManagedFields() != nil {
		return "", false
	}
	root, ok := m.rootType(t.Resource)
	if !ok {
		return "", false
	}
	raw, err := json.Marshal(obj)
	if err != nil || compactjson.HasReplacementEscape(raw) {
		return "", false
	}
	gv := t.Resource.GV
	buf := make([]byte, 0, len(raw)/2+len(gv.Group)+len(gv.Version)+len(t.Resource.Name)+len(t.Manager)+4)
	// The group and version keep two resources of one plural name apart, should one be served.
	buf = append(buf, gv.Group...)
	buf = append(buf, '/')
	buf = append(buf, gv.Version...)
	buf = append(buf, '/')
	buf = append(buf, t.Resource.Name...)
	buf = append(buf, 0)
	buf = append(buf, t.Manager...)
	buf = append(buf, 0)
	buf, ok = shapeOf(buf, raw, root.schema, &root.ref, nil)
	if !ok {
		return "", false
	}
	return string(buf), true
}

// sharedCreateFields sets the managed fields of obj, a create through t, from createFields, and
// tells whether it did; the caller stamps them.
func sharedCreateFields(key string, obj runtime.Object) bool {
	v, ok := createFields.Load(key)
	if !ok {
		return false
	}
	registry.MustMeta(obj).SetManagedFields(copyEntries(v.([]metav1.ManagedFieldsEntry)))
	CreatesShared.Add(1)
	return true
}

// keepCreateFields keeps the managed fields the library gave a create of key.
func keepCreateFields(key string, entries []metav1.ManagedFieldsEntry) {
	if createFieldsBytes.Add(int64(len(key))) > maxCreateFieldsBytes {
		createFields.Clear()
		createFieldsBytes.Store(int64(len(key)))
	}
	createFields.Store(key, copyEntries(entries))
}

// copyEntries copies entries, with field sets of their own (the stamp changes the times of a
// list in place; a stored object's entries are never changed, but a kept list is shared by
// every create that reads it).
func copyEntries(entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	if entries == nil {
		return nil
	}
	out := make([]metav1.ManagedFieldsEntry, len(entries))
	for i, e := range entries {
		out[i] = e
		if e.FieldsV1 != nil {
			out[i].FieldsV1 = &metav1.FieldsV1{Raw: bytes.Clone(e.FieldsV1.Raw)}
		}
		if e.Time != nil {
			t := *e.Time
			out[i].Time = &t
		}
	}
	return out
}

// shapeOf appends the shape of the JSON value v, of type tr (nil if unknown), to buf; keep names
// the members of an object written as they are (an associative list element's key fields).
func shapeOf(buf, v []byte, schema *smdschema.Schema, tr *smdschema.TypeRef, keep []string) ([]byte, bool) {
	if len(v) == 0 {
		return buf, false
	}
	var atom smdschema.Atom
	known := false
	if tr != nil && schema != nil {
		atom, known = schema.Resolve(*tr)
	}
	switch compactjson.Kind(v[0]) {
	case '{':
		if !known || atom.Map == nil {
			return appendRaw(buf, v), true
		}
		m := atom.Map
		buf = append(buf, '{')
		for i := 1; ; {
			key, val, next, ok := compactjson.Member(v, i)
			if !ok {
				return buf, false
			}
			if key == nil {
				return append(buf, '}'), next == len(v)
			}
			i = next
			buf = append(buf, key...)
			buf = append(buf, ':')
			name, ok := compactjson.Unquote(key)
			if !ok {
				return buf, false
			}
			if isKept(keep, name) {
				buf = appendRaw(buf, val)
				continue
			}
			ft := m.ElementType
			if sf, ok := m.FindField(name); ok {
				ft = sf.Type
			}
			if buf, ok = shapeOf(buf, val, schema, &ft, nil); !ok {
				return buf, false
			}
			buf = append(buf, ',')
		}
	case '[':
		if !known || atom.List == nil {
			return appendRaw(buf, v), true
		}
		l := atom.List
		elems, ok := compactjson.Elements(v)
		if !ok {
			return buf, false
		}
		switch {
		case l.ElementRelationship == smdschema.Atomic:
			buf = append(buf, '[')
		case l.ElementRelationship == smdschema.Associative && len(l.Keys) > 0:
			buf = append(buf, '[', 'k')
		default:
			return appendRaw(buf, v), true
		}
		for _, e := range elems {
			var keys []string
			if l.ElementRelationship == smdschema.Associative {
				if e[0] != '{' {
					buf = appendRaw(buf, e)
					continue
				}
				keys = l.Keys
			}
			if buf, ok = shapeOf(buf, e, schema, &l.ElementType, keys); !ok {
				return buf, false
			}
			buf = append(buf, ',')
		}
		return append(buf, ']'), true
	case '"':
		return append(buf, 's'), true
	case 't':
		return append(buf, 'b'), true
	case 'n':
		return append(buf, 'n'), true
	default:
		if compactjson.IsInteger(v) {
			return append(buf, 'i'), true
		}
		return append(buf, 'f'), true
	}
}

// appendRaw appends v as it is, after a mark and its length, so that no other shape writes the
// same bytes.
func appendRaw(buf, v []byte) []byte {
	buf = append(buf, '=')
	buf = strconv.AppendInt(buf, int64(len(v)), 10)
	buf = append(buf, ':')
	return append(buf, v...)
}

func isKept(keep []string, name string) bool {
	for _, k := range keep {
		if k == name {
			return true
		}
	}
	return false
}
