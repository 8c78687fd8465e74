package fieldmanager

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Probe reaches the steps of Track one at a time, and the state they keep, for the server's
// tests: they prove each step against the library on objects the server stored, with the
// server's models, which this package cannot make alone. The server itself calls only Track,
// Apply and Ready.
type Probe struct{ m *Manager }

// TypeRoots is how many entries the cache of rootType's answers holds.
func (p Probe) TypeRoots() int {
	if roots := p.m.typeRoots.Load(); roots != nil {
		return len(*roots)
	}
	return 0
}

// ResetFilters is how many entries the cache of resetFilter's answers holds.
func (Probe) ResetFilters() int {
	n := 0
	resetFilters.Range(func(any, any) bool { n++; return true })
	return n
}

// Probe returns m's Probe.
func (m *Manager) Probe() Probe { return Probe{m: m} }

// CreateShape is the key under which a create of obj through w shares its managed fields with
// the creates of the same shape, false where it cannot share them (see createFields).
func (p Probe) CreateShape(w Write, obj runtime.Object) (string, bool) {
	return p.m.createFieldsKey(w, obj)
}

// StatusOnly returns the copies of live and obj whose status alone the field manager walks for
// the write w, false where it walks the whole objects (see statusOnly).
func (p Probe) StatusOnly(w Write, live, obj runtime.Object) (liveCut, objCut runtime.Object, ok bool) {
	return statusOnly(w, live, obj)
}

// ScalarUpdate tells whether the update w of live (stored as liveRaw, or nil) to obj changes
// only scalars its manager alone owns, and if so sets obj's managed fields (see scalarUpdate).
func (p Probe) ScalarUpdate(w Write, live runtime.Object, liveRaw []byte, obj runtime.Object) bool {
	return p.m.scalarUpdate(w, live, liveRaw, obj)
}

// StatusScalarUpdate is ScalarUpdate for a status write, on StatusOnly's cuts (see
// statusScalarUpdate).
func (p Probe) StatusScalarUpdate(w Write, liveCut, objCut runtime.Object, liveRaw []byte, obj runtime.Object) bool {
	return p.m.statusScalarUpdate(w, liveCut, objCut, liveRaw, obj)
}

// ChangedScalars returns the paths of the scalars and atomic lists whose values differ between
// live and obj, objects of res, false if anything else differs (see changedScalars).
func (p Probe) ChangedScalars(res *Resource, live, obj any) ([]fieldpath.Path, bool) {
	return p.m.changedScalars(res, live, obj)
}

// ReadsStoredStatus tells whether the status writes' comparison reads the status from raw, a
// stored object's encoding, rather than encoding it again (see storedStatus).
func (p Probe) ReadsStoredStatus(raw []byte) bool {
	_, ok := storedStatus(raw)
	return ok
}

// KeptTyped tells whether a typed value is kept for the object of the status write w, and if so
// whether it may stand for the library's value of liveCut, StatusOnly's live cut (see
// keptTyped).
func (p Probe) KeptTyped(w Write, liveCut runtime.Object) (kept, serves bool) {
	k, ok := keptTyped.Load(keptTypedKey(w))
	if !ok {
		return false, false
	}
	return true, servesLive(w, k.(*typedCut), liveCut)
}

// TypeConverter is the type converter built from the models, as the field managers use it.
func (p Probe) TypeConverter() (managedfields.TypeConverter, error) {
	return p.m.typeConverter()
}

// UpdateConverters returns the type and object converters the field managers of updates use in
// place of tc and the scheme (see updateTypes), and tells which objects the type converter
// stands for typed values.
func (p Probe) UpdateConverters(tc managedfields.TypeConverter) (types managedfields.TypeConverter, objects runtime.ObjectConvertor, typedValue func(runtime.Object) bool) {
	typedValue = func(obj runtime.Object) bool {
		_, ok := obj.(*typedObject)
		return ok
	}
	return updateTypes{tc}, updateConverter{scheme: p.m.scheme, types: tc}, typedValue
}
