package fieldmanager

import (
	"bytes"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/compactjson"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/registry"
)

// A status write that changes which fields are set (a pod's from Pending to Running: its IPs,
// start time and a container's running state appear, its waiting state goes) takes the
// library's whole path even when the live cut's typed value is kept (keptTyped): the written
// cut is converted to a typed value, validated, compared with the live one, and the comparison
// decides the managed fields. statusFieldsUpdate computes that comparison from the two cuts'
// JSON walked beside the schema (jsonDiff with fields set), as statusScalarUpdate does for a
// write that changes only values, and the managed fields from it as the library does:
//
//   - the typed comparison reports a field present on one side only as added or removed, with
//     every map member and list element under it, down to the leaves (an empty or null map or
//     list, an atomic one and a scalar are leaves); a field present on both sides is modified
//     where it is a leaf that differs, and is walked into otherwise (associative lists with
//     keys pair their elements by key, wherever they are); jsonDiff's fields walk reports the
//     same paths, and refuses, leaving them to the library, what it does not name as surely as
//     the library does: a value whose JSON kind changes (null against a value included; a
//     refusal to be safe more than needed: the typed value of a struct reads a zero time as
//     null, as its JSON does, and a null map or list is compared as a leaf), a set of
//     scalars, an associative list with an element that lacks a key or repeats one (the
//     library compares duplicates as a whole), a member or scalar the schema does not type
//     as the JSON has it (the library's validation of the written cut would fail);
//   - the library (merge.Updater with the managed fields updater around it) takes the fields
//     added and modified, and the fields removed, from every entry, the writer's included,
//     drops entries left empty, records the fields added and modified (without those the
//     subresource resets or the library strips from a writer) under the writer's Update entry
//     for the subresource, joined with what that entry kept, and moves that entry's time when
//     it recorded any; ownedFields does the same on the decoded sets, under the same
//     conditions as ownedScalars (every entry decodes, is of the resource's version, has an
//     identity of its own, names nothing under metadata.managedFields), when every path
//     reported is under status (a status write's cut differs nowhere else) and there are at
//     most as many Update entries afterwards as the library keeps.
//
// A write that changes nothing, or that jsonDiff refuses, takes the library's path.
// TestWrittenCutsMatchTheLibrary makes random status writes that change field sets with and
// without it and compares the stored bytes after every write; TestWrittenCutTable the cases
// named above.

// WrittenCutShortcut lets Track serve status writes that change field sets with
// statusFieldsUpdate; the tests of keptTyped turn it off to reach the library's path.
var WrittenCutShortcut Switch

// FieldsUpdates counts the writes statusFieldsUpdate served, for the tests that check it serves
// them.
var FieldsUpdates atomic.Int64

// statusFieldsUpdate sets the managed fields of obj, the written object of a status write, from
// the comparison of liveCut and objCut (statusOnly's cuts), and tells whether it did (see
// WrittenCutShortcut).
func (m *Manager) statusFieldsUpdate(t Write, liveCut, objCut, obj runtime.Object) bool {
	if !Shortcuts.On() || !WrittenCutShortcut.On() || t.Subresource != "status" || t.Manager == "" {
		return false
	}
	lm, nm := registry.MustMeta(liveCut), registry.MustMeta(objCut)
	base, sent := lm.GetManagedFields(), nm.GetManagedFields()
	if len(base) == 0 {
		return false
	}
	lm.SetManagedFields(nil)
	nm.SetManagedFields(nil)
	d, ok := m.comparedFields(t.Resource, liveCut, objCut)
	lm.SetManagedFields(base)
	nm.SetManagedFields(sent)
	if !ok {
		return false
	}
	out, ok := ownedFields(t, base, d)
	if !ok {
		return false
	}
	registry.MustMeta(obj).SetManagedFields(out)
	FieldsUpdates.Add(1)
	return true
}

// comparedFields is the typed comparison of live and obj computed from their JSON (see
// statusFieldsUpdate), false where it cannot be.
func (m *Manager) comparedFields(res *Resource, live, obj any) (*jsonDiff, bool) {
	a, b, ok := comparableJSON(live, obj)
	if !ok {
		return nil, false
	}
	r, ok := m.rootType(res)
	if !ok {
		return nil, false
	}
	stack := memberStacks.Get().(*[]jsonMember)
	d := &jsonDiff{schema: r.schema, fields: true, members: (*stack)[:0], types: &m.fieldTypes}
	ok = d.value(a, b, nil, &r.ref)
	// The array back, without the JSON its members point into (it may have grown).
	ms := d.members[:cap(d.members)]
	clear(ms)
	*stack, d.members = ms[:0], nil
	memberStacks.Put(stack)
	if !ok {
		return nil, false
	}
	return d, true
}

// memberStacks are jsonDiff.members' arrays, reused from one status write to the next: a
// fleet's status writes allocated a list of members for every object of every write they
// compared, 4% of the bytes a 1,000-node fleet allocated.
var memberStacks = sync.Pool{New: func() any { return new([]jsonMember) }}

// resolve is the atom tr names, false if there is none or it has no member.
func (d *jsonDiff) resolve(tr *smdschema.TypeRef) (smdschema.Atom, bool) {
	if tr == nil || d.schema == nil {
		return smdschema.Atom{}, false
	}
	atom, ok := d.schema.Resolve(*tr)
	return atom, ok && (atom.Map != nil || atom.List != nil || atom.Scalar != nil)
}

// childType is the type of the member key of a map of type m, as the typed comparison finds it
// (visitMapItem): the struct's field of that name, else the map's element type. It points into
// the schema, which nothing changes, rather than to a copy made for every member; cache holds
// the fields' types of m's schema by map (Manager.fieldTypes).
func childType(cache *sync.Map, m *smdschema.Map, key string) *smdschema.TypeRef {
	types, ok := cache.Load(m)
	if !ok {
		byName := make(map[string]*smdschema.TypeRef, len(m.Fields))
		for i := range m.Fields {
			byName[m.Fields[i].Name] = &m.Fields[i].Type
		}
		types, _ = cache.LoadOrStore(m, byName)
	}
	if ft, ok := types.(map[string]*smdschema.TypeRef)[key]; ok {
		return ft
	}
	return &m.ElementType
}

// childPath is path with pe appended, in an array of its own.
func childPath(path fieldpath.Path, pe fieldpath.PathElement) fieldpath.Path {
	return append(path[:len(path):len(path)], pe)
}

// jsonMember is one member of a JSON object: its quoted key and its value.
type jsonMember struct {
	raw, val []byte
}

// membersOf lists the members of the JSON object s at path, but those skipped, on top of
// d.members: the caller drops them (d.members cut back to its length before the call) once it
// is done with them, so that the walk's lists of members share one array, used as a stack. An
// array grown by a call leaves the lists made before it in the old one, which they keep.
func (d *jsonDiff) membersOf(s []byte, path fieldpath.Path) ([]jsonMember, bool) {
	lo := len(d.members)
	for i := 1; ; {
		k, v, next, ok := compactjson.Member(s, i)
		if !ok {
			return nil, false
		}
		if k == nil {
			return d.members[lo:len(d.members):len(d.members)], true
		}
		i = next
		if skipped(path, k) {
			continue
		}
		d.members = append(d.members, jsonMember{raw: k, val: v})
	}
}

// memberPath is the path and type of the member whose quoted key is raw, of a map of type m at
// path; made only for the members that differ.
func (d *jsonDiff) memberPath(m *smdschema.Map, path fieldpath.Path, raw []byte) (fieldpath.Path, *smdschema.TypeRef, bool) {
	key, ok := compactjson.Unquote(raw)
	if !ok {
		return nil, nil, false
	}
	return childPath(path, fieldpath.PathElement{FieldName: &key}), childType(d.types, m, key), true
}

// objectFields compares two JSON objects that differ, of type tr, members added and removed
// included: an atomic map is one leaf; the members of any other are paired by key.
func (d *jsonDiff) objectFields(a, b []byte, path fieldpath.Path, tr *smdschema.TypeRef) bool {
	defer d.dropMembers(len(d.members))
	atom, ok := d.resolve(tr)
	if !ok || atom.Map == nil {
		return false
	}
	m := atom.Map
	if m.ElementRelationship == smdschema.Atomic {
		d.changed = append(d.changed, path)
		return true
	}
	ma, ok := d.membersOf(a, path)
	if !ok {
		return false
	}
	mb, ok := d.membersOf(b, path)
	if !ok {
		return false
	}
	find := func(ms []jsonMember, key []byte) ([]byte, bool) {
		for _, x := range ms {
			if bytes.Equal(x.raw, key) {
				return x.val, true
			}
		}
		return nil, false
	}
	for k, x := range ma {
		// Both list their common keys in the same order (struct fields in declaration order,
		// map keys sorted): the member at the same index is the likely pair.
		vb, ok := []byte(nil), false
		if k < len(mb) && bytes.Equal(mb[k].raw, x.raw) {
			vb, ok = mb[k].val, true
		} else {
			vb, ok = find(mb, x.raw)
		}
		if ok && bytes.Equal(x.val, vb) {
			continue
		}
		p, ft, valid := d.memberPath(m, path, x.raw)
		switch {
		case !valid:
			return false
		case !ok:
			if !d.subtree(x.val, p, ft, &d.removed) {
				return false
			}
		case !d.value(x.val, vb, p, ft):
			return false
		}
	}
	if len(ma) == len(mb) && d.sameKeysAt(ma, mb) {
		return true
	}
	for _, y := range mb {
		if _, ok := find(ma, y.raw); ok {
			continue
		}
		p, ft, valid := d.memberPath(m, path, y.raw)
		if !valid || !d.subtree(y.val, p, ft, &d.added) {
			return false
		}
	}
	return true
}

// dropMembers cuts d.members back to n members, dropping the lists membersOf made since it had
// n.
func (d *jsonDiff) dropMembers(n int) { d.members = d.members[:n] }

// sameKeysAt tells whether ma and mb have the same keys at the same indexes.
func (d *jsonDiff) sameKeysAt(ma, mb []jsonMember) bool {
	for k := range ma {
		if !bytes.Equal(ma[k].raw, mb[k].raw) {
			return false
		}
	}
	return true
}

// keyedElement is an element of an associative list with keys: its path element, its keys'
// bytes and its value.
type keyedElement struct {
	pe  fieldpath.PathElement
	id  string
	val []byte
}

// keyedElements names the elements of an associative list with keys by their keys, false if one
// is not an object, lacks a key field, has one that is not a string, an integer or a boolean,
// or repeats another's keys.
func keyedElements(elems [][]byte, l *smdschema.List) ([]keyedElement, bool) {
	out := make([]keyedElement, 0, len(elems))
	seen := make(map[string]bool, len(elems))
	keys := make([][]byte, len(l.Keys))
	for _, e := range elems {
		if e[0] != '{' {
			return nil, false
		}
		id := make([]byte, 0, 32)
		for k, name := range l.Keys {
			v, ok := compactjson.MemberValue(e, name)
			if !ok {
				return nil, false
			}
			if c := compactjson.Kind(v[0]); c != '"' && c != 't' && (c != '0' || !compactjson.IsInteger(v)) {
				return nil, false
			}
			keys[k] = v
			id = append(append(id, v...), 0)
		}
		if seen[string(id)] {
			return nil, false
		}
		seen[string(id)] = true
		pe, ok := keyElement(l.Keys, keys)
		if !ok {
			return nil, false
		}
		out = append(out, keyedElement{pe: pe, id: string(id), val: e})
	}
	return out, true
}

// listFields compares two JSON lists that differ, of type tr, elements added and removed
// included: an atomic list is one leaf; the elements of an associative list with keys are
// paired by their keys; anything else is refused.
func (d *jsonDiff) listFields(a, b []byte, path fieldpath.Path, tr *smdschema.TypeRef) bool {
	atom, ok := d.resolve(tr)
	if !ok || atom.List == nil {
		return false
	}
	l := atom.List
	ea, ok := compactjson.Elements(a)
	if !ok {
		return false
	}
	eb, ok := compactjson.Elements(b)
	if !ok {
		return false
	}
	if l.ElementRelationship == smdschema.Atomic {
		d.changed = append(d.changed, path)
		return true
	}
	if l.ElementRelationship != smdschema.Associative || len(l.Keys) == 0 {
		return false
	}
	ka, ok := keyedElements(ea, l)
	if !ok {
		return false
	}
	kb, ok := keyedElements(eb, l)
	if !ok {
		return false
	}
	find := func(es []keyedElement, id string) ([]byte, bool) {
		for _, e := range es {
			if e.id == id {
				return e.val, true
			}
		}
		return nil, false
	}
	for _, x := range ka {
		p := childPath(path, x.pe)
		vb, ok := find(kb, x.id)
		switch {
		case !ok:
			if !d.subtree(x.val, p, &l.ElementType, &d.removed) {
				return false
			}
		case bytes.Equal(x.val, vb):
		case !d.value(x.val, vb, p, &l.ElementType):
			return false
		}
	}
	for _, y := range kb {
		if _, ok := find(ka, y.id); ok {
			continue
		}
		if !d.subtree(y.val, childPath(path, y.pe), &l.ElementType, &d.added) {
			return false
		}
	}
	return true
}

// subtree adds to into the paths the typed comparison reports for the value v, of type tr, at
// path when the other side has nothing there: path itself and, for a map or list that is
// neither empty, null nor atomic, those of every member or element under it. It is false where
// the library's validation would refuse v or jsonDiff cannot name what the library names.
func (d *jsonDiff) subtree(v []byte, path fieldpath.Path, tr *smdschema.TypeRef, into *[]fieldpath.Path) bool {
	atom, ok := d.resolve(tr)
	if !ok {
		return false
	}
	*into = append(*into, path)
	switch compactjson.Kind(v[0]) {
	case 'n':
		// A null map, list or scalar is a leaf.
		return true
	case '{':
		if atom.Map == nil {
			return false
		}
		if atom.Map.ElementRelationship == smdschema.Atomic {
			return true
		}
		defer d.dropMembers(len(d.members))
		ms, ok := d.membersOf(v, path)
		if !ok {
			return false
		}
		for _, x := range ms {
			p, ft, valid := d.memberPath(atom.Map, path, x.raw)
			if !valid || !d.subtree(x.val, p, ft, into) {
				return false
			}
		}
		return true
	case '[':
		if atom.List == nil {
			return false
		}
		l := atom.List
		es, ok := compactjson.Elements(v)
		if !ok {
			return false
		}
		if l.ElementRelationship == smdschema.Atomic || len(es) == 0 {
			return true
		}
		if l.ElementRelationship != smdschema.Associative || len(l.Keys) == 0 {
			return false
		}
		ks, ok := keyedElements(es, l)
		if !ok {
			return false
		}
		for _, e := range ks {
			if !d.subtree(e.val, childPath(path, e.pe), &l.ElementType, into) {
				return false
			}
		}
		return true
	}
	if atom.Scalar == nil {
		return false
	}
	switch k := compactjson.Kind(v[0]); *atom.Scalar {
	case smdschema.String:
		return k == '"'
	case smdschema.Boolean:
		return k == 't'
	case smdschema.Numeric:
		return k == '0'
	case smdschema.Untyped:
		return true
	}
	return false
}

// ownedFields returns the managed fields the library makes of base for a status write by
// t.Manager whose comparison is d's, and false where it cannot prove that (see
// statusFieldsUpdate): the entries with the fields taken and recorded, the writer's marked for
// stampManagedFields where it recorded any.
func ownedFields(t Write, base []metav1.ManagedFieldsEntry, d *jsonDiff) ([]metav1.ManagedFieldsEntry, bool) {
	if len(d.changed)+len(d.added)+len(d.removed) == 0 {
		return nil, false
	}
	for _, paths := range [][]fieldpath.Path{d.changed, d.added, d.removed} {
		for _, p := range paths {
			if len(p) == 0 || p[0].FieldName == nil || *p[0].FieldName != "status" {
				return nil, false
			}
		}
	}
	gv := t.Resource.GV.String()
	sets, writer, updaters, ok := decodedEntries(t, base)
	if !ok {
		return nil, false
	}
	// The comparison without the fields the subresource resets (the library filters it before
	// anything reads it); what the write records: the fields added and modified, but those
	// stripped from a writer.
	taken := fieldpath.NewSet(append(d.changed[:len(d.changed):len(d.changed)], d.added...)...)
	removed := fieldpath.NewSet(d.removed...)
	if filter := resetFilter(t.Resource, t.Subresource); filter != nil {
		taken, removed = filter.Filter(taken), filter.Filter(removed)
	}
	self := taken.Difference(strippedFields)
	// touches tells whether a set may have a member the write takes or removes (the paths
	// before the filter: a superset); one that has none comes out of the differences as it
	// was, and is not copied.
	touches := func(set *fieldpath.Set) bool {
		for _, paths := range [][]fieldpath.Path{d.changed, d.added, d.removed} {
			for _, p := range paths {
				if set.Has(p) {
					return true
				}
			}
		}
		return false
	}
	out := make([]metav1.ManagedFieldsEntry, 0, len(base)+1)
	stale := metav1.NewTime(time.Time{})
	for i, e := range base {
		set := sets[i]
		if touches(set) {
			set = set.Difference(taken).Difference(removed)
		}
		if i == writer && !self.Empty() {
			set = self.Union(set)
		}
		if set.Empty() {
			if e.Operation == metav1.ManagedFieldsOperationUpdate {
				updaters--
			}
			continue
		}
		e.FieldsV1 = &metav1.FieldsV1{Raw: bytes.Clone(e.FieldsV1.Raw)}
		if !set.Equals(sets[i]) {
			raw, err := set.ToJSON()
			if err != nil {
				return nil, false
			}
			e.FieldsV1.Raw = raw
		}
		if i == writer && !self.Empty() {
			// The library stamps the writer's entry; any time other than the stored one
			// marks it stamped for stampManagedFields.
			if e.Time != nil && e.Time.Equal(&stale) {
				e.Time = &metav1.Time{Time: time.Unix(0, 0)}
			} else {
				e.Time = &stale
			}
		}
		out = append(out, e)
	}
	if writer < 0 && !self.Empty() {
		raw, err := self.ToJSON()
		if err != nil {
			return nil, false
		}
		updaters++
		out = append(out, metav1.ManagedFieldsEntry{Manager: t.Manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: gv,
			Time: &stale, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}, Subresource: t.Subresource})
	}
	if updaters > maxUpdateManagers || len(out) == 0 {
		return nil, false
	}
	sortManagedFields(out)
	return out, true
}

// resetFilters caches resetFilter's answers by resetFilterKey.
var resetFilters sync.Map

// resetFilterKey is all resetFields reads of a resource and subresource: the group and version
// (two resources of one plural name, core and events.k8s.io events, stay apart), the name, the
// subresource, and whether the resource has a status subresource. The cache is bounded by the
// served resources and their subresources.
type resetFilterKey struct {
	gv          schema.GroupVersion
	name        string
	subresource string
	hasStatus   bool
}

// resetFilter is the filter of the fields t.Resource's subresource resets in its version (see
// resetFields), built once: the library's field manager reads the same one.
func resetFilter(res *Resource, subresource string) fieldpath.Filter {
	key := resetFilterKey{gv: res.GV, name: res.Name, subresource: subresource, hasStatus: res.hasStatus()}
	if f, ok := resetFilters.Load(key); ok {
		filter, _ := f.(fieldpath.Filter)
		return filter
	}
	filter := resetFields(res, subresource)[fieldpath.APIVersion(res.GV.String())]
	resetFilters.Store(key, filter)
	return filter
}
