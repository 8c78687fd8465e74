package fieldmanager

import (
	"bytes"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/compactjson"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/registry"
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
//
// liveRaw is live's stored encoding, or nil: the comparison reads it in place of live's JSON
// (liveJSON), which spares one of the two encodings.
func (m *Manager) scalarUpdate(t Write, live runtime.Object, liveRaw []byte, obj runtime.Object) bool {
	if !Shortcuts.On() || t.Subresource != "" || t.Manager == "" {
		return false
	}
	lm, nm := registry.MustMeta(live), registry.MustMeta(obj)
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
	a, ok := liveJSON(live, liveRaw)
	if !ok {
		return false
	}
	o, ok := shallowWithoutManagedFields(obj)
	if !ok {
		return false
	}
	b, ok := comparableOne(o)
	if !ok {
		return false
	}
	changed, ok := m.changedScalarsJSON(t.Resource, a, b)
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
	ScalarUpdates.Add(1)
	return true
}

// liveJSON is the JSON scalarUpdate compares for the stored object live: its stored encoding
// raw where the store keeps one without the escape of U+FFFD (see comparableJSON), else that of
// a shallow copy of live without its managed fields. The two differ only in
// metadata.managedFields, which the comparison skips (jsonDiff.object and skipped): the stored
// encoding is json.Marshal of the stored object with its type set (the server's store.commitEncoded; its
// resource version spliced in where it was encoded before, which makes the same bytes; an
// object loaded from disk is encoded anew at load, so bytes written by other hands in another
// spelling are not kept: TestScalarUpdateOnAForeignDataDir), as the shallow
// copy's is, and a stored object is never changed. An escape of U+FFFD in raw may
// be in the managed fields alone (a manager's name), which the copy's encoding does not refuse:
// such a write takes the copy's encoding, so that the shortcut serves the same writes as
// without raw.
func liveJSON(live runtime.Object, raw []byte) ([]byte, bool) {
	if raw != nil && !compactjson.HasReplacementEscape(raw) {
		return raw, true
	}
	a, ok := shallowWithoutManagedFields(live)
	if !ok {
		return nil, false
	}
	return comparableOne(a)
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
// one of its manager for the subresource, and the fields the subresource resets (resetFields)
// are the spec and, for a pod, metadata.deletionTimestamp and metadata.ownerReferences too
// (statusOnly has already found everything but the status equal, and ownedScalars refuses a
// change the reset would drop). The comparison leaves the managed fields out of the cuts' JSON,
// as it skips them anyway. liveRaw is the live object's stored encoding, or nil
// (statusChangedScalars).
func (m *Manager) statusScalarUpdate(t Write, liveCut, objCut runtime.Object, liveRaw []byte, obj runtime.Object) bool {
	if !Shortcuts.On() || t.Subresource != "status" || t.Manager == "" {
		return false
	}
	lm, nm := registry.MustMeta(liveCut), registry.MustMeta(objCut)
	base, sent := lm.GetManagedFields(), nm.GetManagedFields()
	if len(base) == 0 {
		return false
	}
	lm.SetManagedFields(nil)
	nm.SetManagedFields(nil)
	changed, ok := []fieldpath.Path(nil), sameKeys(reflect.ValueOf(liveCut), reflect.ValueOf(objCut))
	if ok {
		changed, ok = m.statusChangedScalars(t.Resource, liveCut, objCut, liveRaw)
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
	registry.MustMeta(obj).SetManagedFields(out)
	ScalarUpdates.Add(1)
	return true
}

// statusChangedScalars is changedScalars of statusOnly's cuts liveCut and objCut (their managed
// fields unset), read from the live object's stored encoding raw where it can be: the cuts'
// JSON differs at most in their status (apiVersion and kind are skipped; the metadata, the
// name, namespace and UID that statusOnly found equal, and every other member, zero on both
// sides, are the same bytes), and the live cut's status is the live object's, which the stored
// encoding holds as the cut's encoding holds it (see liveJSON). The walk then compares the
// stored status with the written cut's status encoded alone (the same bytes as in the cut's
// encoding: a field's value encodes as the value does), from the path status, as the walk of
// the whole cuts reaches it. The cuts' JSON holds the escape of U+FFFD, which the comparison
// refuses, only where their status or their name, namespace or UID does, all of which the
// stored encoding holds too: a stored encoding with the escape (perhaps only in what the cuts
// leave out) and a written status with it take both cuts' encodings as before, so that the
// same writes are served. So do a stored encoding without a status member and a resource without
// the schema's type of the status. A live object without a stored encoding (a pod's, see
// the server's resource.encodesOnDemand) has its status encoded alone instead (liveStatus).
func (m *Manager) statusChangedScalars(res *Resource, liveCut, objCut runtime.Object, raw []byte) ([]fieldpath.Path, bool) {
	a, ok := storedStatus(raw)
	if raw == nil && LiveStatusAlone.On() {
		a, ok = liveStatus(liveCut)
	}
	r, typed := m.rootType(res)
	var tr *smdschema.TypeRef
	if typed {
		if atom, found := r.schema.Resolve(r.ref); found && atom.Map != nil {
			tr = childType(&m.fieldTypes, atom.Map, "status")
		}
	}
	sv := reflect.ValueOf(objCut)
	if sv.Kind() == reflect.Pointer && !sv.IsNil() && sv.Elem().Kind() == reflect.Struct {
		sv = sv.Elem().FieldByName("Status")
	}
	if !ok || tr == nil || !sv.IsValid() || !sv.CanAddr() {
		return m.changedScalars(res, liveCut, objCut)
	}
	b, ok := comparableOne(sv.Addr().Interface())
	if !ok {
		return nil, false
	}
	status := "status"
	d := jsonDiff{schema: r.schema, types: &m.fieldTypes}
	if !d.value(a, b, fieldpath.Path{{FieldName: &status}}, tr) {
		return nil, false
	}
	return d.changed, true
}

// LiveStatusAlone lets statusChangedScalars encode the live cut's status alone where it has no
// stored encoding (liveStatus); a test turns it off to compare with both cuts' encodings.
var LiveStatusAlone Switch

// liveStatus is what statusChangedScalars reads from a stored encoding, for a stored object
// that keeps none (the server's resource.encodesOnDemand): the live cut's status encoded alone, which is the
// stored encoding's status member byte for byte (a field's value encodes as the value does),
// false where the stored encoding would have had the escape of U+FFFD in what the comparison
// reads, its status or its name, namespace or UID. The escape in the rest of the stored object
// (a manager's name) does not refuse here as it does in storedStatus: both ways' answers are
// those of the cuts' own encodings (changedScalars), which hold none of it.
func liveStatus(liveCut runtime.Object) ([]byte, bool) {
	v := reflect.ValueOf(liveCut)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	sv := v.Elem().FieldByName("Status")
	if !sv.IsValid() || !sv.CanAddr() {
		return nil, false
	}
	m := registry.MustMeta(liveCut)
	for _, s := range []string{m.GetName(), m.GetNamespace(), string(m.GetUID())} {
		// ContainsRune finds every invalid UTF-8 sequence, which encodes as the escape, and a
		// valid U+FFFD too, which encodes as itself: the check refuses a little more than it
		// needs to, which costs such a write only the shortcut.
		if strings.ContainsRune(s, utf8.RuneError) {
			return nil, false
		}
	}
	return comparableOne(sv.Addr().Interface())
}

// storedStatus is the status member of raw, a stored object's encoding, false if there is none
// or raw holds the escape of U+FFFD (see liveJSON).
func storedStatus(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '{' || compactjson.HasReplacementEscape(raw) {
		return nil, false
	}
	for i := 1; ; {
		k, v, next, ok := compactjson.Member(raw, i)
		if !ok || k == nil {
			return nil, false
		}
		if string(k) == `"status"` {
			return v, true
		}
		i = next
	}
}

// ownedScalars returns the managed fields the library makes of base for a write by t.Manager
// (through t.Subresource) that modifies the fields at the paths changed and nothing else, and
// false where it cannot prove that (see scalarUpdate): the entries as they were, the writer's
// marked for stampManagedFields.
func ownedScalars(t Write, base []metav1.ManagedFieldsEntry, changed []fieldpath.Path) ([]metav1.ManagedFieldsEntry, bool) {
	gv := t.Resource.GV.String()
	sets, writer, updaters, ok := decodedEntries(t, base)
	if !ok {
		return nil, false
	}
	if writer < 0 || updaters > maxUpdateManagers {
		return nil, false
	}
	changedSet := fieldpath.NewSet(changed...)
	if !changedSet.Intersection(strippedFields).Empty() {
		return nil, false
	}
	if filter := resetFields(t.Resource, t.Subresource)[fieldpath.APIVersion(gv)]; filter != nil && !filter.Filter(changedSet).Equals(changedSet) {
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
	// The library stamps the writer's entry; Track then gives it the server's time and
	// sorts the entries by the times stored (stampManagedFields). Any time other than the stored
	// one marks it stamped.
	stale := metav1.NewTime(time.Time{})
	if t := out[writer].Time; t != nil && t.Equal(&stale) {
		stale = metav1.NewTime(time.Unix(0, 0))
	}
	out[writer].Time = &stale
	return out, true
}

// decodedEntries decodes base's field sets for a write by t.Manager through t.Subresource, and
// says which entry is the writer's Update entry for that subresource (-1 for none) and how many
// Update entries there are: false unless every entry is of the resource's version, FieldsV1, an
// Update or an Apply, has an identity (manager, operation, subresource) of its own, and decodes
// (decodedSet). The shortcuts prove their managed fields only under these conditions.
func decodedEntries(t Write, base []metav1.ManagedFieldsEntry) (sets []*fieldpath.Set, writer, updaters int, ok bool) {
	gv := t.Resource.GV.String()
	sets = make([]*fieldpath.Set, len(base))
	writer = -1
	seen := make(map[[3]string]bool, len(base))
	for i, e := range base {
		if e.APIVersion != gv || e.FieldsType != "FieldsV1" || e.FieldsV1 == nil ||
			(e.Operation != metav1.ManagedFieldsOperationUpdate && e.Operation != metav1.ManagedFieldsOperationApply) {
			return nil, 0, 0, false
		}
		id := [3]string{e.Manager, string(e.Operation), e.Subresource}
		if seen[id] {
			return nil, 0, 0, false
		}
		seen[id] = true
		set, ok := decodedSet(e.FieldsV1.Raw)
		if !ok {
			return nil, 0, 0, false
		}
		sets[i] = set
		if e.Operation == metav1.ManagedFieldsOperationUpdate {
			updaters++
			if e.Manager == t.Manager && e.Subresource == t.Subresource {
				writer = i
			}
		}
	}
	return sets, writer, updaters, true
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
	if len(raw) > maxDecodedSetBytes {
		// Not kept: a set this large would take a large share of the bound for one object.
		return set, ok
	}
	if decodedSetBytes.Add(int64(len(raw))) > maxDecodedSetsBytes {
		// A bound on the memory: every pod's entries differ (its UID is in them), so a fleet's
		// would grow the cache without end.
		decodedSets.Clear()
		decodedSetBytes.Store(int64(len(raw)))
	}
	decodedSets.Store(string(raw), set)
	return set, ok
}

// decodedSets maps the bytes of a field set to what decodedSet found; decodedSetBytes counts the
// bytes of its keys, roughly (racing writers may each clear it). Each key is a copy of a set's
// bytes, and the set it maps to takes a few times as many, so the bound is on bytes: a bound on
// entries alone would let a few pods with large sets (a status with many containers; the request
// body allows megabytes) hold far more.
var (
	decodedSets     sync.Map
	decodedSetBytes atomic.Int64
)

const (
	// maxDecodedSetsBytes bounds the bytes of decodedSets' keys: about a thousand entries of 2 KiB,
	// more than a pod's status entry usually takes.
	maxDecodedSetsBytes = 2 << 20
	// maxDecodedSetBytes is the largest set decodedSets keeps.
	maxDecodedSetBytes = 32 << 10
)

// ScalarUpdates counts the updates scalarUpdate served, for the tests that check it serves them.
var ScalarUpdates atomic.Int64

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
