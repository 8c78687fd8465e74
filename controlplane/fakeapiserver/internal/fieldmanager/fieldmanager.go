package fieldmanager

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/api/apidefaults"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/registry"
)

// Resource is what the field manager knows of a served resource: its names, the type of its
// objects and the subresources whose writes it tracks apart.
type Resource struct {
	Name string // plural, as in the URL
	Kind string
	GV   schema.GroupVersion
	// Subresources are the subresources that take and return the resource's own kind (status,
	// resize); each tracks its writes under its name.
	Subresources []string
	// New returns an empty object of the resource's type.
	New func() runtime.Object
}

func (r *Resource) gvk() schema.GroupVersionKind { return r.GV.WithKind(r.Kind) }

// hasStatus reports whether the resource has a status subresource, whose writes do not own the
// rest of the object and the other way round.
func (r *Resource) hasStatus() bool { return slices.Contains(r.Subresources, "status") }

// Write is one write to record: the resource (and subresource) it goes through, the manager it
// is recorded under, and the object's namespace and name.
type Write struct {
	Resource    *Resource
	Subresource string
	Manager     string
	Namespace   string
	Name        string
}

// Options configures a Manager.
type Options struct {
	// Resources are the resources whose writes the Manager records; a write through any other
	// is a caller's bug.
	Resources []*Resource
	// Scheme converts and defaults the resources' objects.
	Scheme *runtime.Scheme
	// Models returns the OpenAPI v3 schemas of every served kind by definition name, with their
	// x-kubernetes-group-version-kind extensions, from which the type converter is built on
	// the first write.
	Models func() (map[string]*spec.Schema, error)
}

// Manager records the managed fields of writes and merges server-side applies, for the
// resources it was given.
type Manager struct {
	scheme    *runtime.Scheme
	resources []*Resource
	// applyManagers maps "RESOURCE" and "RESOURCE/status" to the field managers of applies;
	// updateManagers to those of every other write (Track). Both are built on the first write
	// from one type converter, whose construction takes a noticeable fraction of a second.
	applyManagers  func() (map[string]*managedfields.FieldManager, error)
	updateManagers func() (map[string]*managedfields.FieldManager, error)
	typeConverter  func() (managedfields.TypeConverter, error)
	// typeRoots caches rootType's answers by the resource's group, version and kind, all they
	// depend on besides the type converter: each Server of the process builds its own Resource
	// rows, and keyed by row the cache would keep an entry per Server. It holds one entry per
	// served kind and is read on every tracked update, so it is a map replaced whole under
	// typeRootsMu when an entry is added: a read takes no lock and boxes no key.
	typeRoots   atomic.Pointer[map[schema.GroupVersionKind]typeRoot]
	typeRootsMu sync.Mutex
	// fieldTypes maps a map type of the type converter's schema to its fields' types by name
	// (childType). The schema resolves a type to the same map every time (one it keeps, or one
	// it made once for an override and cached), so the entries are bounded by the schema's
	// maps, and the cache goes with the Manager whose schema it points into.
	fieldTypes sync.Map
}

// New returns a Manager for opts' resources, or an error wrapping minikubelet.ErrMissingOption.
// It builds nothing until the first write.
func New(opts Options) (*Manager, error) {
	var missing []string
	if opts.Scheme == nil {
		missing = append(missing, "Scheme")
	}
	if opts.Models == nil {
		missing = append(missing, "Models")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("field manager options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	m := &Manager{scheme: opts.Scheme, resources: opts.Resources}
	m.typeConverter = sync.OnceValues(func() (managedfields.TypeConverter, error) {
		models, err := opts.Models()
		if err != nil {
			return nil, err
		}
		tc, err := managedfields.NewTypeConverter(models, false)
		if err != nil {
			return nil, fmt.Errorf("build the server-side apply type converter: %w", err)
		}
		return tc, nil
	})
	m.applyManagers = sync.OnceValues(func() (map[string]*managedfields.FieldManager, error) {
		tc, err := m.typeConverter()
		if err != nil {
			return nil, err
		}
		return m.newFieldManagers(tc, m.scheme)
	})
	m.updateManagers = sync.OnceValues(func() (map[string]*managedfields.FieldManager, error) {
		tc, err := m.typeConverter()
		if err != nil {
			return nil, err
		}
		return m.newFieldManagers(updateTypes{tc}, updateConverter{scheme: m.scheme, types: tc})
	})
	return m, nil
}

// newFieldManagers builds the field manager of every resource and subresource of its own kind on
// tc and conv.
func (m *Manager) newFieldManagers(tc managedfields.TypeConverter, conv runtime.ObjectConvertor) (map[string]*managedfields.FieldManager, error) {
	out := map[string]*managedfields.FieldManager{}
	for _, res := range m.resources {
		for _, sub := range append([]string{""}, res.Subresources...) {
			fm, err := managedfields.NewDefaultFieldManager(tc, conv, defaulter{}, m.scheme, res.gvk(), res.GV, sub, resetFields(res, sub))
			if err != nil {
				return nil, fmt.Errorf("field manager of %s %q: %w", res.Name, sub, err)
			}
			out[fieldManagerKey(res, sub)] = fm
		}
	}
	return out, nil
}

// updateTypes and updateConverter spare the field manager of an update two conversions whose
// results it does not use. Before it compares the live object with the new one, the field manager
// reconciles each manager's entry with the schema, and to do so converts the live object to the
// entry's version: it turns the typed value back into a whole object only to read the object's
// version, and returns the value as it was when that is the entry's version (as it is for every
// entry of this server's objects, which have one version each). updateTypes gives it the value
// itself in place of the object, with the version read from the value's apiVersion and kind
// fields, and updateConverter makes the whole object only if the entry's version is another.
// The field manager also converts the live and the new object to the resource's version before it
// makes typed values of them, and only reads what it gets; updateConverter gives an object that is
// already of that version as it is, not a copy. Applies keep the library's converters (their field
// manager turns the merged value into the object it stores).
type updateTypes struct{ managedfields.TypeConverter }

// TypedToObject gives the value as an object whose kind alone is known, unless the value is not
// an object (the conversion's own error then comes from the library).
func (c updateTypes) TypedToObject(tv *typed.TypedValue) (runtime.Object, error) {
	v := tv.AsValue()
	if !v.IsMap() {
		return c.TypeConverter.TypedToObject(tv)
	}
	m := v.AsMap()
	field := func(name string) string {
		f, ok := m.Get(name)
		if !ok || !f.IsString() {
			return ""
		}
		return f.AsString()
	}
	u := &typedObject{tv: tv}
	u.gvk = schema.FromAPIVersionAndKind(field("apiVersion"), field("kind"))
	return u, nil
}

// typedObject is a typed value standing for the object it would convert to; updateConverter
// converts it.
type typedObject struct {
	tv  *typed.TypedValue
	gvk schema.GroupVersionKind
}

func (o *typedObject) GetObjectKind() schema.ObjectKind                { return o }
func (o *typedObject) DeepCopyObject() runtime.Object                  { c := *o; return &c }
func (o *typedObject) GroupVersionKind() schema.GroupVersionKind       { return o.gvk }
func (o *typedObject) SetGroupVersionKind(gvk schema.GroupVersionKind) { o.gvk = gvk }

// updateConverter is the object converter of the update field managers (see updateTypes).
type updateConverter struct {
	scheme *runtime.Scheme
	types  managedfields.TypeConverter
}

func (c updateConverter) Convert(in, out, context any) error {
	return c.scheme.Convert(in, out, context)
}

func (c updateConverter) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return c.scheme.ConvertFieldLabel(gvk, label, value)
}

func (c updateConverter) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	if o, ok := in.(*typedObject); ok {
		obj, err := c.types.TypedToObject(o.tv)
		if err != nil {
			return nil, err
		}
		return c.scheme.ConvertToVersion(obj, target)
	}
	if _, ok := in.(runtime.Unstructured); !ok {
		have := in.GetObjectKind().GroupVersionKind()
		if kinds, _, err := c.scheme.ObjectKinds(in); err == nil && !have.Empty() && slices.Contains(kinds, have) {
			if want, ok := target.KindForGroupVersionKinds(kinds); ok && want == have {
				return in, nil
			}
		}
	}
	return c.scheme.ConvertToVersion(in, target)
}

func fieldManagerKey(res *Resource, subresource string) string {
	if subresource == "" {
		return res.Name
	}
	return res.Name + "/" + subresource
}

// resetFields are the fields a write through the resource (or subresource) does not own because
// the strategy resets them: the status of the main resource of pods and nodes; the spec (and, for
// pods, the deletion timestamp and owner references) of their status subresource. A write of
// pods/resize owns only the containers' resources and resize policies (ResizeStrategy's
// resetFieldsFilter, an include filter).
func resetFields(res *Resource, subresource string) map[fieldpath.APIVersion]fieldpath.Filter {
	gv := fieldpath.APIVersion(res.GV.String())
	if subresource == "resize" {
		var matchers []*fieldpath.SetMatcher
		for _, list := range []string{"containers", "initContainers"} {
			for _, f := range []string{"resources", "resizePolicy"} {
				matchers = append(matchers, fieldpath.MakePrefixMatcherOrDie("spec", list, fieldpath.MatchAnyPathElement(), f))
			}
		}
		return map[fieldpath.APIVersion]fieldpath.Filter{gv: fieldpath.NewIncludeMatcherFilter(matchers...)}
	}
	if !res.hasStatus() {
		return nil
	}
	set := fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
	if subresource == "status" {
		set = fieldpath.NewSet(fieldpath.MakePathOrDie("spec"))
		if res.Name == "pods" {
			set.Insert(fieldpath.MakePathOrDie("metadata", "deletionTimestamp"))
			set.Insert(fieldpath.MakePathOrDie("metadata", "ownerReferences"))
		}
	}
	return map[fieldpath.APIVersion]fieldpath.Filter{gv: fieldpath.NewExcludeSetFilter(set)}
}

// defaulter applies the defaults the decoder of kube-apiserver applies, to the objects the field
// manager builds from an applied configuration.
type defaulter struct{}

func (defaulter) Default(obj runtime.Object) {
	if pod, ok := obj.(*corev1.Pod); ok {
		apidefaults.SetPodDefaults(pod)
	}
}

// Track records in obj's managedFields the fields the write w sets, under w.Manager, and returns
// the object to store (obj, or the library's copy of it); live is the stored object, nil for a
// create, and liveRaw its stored encoding (nil where the store keeps none), which spares
// scalarUpdate and statusScalarUpdate encoding live again. The entries it stamps get now's time.
// Its cost grows with the managed fields of obj and live, so the server runs it without the
// store lock: on the object as read for an update (its guaranteedUpdate), on the request alone
// for a create.
func (m *Manager) Track(w Write, live runtime.Object, liveRaw []byte, obj runtime.Object, now func() metav1.Time) runtime.Object {
	managers := m.updateManagers
	if !Shortcuts.On() {
		managers = m.applyManagers
	}
	fms, err := managers()
	if err != nil {
		// The models are compiled in; a failure is a bug that every write would hit.
		panic(fmt.Sprintf("fakeapiserver: %v", err))
	}
	fm := fms[fieldManagerKey(w.Resource, w.Subresource)]
	obj.GetObjectKind().SetGroupVersionKind(w.Resource.gvk())
	if live == nil {
		key, shared := m.createFieldsKey(w, obj)
		if shared && sharedCreateFields(key, obj) {
			stampManagedFields(nil, obj, now)
			return obj
		}
		out := fm.UpdateNoErrors(w.Resource.New(), obj, w.Manager)
		if shared && out == obj && len(registry.MustMeta(out).GetManagedFields()) > 0 {
			keepCreateFields(key, registry.MustMeta(out).GetManagedFields())
		}
		stampManagedFields(nil, out, now)
		return out
	}
	before := registry.MustMeta(live).GetManagedFields()
	if m.scalarUpdate(w, live, liveRaw, obj) {
		stampManagedFields(before, obj, now)
		return obj
	}
	if liveCut, objCut, ok := statusOnly(w, live, obj); ok {
		if m.statusScalarUpdate(w, liveCut, objCut, liveRaw, obj) || m.statusFieldsUpdate(w, liveCut, objCut, obj) {
			stampManagedFields(before, obj, now)
			return obj
		}
		out := updateWithTypedHints(fm, w, liveCut, objCut)
		registry.MustMeta(obj).SetManagedFields(registry.MustMeta(out).GetManagedFields())
		stampManagedFields(before, obj, now)
		return obj
	}
	out := fm.UpdateNoErrors(live, obj, w.Manager)
	stampManagedFields(before, out, now)
	return out
}

// Ready builds the field managers of applies, as the first apply does, and returns the error of
// that build: the server answers an apply with it, before it reads the object.
func (m *Manager) Ready() error {
	_, err := m.applyManagers()
	return err
}

// Shortcuts lets Track walk only the status of a status write (statusOnly) and use the update
// field managers' converters (updateTypes), and lets the shortcuts that prove the library's
// outcome without its walk serve writes; the server's tests turn it off to compare with the
// library's own path over the whole object.
var Shortcuts Switch

// Switch is a shortcut's switch, on unless a test turns it off. Request goroutines read it while
// a test may set it (a parallel test, or a goroutine of an earlier test still serving), so it is
// atomic; its zero value is on, so that no switch needs initialising.
type Switch struct{ off atomic.Bool }

// On tells whether the switch is on.
func (s *Switch) On() bool { return !s.off.Load() }

// Set turns the switch on or off.
func (s *Switch) Set(on bool) { s.off.Store(!on) }

// Apply merges the applied configuration patch into live (an empty object of the resource for a
// create) by field ownership under w.Manager, as kube-apiserver's applyPatcher does, taking
// other managers' fields where force is set, and returns the merged object with the entries it
// stamped given now's time. Its errors are the library's: conflicts as a 409 Status, anything
// else as it comes.
func (m *Manager) Apply(w Write, live runtime.Object, patch map[string]any, force bool, now func() metav1.Time) (runtime.Object, error) {
	fms, err := m.applyManagers()
	if err != nil {
		return nil, err
	}
	fm := fms[fieldManagerKey(w.Resource, w.Subresource)]
	live.GetObjectKind().SetGroupVersionKind(w.Resource.gvk())
	before := registry.MustMeta(live).GetManagedFields()
	obj, err := fm.Apply(live, &unstructured.Unstructured{Object: runtime.DeepCopyJSON(patch)}, w.Manager, force)
	if err != nil {
		return nil, err
	}
	stampManagedFields(before, obj, now)
	return obj, nil
}

// statusOnly returns copies of live and obj that keep only their status and the metadata the
// field manager reads (the managed fields; the name, namespace and UID, which it logs or uses to
// tell a create), for a write of the status subresource that changes nothing else of the object
// (the status strategy copies the spec from live, but the write may change the labels,
// annotations, finalizers and, but for a pod, owner references it sends, as on kube-apiserver;
// such a write is walked whole, so that its manager owns what it changed) on an object whose
// managed fields are recorded. The field manager then walks only what can have changed, with the
// same outcome: it owns fields by the differences between live and obj, and equal subtrees have
// none; it reconciles each manager's fields with the schema, not with the object; and what it
// returns is obj itself with its managed fields set, and it changes nothing else of either
// object. The managed fields on live mean that the last write that could change the rest
// converted it without error, so that the walk leaves out no error either. The rest is compared
// with reflect.DeepEqual, stricter than the walk (a nil and an empty list differ), so that nothing
// the walk would find different is left out.
func statusOnly(t Write, live, obj runtime.Object) (runtime.Object, runtime.Object, bool) {
	if !Shortcuts.On() || t.Subresource != "status" || len(registry.MustMeta(live).GetManagedFields()) == 0 {
		return nil, nil, false
	}
	lv, nv := reflect.ValueOf(live), reflect.ValueOf(obj)
	if lv.Kind() != reflect.Pointer || nv.Type() != lv.Type() || lv.Elem().Kind() != reflect.Struct {
		return nil, nil, false
	}
	lv, nv = lv.Elem(), nv.Elem()
	if !lv.FieldByName("Status").IsValid() || !lv.FieldByName("TypeMeta").IsValid() || !lv.FieldByName("ObjectMeta").IsValid() ||
		lv.FieldByName("ObjectMeta").Type() != reflect.TypeFor[metav1.ObjectMeta]() {
		return nil, nil, false
	}
	if !sameButStatus(lv, nv) {
		return nil, nil, false
	}
	cut := func(v reflect.Value) runtime.Object {
		c := reflect.New(v.Type())
		c.Elem().FieldByName("Status").Set(v.FieldByName("Status"))
		m := v.FieldByName("ObjectMeta").Addr().Interface().(*metav1.ObjectMeta)
		c.Elem().FieldByName("ObjectMeta").Set(reflect.ValueOf(metav1.ObjectMeta{
			Name: m.Name, Namespace: m.Namespace, UID: m.UID, ManagedFields: m.ManagedFields,
		}))
		out := c.Interface().(runtime.Object)
		// What the field manager's conversion to the resource's version sets on its copy.
		out.GetObjectKind().SetGroupVersionKind(t.Resource.gvk())
		return out
	}
	return cut(lv), cut(nv), true
}

// sameButStatus reports whether lv and nv, typed objects of one struct type (statusOnly's), are
// equal by reflect.DeepEqual but for their type meta, their status and their managed fields:
// field by field, each through a pointer to it (DeepEqual compares the values pointed at, and
// takes lists and maps that share their elements, such as the spec the status strategy keeps,
// as equal without walking them), and the metadata without its managed fields, rather than
// copies of the whole objects with those fields cleared. It gives that comparison's answer for
// the API's types, whose fields are all exported; for a type with an unexported field it says
// false, where the comparison might say true, which only sends the caller the whole way.
func sameButStatus(lv, nv reflect.Value) bool {
	for i := range lv.NumField() {
		switch f := lv.Type().Field(i); {
		case !f.IsExported():
			return false // not the API's types: walked whole
		case f.Name == "TypeMeta" || f.Name == "Status":
		case f.Name == "ObjectMeta":
			lm, nm := *lv.Field(i).Addr().Interface().(*metav1.ObjectMeta), *nv.Field(i).Addr().Interface().(*metav1.ObjectMeta)
			lm.ManagedFields, nm.ManagedFields = nil, nil
			if !reflect.DeepEqual(&lm, &nm) {
				return false
			}
		case !reflect.DeepEqual(lv.Field(i).Addr().Interface(), nv.Field(i).Addr().Interface()):
			return false
		}
	}
	return true
}

// stampManagedFields gives the entries of obj that the field manager stamped (a new entry, or one
// whose time no longer matches the stored one) the time now gives, in place of the wall
// clock's the library gave them, and sorts the entries again as the library does
// (sortManagedFields): it sorted by the wall clock's times, and the order must follow the times
// stored. An entry without a time (a client may send one) is left without, as the library leaves
// it.
func stampManagedFields(before []metav1.ManagedFieldsEntry, obj runtime.Object, now func() metav1.Time) {
	key := func(e metav1.ManagedFieldsEntry) string {
		return e.Manager + "\x00" + string(e.Operation) + "\x00" + e.Subresource + "\x00" + e.APIVersion
	}
	old := map[string]*metav1.Time{}
	for _, e := range before {
		old[key(e)] = e.Time
	}
	m := registry.MustMeta(obj)
	entries := m.GetManagedFields()
	stampedAt := now()
	stamped := false
	for i, e := range entries {
		if e.Time == nil {
			continue
		}
		if t, ok := old[key(e)]; ok && t != nil && t.Equal(e.Time) {
			continue
		}
		entries[i].Time = &stampedAt
		stamped = true
	}
	if stamped {
		sortManagedFields(entries)
	}
	m.SetManagedFields(entries)
}

// updateWithTypedHints is the field manager's update of a status write's cuts with their typed
// hints registered (see keptTyped), removed even when the library panics (the request is then
// answered 500 and the hints would otherwise stay registered).
func updateWithTypedHints(fm *managedfields.FieldManager, t Write, liveCut, objCut runtime.Object) runtime.Object {
	done := typedHintsFor(t, liveCut, objCut)
	defer done()
	return fm.UpdateNoErrors(liveCut, objCut, t.Manager)
}
