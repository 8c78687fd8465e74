package fakeapiserver

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// An update of the main resource that changes only scalar values the writing manager alone
// already owns (a node lease's renewal: spec.renewTime) leaves every field set of the managed
// fields as it was; kube-apiserver's field manager then only moves the writer's entry to the
// current time (it records the changed fields under a placeholder manager, takes them from their
// owners, which is the writer itself, and merges them back into the writer's entry with a new
// time) and encodes the entries again in its order. scalarUpdate computes that outcome without
// the typed conversion of the two objects, when it can prove it is the library's:
//
//   - the objects' JSON (apiVersion and kind left out: the library sees the resource's on both;
//     metadata.managedFields left out: the library drops the new object's and handles the live
//     one's as checked below) has the same keys at the same places, the same lists byte for
//     byte, and scalars that differ keep their JSON kind (a string stays a string, an integer an
//     integer), so that the new object converts as the live one did and the comparison finds
//     only those scalars modified, nothing added or removed (a changed scalar under an atomic
//     map is reported at the map, which the ownership check below then refuses);
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
// managed fields mean that the write converted the live object without error.
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
	changed, ok := changedScalars(live, obj)
	if !ok || len(changed) == 0 {
		// An update that changes nothing keeps the entries' times but sorts them again; the
		// library's own path does that at the cost of a walk of objects that are equal.
		return false
	}
	gv := t.res.gv.String()
	sets := make([]*fieldpath.Set, len(base))
	writer, updaters := -1, 0
	seen := make(map[[3]string]bool, len(base))
	for i, e := range base {
		if e.APIVersion != gv || e.FieldsType != "FieldsV1" || e.FieldsV1 == nil ||
			(e.Operation != metav1.ManagedFieldsOperationUpdate && e.Operation != metav1.ManagedFieldsOperationApply) {
			return false
		}
		id := [3]string{e.Manager, string(e.Operation), e.Subresource}
		if seen[id] {
			return false
		}
		seen[id] = true
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil || set.Empty() {
			return false
		}
		if set.Has(managedFieldsPath) || !set.WithPrefix(managedFieldsPath[0]).WithPrefix(managedFieldsPath[1]).Empty() {
			return false
		}
		sets[i] = set
		if e.Operation == metav1.ManagedFieldsOperationUpdate {
			updaters++
			if e.Manager == t.manager && e.Subresource == "" {
				writer = i
			}
		}
	}
	if writer < 0 || updaters > maxUpdateManagers {
		return false
	}
	changedSet := fieldpath.NewSet(changed...)
	if !changedSet.Intersection(strippedFields).Empty() {
		return false
	}
	if filter := resetFields(t.res, "")[fieldpath.APIVersion(gv)]; filter != nil && !filter.Filter(changedSet).Equals(changedSet) {
		return false
	}
	for _, p := range changed {
		for i, set := range sets {
			if set.Has(p) != (i == writer) {
				return false
			}
		}
	}
	out := make([]metav1.ManagedFieldsEntry, len(base))
	for i, e := range base {
		raw, err := sets[i].ToJSON()
		if err != nil {
			return false
		}
		out[i] = e
		out[i].FieldsV1 = &metav1.FieldsV1{Raw: raw}
	}
	// The library stamps the writer's entry; trackFields then gives it the server's time and
	// sorts the entries by the times stored (stampManagedFields). Any time other than the stored
	// one marks it stamped.
	stale := metav1.NewTime(time.Time{})
	if t := out[writer].Time; t != nil && t.Equal(&stale) {
		stale = metav1.NewTime(time.Unix(0, 0))
	}
	out[writer].Time = &stale
	nm.SetManagedFields(out)
	scalarUpdates.Add(1)
	return true
}

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
// and obj, and false if anything else differs (see scalarUpdate) or either does not marshal.
func changedScalars(live, obj runtime.Object) ([]fieldpath.Path, bool) {
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
	if !d.value(a, b, nil) {
		return nil, false
	}
	return d.changed, true
}

// jsonDiff walks two documents of compact JSON, as encoding/json writes them, in step.
type jsonDiff struct {
	changed []fieldpath.Path
}

// value compares the values a and b (each exactly one value) at path.
func (d *jsonDiff) value(a, b []byte, path []string) bool {
	if bytes.Equal(a, b) {
		return true
	}
	ka, kb := jsonKind(a[0]), jsonKind(b[0])
	if ka != kb {
		return false
	}
	switch ka {
	case '{':
		return d.object(a, b, path)
	case '"', 't':
	case '0':
		if isInteger(a) != isInteger(b) {
			return false
		}
	default: // lists, null
		return false
	}
	p := make(fieldpath.Path, len(path))
	for i := range path {
		p[i] = fieldpath.PathElement{FieldName: &path[i]}
	}
	d.changed = append(d.changed, p)
	return true
}

// object compares two objects key by key; both list their keys in the same order when they have
// the same ones (struct fields in declaration order, map keys sorted).
func (d *jsonDiff) object(a, b []byte, path []string) bool {
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
		key, ok := unquote(ka)
		if !ok {
			return false
		}
		if !d.value(va, vb, append(path[:len(path):len(path)], key)) {
			return false
		}
	}
}

// skipped tells whether the member key of the object at path is left out of the comparison:
// apiVersion and kind at the top, metadata.managedFields.
func skipped(path []string, key []byte) bool {
	switch len(path) {
	case 0:
		return string(key) == `"apiVersion"` || string(key) == `"kind"`
	case 1:
		return path[0] == "metadata" && string(key) == `"managedFields"`
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
