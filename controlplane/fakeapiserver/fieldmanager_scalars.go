package fakeapiserver

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// An update that changes only scalar values the writing manager alone
// already owns (a node lease's renewal: spec.renewTime) leaves every field set of the managed
// fields as it was; kube-apiserver's field manager then only moves the writer's entry to the
// current time (it records the changed fields under a placeholder manager, takes them from their
// owners, which is the writer itself, and merges them back into the writer's entry with a new
// time) and encodes the entries again in its order. scalarUpdate computes that outcome without
// the typed conversion of the two objects, when it can prove it is the library's:
//
//   - the objects' JSON (apiVersion and kind left out: the library sees the resource's on both;
//     metadata.managedFields left out: the library drops the new object's and handles the live
//     one's as checked below) has the same keys at the same places, and scalars that differ keep
//     their JSON kind (a string stays a string, an integer an integer), so that the new object
//     converts as the live one did and the comparison finds only those scalars modified,
//     nothing added or removed (a changed scalar under an atomic map is reported at the map,
//     which the ownership check below then refuses); lists are the same byte for byte but for
//     two kinds the schema names (jsonDiff.list): an atomic list, which the comparison reports
//     modified as a whole, and an associative list with keys whose elements keep their keys and
//     order, inside which the comparison goes on by key (a node's heartbeat changes its
//     conditions' times);
//   - every changed path is in the writer's entry and in no other entry, is not one of the
//     metadata fields the library strips from the writer's fields, and is not a field the
//     resource resets (so that the writer records each of them);
//   - the managed fields are the live object's (the new object carries none, or the same
//     entries: the library uses the new object's when it has any), all decode (an entry that
//     does not empties them all in the library), each has a field set that is not empty (the
//     library drops an empty one), the resource's version (another version would need a
//     conversion), an identity of its own (a duplicate collapses in the library), and no field
//     under metadata.managedFields (the live object's managed fields count as removed by the
//     update), and there are at most as many Update entries as the library keeps.
//
// The field sets are the stored ones, which the write that stored them already reconciled with
// this server's schema, so that the library's reconciliation leaves them as they are; their
// managed fields mean that the write converted the live object without error. A write of the
// status subresource takes the same proof on what statusOnly keeps of the two objects
// (statusScalarUpdate).
func scalarUpdate(t target, live, obj runtime.Object) bool {
	if !fieldManagerShortcuts || t.subresource != "" || t.manager == "" {
		return false
	}
	lm, nm := mustMeta(live), mustMeta(obj)
	base := lm.GetManagedFields()
	if len(base) == 0 {
		return false
	}
	if sent := nm.GetManagedFields(); sent != nil {
		if !sameEntries(sent, base) {
			return false
		}
		// The library encodes the entries it decoded from the new object's.
		base = sent
	}
	// The comparison leaves the managed fields out; shallow copies without them spare their
	// encoding (the live object is the stored one, which others read: it is not changed).
	a, ok := shallowWithoutManagedFields(live)
	if !ok {
		return false
	}
	b, ok := shallowWithoutManagedFields(obj)
	if !ok {
		return false
	}
	changed, ok := changedScalars(t.res, a, b)
	if !ok || len(changed) == 0 {
		// An update that changes nothing keeps the entries' times but sorts them again; the
		// library's own path does that at the cost of a walk of objects that are equal.
		return false
	}
	out, ok := ownedScalars(t, base, changed)
	if !ok {
		return false
	}
	nm.SetManagedFields(out)
	scalarUpdates.Add(1)
	return true
}

// shallowWithoutManagedFields is a shallow copy of obj (a pointer to a struct with an ObjectMeta)
// without its managed fields; what else it holds it shares with obj.
func shallowWithoutManagedFields(obj runtime.Object) (any, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	m := c.Elem().FieldByName("ObjectMeta")
	if !m.IsValid() || m.Type() != reflect.TypeFor[metav1.ObjectMeta]() {
		return nil, false
	}
	m.Addr().Interface().(*metav1.ObjectMeta).ManagedFields = nil
	return c.Interface(), true
}

// statusScalarUpdate is scalarUpdate for a write of the status subresource, on the copies
// statusOnly made of the live object (liveCut) and the written one (objCut): it sets the
// managed fields of obj, the written object, and tells whether it did. What differs from an
// update of the main resource is what the library does for a subresource: it always takes the
// live object's managed fields (those the write sends are dropped), the writer's entry is the
// one of its manager for the subresource, and the fields the subresource resets are the spec's
// (statusOnly has already found everything but the status equal). The comparison leaves the
// managed fields out of the cuts' JSON, as it skips them anyway.
func statusScalarUpdate(t target, liveCut, objCut, obj runtime.Object) bool {
	if !fieldManagerShortcuts || t.subresource != "status" || t.manager == "" {
		return false
	}
	lm, nm := mustMeta(liveCut), mustMeta(objCut)
	base, sent := lm.GetManagedFields(), nm.GetManagedFields()
	if len(base) == 0 {
		return false
	}
	lm.SetManagedFields(nil)
	nm.SetManagedFields(nil)
	changed, ok := []fieldpath.Path(nil), sameKeys(reflect.ValueOf(liveCut), reflect.ValueOf(objCut))
	if ok {
		changed, ok = changedScalars(t.res, liveCut, objCut)
	}
	lm.SetManagedFields(base)
	nm.SetManagedFields(sent)
	if !ok || len(changed) == 0 {
		return false
	}
	out, ok := ownedScalars(t, base, changed)
	if !ok {
		return false
	}
	mustMeta(obj).SetManagedFields(out)
	scalarUpdates.Add(1)
	return true
}

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
		if hasOwnCodec(a.Type()) {
			return a.IsZero() == b.IsZero()
		}
		for _, f := range fieldsOf(a.Type()) {
			if f.skip || f.refuse {
				continue
			}
			fa, fb := a.Field(f.index), b.Field(f.index)
			if f.omitEmpty && fa.IsZero() != fb.IsZero() {
				return false
			}
			if !sameKeys(fa, fb) {
				return false
			}
		}
	}
	return true
}

// ownedScalars returns the managed fields the library makes of base for a write by t.manager
// (through t.subresource) that modifies the fields at the paths changed and nothing else, and
// false where it cannot prove that (see scalarUpdate): the entries as they were, the writer's
// marked for stampManagedFields.
func ownedScalars(t target, base []metav1.ManagedFieldsEntry, changed []fieldpath.Path) ([]metav1.ManagedFieldsEntry, bool) {
	gv := t.res.gv.String()
	sets := make([]*fieldpath.Set, len(base))
	writer, updaters := -1, 0
	seen := make(map[[3]string]bool, len(base))
	for i, e := range base {
		if e.APIVersion != gv || e.FieldsType != "FieldsV1" || e.FieldsV1 == nil ||
			(e.Operation != metav1.ManagedFieldsOperationUpdate && e.Operation != metav1.ManagedFieldsOperationApply) {
			return nil, false
		}
		id := [3]string{e.Manager, string(e.Operation), e.Subresource}
		if seen[id] {
			return nil, false
		}
		seen[id] = true
		set, ok := decodedSet(e.FieldsV1.Raw)
		if !ok {
			return nil, false
		}
		sets[i] = set
		if e.Operation == metav1.ManagedFieldsOperationUpdate {
			updaters++
			if e.Manager == t.manager && e.Subresource == t.subresource {
				writer = i
			}
		}
	}
	if writer < 0 || updaters > maxUpdateManagers {
		return nil, false
	}
	changedSet := fieldpath.NewSet(changed...)
	if !changedSet.Intersection(strippedFields).Empty() {
		return nil, false
	}
	if filter := resetFields(t.res, t.subresource)[fieldpath.APIVersion(gv)]; filter != nil && !filter.Filter(changedSet).Equals(changedSet) {
		return nil, false
	}
	for _, p := range changed {
		for i, set := range sets {
			if set.Has(p) != (i == writer) {
				return nil, false
			}
		}
	}
	out := make([]metav1.ManagedFieldsEntry, len(base))
	for i, e := range base {
		// The set's encoding: the bytes it was read from, when they are what the library
		// writes for it (decodedSet checked), in an array of their own.
		out[i] = e
		out[i].FieldsV1 = &metav1.FieldsV1{Raw: bytes.Clone(e.FieldsV1.Raw)}
	}
	// The library stamps the writer's entry; trackFields then gives it the server's time and
	// sorts the entries by the times stored (stampManagedFields). Any time other than the stored
	// one marks it stamped.
	stale := metav1.NewTime(time.Time{})
	if t := out[writer].Time; t != nil && t.Equal(&stale) {
		stale = metav1.NewTime(time.Unix(0, 0))
	}
	out[writer].Time = &stale
	return out, true
}

// decodedSet is the field set raw encodes, if it decodes, is not empty (the library drops an
// empty one), names nothing under metadata.managedFields (see scalarUpdate), and is encoded as
// the library encodes it (so that the entry keeps its bytes): false otherwise. The answers are
// kept (decodedSets) by the bytes, which repeat from write to write of an object and across
// objects (every node lease's entry is the same); callers only read the sets.
func decodedSet(raw []byte) (*fieldpath.Set, bool) {
	if d, ok := decodedSets.Load(string(raw)); ok {
		set := d.(*fieldpath.Set)
		return set, set != nil
	}
	set := &fieldpath.Set{}
	ok := set.FromJSON(bytes.NewReader(raw)) == nil && !set.Empty() &&
		!set.Has(managedFieldsPath) && set.WithPrefix(managedFieldsPath[0]).WithPrefix(managedFieldsPath[1]).Empty()
	if ok {
		enc, err := set.ToJSON()
		ok = err == nil && bytes.Equal(enc, raw)
	}
	if !ok {
		set = nil
	}
	if decodedSetCount.Add(1) > maxDecodedSets {
		// A bound on the memory: every pod's entries differ (its UID is in them), so a fleet's
		// would grow the cache without end.
		decodedSets.Clear()
		decodedSetCount.Store(1)
	}
	decodedSets.Store(string(raw), set)
	return set, ok
}

// decodedSets maps the bytes of a field set to what decodedSet found; decodedSetCount counts its
// entries, roughly (racing writers may each clear it).
var (
	decodedSets     sync.Map
	decodedSetCount atomic.Int64
)

// maxDecodedSets bounds decodedSets.
const maxDecodedSets = 1024

// scalarUpdates counts the updates scalarUpdate served, for the tests that check it serves them.
var scalarUpdates atomic.Int64

// maxUpdateManagers is the number of Update entries kube-apiserver's field manager keeps before
// it merges the oldest into one.
const maxUpdateManagers = 10

// managedFieldsPath is metadata.managedFields, which no entry scalarUpdate serves may own; built
// once, as every lease renewal asks.
var managedFieldsPath = fieldpath.MakePathOrDie("metadata", "managedFields")

// strippedFields are the fields the library never records under the writer of an update.
var strippedFields = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

// sortManagedFields orders entries as the library encodes them: by operation, then by the
// second of their time, then by manager, version and subresource.
func sortManagedFields(entries []metav1.ManagedFieldsEntry) {
	sort.Slice(entries, func(i, j int) bool {
		p, q := entries[i], entries[j]
		if p.Operation != q.Operation {
			return p.Operation < q.Operation
		}
		var ps, qs int64
		if p.Time != nil {
			ps = p.Time.Unix()
		}
		if q.Time != nil {
			qs = q.Time.Unix()
		}
		if ps != qs {
			return ps < qs
		}
		if p.Manager != q.Manager {
			return p.Manager < q.Manager
		}
		if p.APIVersion != q.APIVersion {
			return p.APIVersion < q.APIVersion
		}
		return p.Subresource < q.Subresource
	})
}

// sameEntries tells whether two lists of managed fields entries are the same, times compared as
// instants.
func sameEntries(a, b []metav1.ManagedFieldsEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Manager != y.Manager || x.Operation != y.Operation || x.APIVersion != y.APIVersion ||
			x.FieldsType != y.FieldsType || x.Subresource != y.Subresource ||
			(x.Time == nil) != (y.Time == nil) || (x.Time != nil && !x.Time.Equal(y.Time)) ||
			(x.FieldsV1 == nil) != (y.FieldsV1 == nil) || (x.FieldsV1 != nil && !bytes.Equal(x.FieldsV1.Raw, y.FieldsV1.Raw)) {
			return false
		}
	}
	return true
}

// changedScalars returns the paths of the scalars whose values differ between the JSON of live
// and obj, and of the atomic lists that differ, and false if anything else differs (see
// scalarUpdate and typedLists) or either does not marshal.
func changedScalars(res *resource, live, obj any) ([]fieldpath.Path, bool) {
	a, err := json.Marshal(live)
	if err != nil {
		return nil, false
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, false
	}
	// encoding/json writes every invalid UTF-8 sequence as the escape of U+FFFD (and a valid
	// U+FFFD as itself), so two different invalid strings (a protobuf body is not checked for
	// UTF-8) would look equal here while the library's typed comparison sees the change.
	if bytes.Contains(a, []byte(`\ufffd`)) || bytes.Contains(b, []byte(`\ufffd`)) {
		return nil, false
	}
	d := jsonDiff{}
	var root *smdschema.TypeRef
	if r, ok := rootType(res); ok {
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
}

// value compares the values a and b (each exactly one value) at path, whose type is tr (nil if
// unknown).
func (d *jsonDiff) value(a, b []byte, path fieldpath.Path, tr *smdschema.TypeRef) bool {
	if bytes.Equal(a, b) {
		return true
	}
	ka, kb := jsonKind(a[0]), jsonKind(b[0])
	if ka != kb {
		return false
	}
	switch ka {
	case '{':
		return d.object(a, b, path, tr)
	case '[':
		return d.list(a, b, path, tr)
	case '"', 't':
	case '0':
		if isInteger(a) != isInteger(b) {
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
			if ka, va, i, ok = member(a, i); !ok {
				return false
			}
			if ka == nil || !skipped(path, ka) {
				break
			}
		}
		for {
			if kb, vb, j, ok = member(b, j); !ok {
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
		key, ok := unquote(ka)
		if !ok {
			return false
		}
		// The type of the member as the typed comparison finds it (visitMapItem): the
		// struct's field of that name, else the map's element type.
		var child *smdschema.TypeRef
		if m != nil {
			ft := m.ElementType
			if sf, ok := m.FindField(key); ok {
				ft = sf.Type
			}
			child = &ft
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
	ea, ok := elements(a)
	if !ok || len(ea) == 0 {
		return false
	}
	eb, ok := elements(b)
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
			va, ok := memberValue(ea[i], name)
			if !ok {
				return false
			}
			vb, ok := memberValue(eb[i], name)
			if !ok || !bytes.Equal(va, vb) {
				return false
			}
			if c := jsonKind(va[0]); c != '"' && c != 't' && (c != '0' || !isInteger(va)) {
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
		switch r := raw[i]; jsonKind(r[0]) {
		case '"':
			s, ok := unquote(r)
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

// elements splits a JSON list into its elements.
func elements(s []byte) ([][]byte, bool) {
	if len(s) < 2 || s[0] != '[' {
		return nil, false
	}
	var out [][]byte
	i := 1
	if s[i] == ']' {
		return out, i == len(s)-1
	}
	for {
		end, ok := skipValue(s, i)
		if !ok || end >= len(s) {
			return nil, false
		}
		out = append(out, s[i:end])
		switch s[end] {
		case ',':
			i = end + 1
		case ']':
			return out, end == len(s)-1
		default:
			return nil, false
		}
	}
}

// memberValue is the value of the member name of the JSON object s, if it has one.
func memberValue(s []byte, name string) ([]byte, bool) {
	for i := 1; ; {
		k, v, next, ok := member(s, i)
		if !ok || k == nil {
			return nil, false
		}
		if len(k) == len(name)+2 && string(k[1:len(k)-1]) == name {
			return v, true
		}
		i = next
	}
}

// typeRoot is the schema of a resource's objects, as the type converter has it.
type typeRoot struct {
	schema *smdschema.Schema
	ref    smdschema.TypeRef
}

// typeRoots caches rootType's answers by resource.
var typeRoots sync.Map

// rootType is the schema and type of res's objects: those of the typed value the type converter
// makes of an empty object, so that the comparison reads the schema the library's walk reads.
func rootType(res *resource) (typeRoot, bool) {
	if r, ok := typeRoots.Load(res); ok {
		rt := r.(typeRoot)
		return rt, rt.schema != nil
	}
	var rt typeRoot
	if tc, err := typeConverter(); err == nil {
		obj := res.newObj()
		obj.GetObjectKind().SetGroupVersionKind(res.gvk())
		if tv, err := tc.ObjectToTyped(obj, typed.AllowDuplicates); err == nil {
			rt = typeRoot{schema: tv.Schema(), ref: tv.TypeRef()}
		}
	}
	typeRoots.Store(res, rt)
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

// member reads the member of the object s that starts at i (just past '{' or a ','): its quoted
// key, its value and the index past it. A nil key means the object ended.
func member(s []byte, i int) (key, val []byte, next int, ok bool) {
	if i < len(s) && s[i] == ',' {
		i++
	}
	if i >= len(s) {
		return nil, nil, i, false
	}
	if s[i] == '}' {
		return nil, nil, i + 1, true
	}
	end, ok := skipValue(s, i)
	if !ok || end >= len(s) || s[end] != ':' || s[i] != '"' {
		return nil, nil, i, false
	}
	key = s[i:end]
	vend, ok := skipValue(s, end+1)
	if !ok {
		return nil, nil, i, false
	}
	return key, s[end+1 : vend], vend, true
}

// skipValue returns the index past the value of compact JSON that starts at i.
func skipValue(s []byte, i int) (int, bool) {
	if i >= len(s) {
		return i, false
	}
	switch s[i] {
	case '"':
		for k := i + 1; k < len(s); k++ {
			switch s[k] {
			case '\\':
				k++
			case '"':
				return k + 1, true
			}
		}
		return len(s), false
	case '{', '[':
		depth := 0
		for k := i; k < len(s); k++ {
			switch s[k] {
			case '"':
				end, ok := skipValue(s, k)
				if !ok {
					return end, false
				}
				k = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return k + 1, true
				}
			}
		}
		return len(s), false
	}
	k := i
	for k < len(s) && !strings.ContainsRune(",}]:", rune(s[k])) {
		k++
	}
	return k, k > i
}

// jsonKind is the kind of the value that starts with c: '{', '[', '"', 't' (a boolean), 'n'
// (null) or '0' (a number).
func jsonKind(c byte) byte {
	switch c {
	case '{', '[', '"', 'n':
		return c
	case 't', 'f':
		return 't'
	}
	return '0'
}

// isInteger tells whether a JSON number has no fraction or exponent.
func isInteger(n []byte) bool {
	return !bytes.ContainsAny(n, ".eE")
}

// unquote is the string of a quoted JSON key.
func unquote(q []byte) (string, bool) {
	if bytes.IndexByte(q, '\\') < 0 {
		return string(q[1 : len(q)-1]), true
	}
	var s string
	if err := json.Unmarshal(q, &s); err != nil {
		return "", false
	}
	return s, true
}
