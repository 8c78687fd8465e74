package fieldmanager

import (
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/registry"
)

// A status write that changes which fields are set (a pod's from Pending to Running) takes the
// library's path on what statusOnly keeps of the two objects, and the library makes a typed value
// of each: a validating walk of the whole cut, about half of the field manager's cost. The live
// cut of one write is, in the status, the written cut of the write before it, whose typed value
// the library has just made; keptTyped keeps that value, by object, and the next write of the
// object is served it for its live cut when it can be proven to give the library's outcome:
//
//   - the kept cut and the live cut, the latter without its managed fields, are deeply equal
//     (reflect.DeepEqual: stricter than the typed walk, a nil and an empty list differ), so
//     that the kept value reads what the library's conversion of the live cut would read, but
//     for the managed fields; the kept value was made with the same validation options;
//   - the library's value of the live cut has metadata.managedFields, which the written cut
//     never has (the library removes them before it converts it): the comparison then reports
//     metadata.managedFields removed, and the only use of what it reports removed is to take the
//     removed fields from every manager's set. keptTyped serves the value only when every entry
//     of the live managed fields decodes to a set that names nothing at or under
//     metadata.managedFields (decodedSet) and is of the resource's version (the schema the
//     library reconciles the sets with is the value's, and another version would convert the
//     value), so that taking metadata.managedFields away changes no set; and it is the same
//     fields-v1 the library's conversion reads there, so that its validation of them cannot
//     fail where the kept value's did not.
//
// A kept value is taken out of keptTyped when it is served (a typed value is walked by one
// write at a time) and put back only after the write that made it is done with it.
// TestTypedCutsMatchTheLibrary makes random status writes that change field sets with and
// without it and compares the stored bytes.

// keptTyped maps "GROUP/VERSION/RESOURCE/NAMESPACE/NAME" to the *typedCut of the object's last status write
// through statusOnly's library path; keptTypedCount counts its entries, roughly (racing writers).
var (
	keptTyped      sync.Map
	keptTypedCount atomic.Int64
)

// maxKeptTyped bounds keptTyped: a kept cut holds a status alive, a few kilobytes (shared with
// the stored object while no later write replaced it; a later value-only or non-status write
// leaves the cut holding a status nothing else uses, as does a deleted object's, until the map
// is cleared). When the bound is passed the map is cleared whole: a sync.Map has no cheap way
// to evict one entry. A fleet's pods write their statuses close together in time, so most
// second writes still find their first (measured with 300 pods; a larger fleet clears more
// often, which costs speed only: a write that finds nothing takes the library's own path).
const maxKeptTyped = 4096

// TypedReuses counts the live cuts served a kept typed value, for the tests that check it serves
// them.
var TypedReuses atomic.Int64

// typedCut is a written cut (without managed fields) and the typed value the library made of it.
type typedCut struct {
	cut  runtime.Object
	tv   *typed.TypedValue
	opts []typed.ValidationOptions
}

// typedHint tells updateTypes.ObjectToTyped what to do with one object the field manager
// converts: serve a kept value (serve), or make the value of a copy of it and keep that (keep),
// recording it in kept.
type typedHint struct {
	serve *typedCut
	keep  bool
	kept  *typedCut
}

// typedHints maps the cuts Track hands the library to their hints, for the duration of
// that call.
var typedHints sync.Map

// ObjectToTyped converts obj as the library's converter does, unless Track gave it a hint.
func (c updateTypes) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	h, ok := typedHints.Load(obj)
	if !ok {
		return c.TypeConverter.ObjectToTyped(obj, opts...)
	}
	hint := h.(*typedHint)
	if hint.serve != nil && slices.Equal(hint.serve.opts, opts) {
		TypedReuses.Add(1)
		return hint.serve.tv, nil
	}
	if !hint.keep || registry.MustMeta(obj).GetManagedFields() != nil {
		return c.TypeConverter.ObjectToTyped(obj, opts...)
	}
	// A copy the caller cannot change afterwards (the library sets the managed fields on the
	// written object once it is done): the kept value reads the copy, never the object.
	cp := reflect.New(reflect.TypeOf(obj).Elem())
	cp.Elem().Set(reflect.ValueOf(obj).Elem())
	kept := cp.Interface().(runtime.Object)
	tv, err := c.TypeConverter.ObjectToTyped(kept, opts...)
	if err == nil {
		hint.kept = &typedCut{cut: kept, tv: tv, opts: slices.Clone(opts)}
	}
	return tv, err
}

// keptTypedKey is the key of t's object in keptTyped.
func keptTypedKey(t Write) string {
	return t.Resource.GV.Group + "/" + t.Resource.GV.Version + "/" + t.Resource.Name + "/" + t.Namespace + "/" + t.Name
}

// typedHintsFor registers the hints of a status write's cuts (see keptTyped) and returns the
// function that removes them and keeps the written cut's value; the caller calls it once the
// field manager returned.
func typedHintsFor(t Write, liveCut, objCut runtime.Object) func() {
	key := keptTypedKey(t)
	live := &typedHint{}
	if k, ok := keptTyped.LoadAndDelete(key); ok {
		keptTypedCount.Add(-1)
		if kc := k.(*typedCut); servesLive(t, kc, liveCut) {
			live.serve = kc
		}
	}
	written := &typedHint{keep: true}
	typedHints.Store(liveCut, live)
	typedHints.Store(objCut, written)
	return func() {
		typedHints.Delete(liveCut)
		typedHints.Delete(objCut)
		if written.kept == nil {
			return
		}
		if keptTypedCount.Add(1) > maxKeptTyped {
			keptTyped.Clear()
			keptTypedCount.Store(1)
		}
		if _, loaded := keptTyped.Swap(key, written.kept); loaded {
			keptTypedCount.Add(-1)
		}
	}
}

// servesLive tells whether kc's value may stand for the library's of liveCut (see keptTyped).
func servesLive(t Write, kc *typedCut, liveCut runtime.Object) bool {
	entries := registry.MustMeta(liveCut).GetManagedFields()
	gv := t.Resource.GV.String()
	for _, e := range entries {
		if e.APIVersion != gv || e.FieldsType != "FieldsV1" || e.FieldsV1 == nil {
			return false
		}
		if _, ok := decodedSet(e.FieldsV1.Raw); !ok {
			return false
		}
	}
	v := reflect.ValueOf(liveCut)
	if v.Kind() != reflect.Pointer || reflect.TypeOf(kc.cut) != v.Type() {
		return false
	}
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	m := cp.Elem().FieldByName("ObjectMeta")
	if !m.IsValid() || m.Type() != reflect.TypeFor[metav1.ObjectMeta]() {
		return false
	}
	m.Addr().Interface().(*metav1.ObjectMeta).ManagedFields = nil
	return reflect.DeepEqual(cp.Interface(), kc.cut)
}
