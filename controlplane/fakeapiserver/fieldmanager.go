package fakeapiserver

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/klog/v2"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/yaml"

	"github.com/minikubelet/minikubelet/api/apidefaults"
)

// Managed fields and server-side apply use k8s.io/apimachinery's field manager, the
// structured-merge-diff machinery kube-apiserver runs, with a type converter built from this
// server's OpenAPI models (openapi.go). Every create, update and non-apply patch records the
// fields it set under its field manager (the fieldManager parameter, else the client's user agent
// up to the first "/") with operation Update, and the status subresource under subresource
// "status"; an apply merges the applied configuration, reports conflicts with other managers'
// fields as 409, takes them over with force=true, and records operation Apply. As on the real
// server, the main resource of pods and nodes does not track status and their status
// subresource does not track the spec (the strategies' reset fields).
//
// The field manager stamps the entries it touches with the wall clock; trackFields and apply
// restamp them with the server's clock, so that objects in a replay carry virtual times and stay
// the same run to run.

// fieldManagers maps "RESOURCE" and "RESOURCE/status" to the field managers of applies;
// updateFieldManagers to those of every other write (trackFields). Both are built on the first
// write from one type converter, whose construction takes a noticeable fraction of a second.
var (
	fieldManagers = sync.OnceValues(func() (map[string]*managedfields.FieldManager, error) {
		tc, err := typeConverter()
		if err != nil {
			return nil, err
		}
		return newFieldManagers(tc, scheme)
	})
	updateFieldManagers = sync.OnceValues(func() (map[string]*managedfields.FieldManager, error) {
		tc, err := typeConverter()
		if err != nil {
			return nil, err
		}
		return newFieldManagers(updateTypes{tc}, updateConverter{scheme: scheme, types: tc})
	})
	typeConverter = sync.OnceValues(func() (managedfields.TypeConverter, error) {
		specs, err := builtOpenAPI()
		if err != nil {
			return nil, err
		}
		tc, err := managedfields.NewTypeConverter(specs.models, false)
		if err != nil {
			return nil, fmt.Errorf("build the server-side apply type converter: %w", err)
		}
		return tc, nil
	})
)

// newFieldManagers builds the field manager of every resource and subresource of its own kind on
// tc and conv.
func newFieldManagers(tc managedfields.TypeConverter, conv runtime.ObjectConvertor) (map[string]*managedfields.FieldManager, error) {
	out := map[string]*managedfields.FieldManager{}
	for _, res := range resources() {
		if res.view {
			// A view (events.k8s.io/v1 over core/v1 Events) is written through the resource it
			// shows, whose field manager tracks the write.
			continue
		}
		subresources := []string{""}
		for _, sub := range res.subresources {
			if sub.kind == "" {
				// A subresource of the resource's own kind (status, resize) tracks its writes
				// under its name.
				subresources = append(subresources, sub.name)
			}
		}
		for _, sub := range subresources {
			fm, err := managedfields.NewDefaultFieldManager(tc, conv, defaulter{}, scheme, res.gvk(), res.gv, sub, resetFields(res, sub))
			if err != nil {
				return nil, fmt.Errorf("field manager of %s %q: %w", res.name, sub, err)
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

func fieldManagerKey(res *resource, subresource string) string {
	if subresource == "" {
		return res.name
	}
	return res.name + "/" + subresource
}

// resetFields are the fields a write through the resource (or subresource) does not own because
// the strategy resets them: the status of the main resource of pods and nodes; the spec (and, for
// pods, the deletion timestamp and owner references) of their status subresource. A write of
// pods/resize owns only the containers' resources and resize policies (ResizeStrategy's
// resetFieldsFilter, an include filter).
func resetFields(res *resource, subresource string) map[fieldpath.APIVersion]fieldpath.Filter {
	gv := fieldpath.APIVersion(res.gv.String())
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
		if res.name == "pods" {
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

// managerOf is the request's field manager: the fieldManager parameter, else the user agent up to
// its first "/" with unprintable characters dropped, cut to 128 bytes, as kube-apiserver names the
// manager of a write that does not name one.
func managerOf(r *http.Request) string {
	if m := r.URL.Query().Get("fieldManager"); m != "" {
		return m
	}
	return managerOfUserAgent(r.UserAgent())
}

// managerOfUserAgent is the field manager kube-apiserver names a request without fieldManager
// after: its User-Agent up to the first "/", printable characters only, at most 128 bytes.
func managerOfUserAgent(ua string) string {
	prefix, _, _ := strings.Cut(ua, "/")
	var b bytes.Buffer
	for _, c := range prefix {
		if !unicode.IsPrint(c) {
			continue
		}
		if b.Len()+utf8.RuneLen(c) > metav1validation.FieldManagerMaxLength {
			break
		}
		b.WriteRune(c)
	}
	return b.String()
}

// trackFields records in obj's managedFields the fields this write sets, under t.manager; live is
// the stored object, nil for a create, and liveRaw its stored encoding (nil where the store
// keeps none), which spares scalarUpdate and statusScalarUpdate encoding live again. A server-side apply has already
// done so. Its cost grows with the managed fields of obj and live, so it runs without the store
// lock: on the object as read for an update (guaranteedUpdate), on the request alone for a
// create.
func (s *Server) trackFields(t target, live runtime.Object, liveRaw []byte, obj runtime.Object) runtime.Object {
	if t.tracked {
		return obj
	}
	managers := updateFieldManagers
	if !fieldManagerShortcuts {
		managers = fieldManagers
	}
	fms, err := managers()
	if err != nil {
		// The models are compiled in; a failure is a bug that every write would hit.
		panic(fmt.Sprintf("fakeapiserver: %v", err))
	}
	fm := fms[fieldManagerKey(t.res, t.subresource)]
	obj.GetObjectKind().SetGroupVersionKind(t.res.gvk())
	if live == nil {
		key, shared := createFieldsKey(t, obj)
		if shared && sharedCreateFields(key, obj) {
			s.stampManagedFields(nil, obj)
			return obj
		}
		out := fm.UpdateNoErrors(t.res.newObj(), obj, t.manager)
		if shared && out == obj && len(mustMeta(out).GetManagedFields()) > 0 {
			keepCreateFields(key, mustMeta(out).GetManagedFields())
		}
		s.stampManagedFields(nil, out)
		return out
	}
	before := mustMeta(live).GetManagedFields()
	if scalarUpdate(t, live, liveRaw, obj) {
		s.stampManagedFields(before, obj)
		return obj
	}
	if liveCut, objCut, ok := statusOnly(t, live, obj); ok {
		if statusScalarUpdate(t, liveCut, objCut, liveRaw, obj) || statusFieldsUpdate(t, liveCut, objCut, obj) {
			s.stampManagedFields(before, obj)
			return obj
		}
		out := updateWithTypedHints(fm, t, liveCut, objCut)
		mustMeta(obj).SetManagedFields(mustMeta(out).GetManagedFields())
		s.stampManagedFields(before, obj)
		return obj
	}
	out := fm.UpdateNoErrors(live, obj, t.manager)
	s.stampManagedFields(before, out)
	return out
}

// fieldManagerShortcuts lets trackFields walk only the status of a status write (statusOnly) and
// use the update field managers' converters (updateTypes); a test turns both off to compare with
// the library's own path over the whole object.
var fieldManagerShortcuts = true

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
func statusOnly(t target, live, obj runtime.Object) (runtime.Object, runtime.Object, bool) {
	if !fieldManagerShortcuts || t.subresource != "status" || len(mustMeta(live).GetManagedFields()) == 0 {
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
		out.GetObjectKind().SetGroupVersionKind(t.res.gvk())
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
// whose time no longer matches the stored one) the server's current time, in place of the wall
// clock's the library gave them, and sorts the entries again as the library does
// (sortManagedFields): it sorted by the wall clock's times, and the order must follow the times
// stored. An entry without a time (a client may send one) is left without, as the library leaves
// it.
func (s *Server) stampManagedFields(before []metav1.ManagedFieldsEntry, obj runtime.Object) {
	key := func(e metav1.ManagedFieldsEntry) string {
		return e.Manager + "\x00" + string(e.Operation) + "\x00" + e.Subresource + "\x00" + e.APIVersion
	}
	old := map[string]*metav1.Time{}
	for _, e := range before {
		old[key(e)] = e.Time
	}
	m := mustMeta(obj)
	entries := m.GetManagedFields()
	now := s.now()
	stamped := false
	for i, e := range entries {
		if e.Time == nil {
			continue
		}
		if t, ok := old[key(e)]; ok && t != nil && t.Equal(e.Time) {
			continue
		}
		entries[i].Time = &now
		stamped = true
	}
	if stamped {
		sortManagedFields(entries)
	}
	m.SetManagedFields(entries)
}

// apply serves a PATCH with an apply patch (application/apply-patch+yaml): the object's fields are
// merged with the applied configuration by field ownership, as kube-apiserver's applyPatcher
// does, and an object that does not exist is created from it.
func (s *Server) apply(w http.ResponseWriter, r *http.Request, t target) error {
	opts, err := applyOptions(r)
	if err != nil {
		return err
	}
	data, err := readBody(r)
	if err != nil {
		return err
	}
	var patch map[string]any
	if err := yaml.Unmarshal(data, &patch); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	fms, err := fieldManagers()
	if err != nil {
		return err
	}
	fm := fms[fieldManagerKey(t.res, t.subresource)]
	t.manager, t.tracked = opts.FieldManager, true
	force := opts.Force != nil && *opts.Force
	dryRun := len(opts.DryRun) > 0
	for {
		var old *entry
		_ = s.store.locked(func() error {
			old, _ = s.store.get(t.res, t.namespace, t.name)
			return nil
		})
		live := t.res.newObj()
		if old != nil {
			live = old.obj.DeepCopyObject()
		} else if t.subresource != "" {
			return apierrors.NewNotFound(t.res.groupResource(), t.name)
		}
		live.GetObjectKind().SetGroupVersionKind(t.res.gvk())
		before := mustMeta(live).GetManagedFields()
		obj, err := fm.Apply(live, &unstructured.Unstructured{Object: runtime.DeepCopyJSON(patch)}, opts.FieldManager, force)
		if err != nil {
			return applyError(err)
		}
		var warnings []string
		if opts.FieldValidation == metav1.FieldValidationStrict || opts.FieldValidation == metav1.FieldValidationWarn || opts.FieldValidation == "" {
			if err := yaml.UnmarshalStrict(data, &map[string]any{}); err != nil {
				if opts.FieldValidation == metav1.FieldValidationStrict {
					return apierrors.NewBadRequest(fmt.Sprintf("error strict decoding YAML: %v", err))
				}
				warnings = append(warnings, err.Error())
			}
		}
		s.stampManagedFields(before, obj)
		m := mustMeta(obj)
		if t.res.namespaced && m.GetNamespace() == "" {
			m.SetNamespace(t.namespace)
		}
		if err := checkIdentity(t, m); err != nil {
			return err
		}
		var out *entry
		var moved bool
		created := false
		err = s.store.locked(func() error {
			cur, ok := s.store.get(t.res, t.namespace, t.name)
			switch {
			case cur != old || (old == nil && ok):
				moved = true
				return nil
			case old == nil:
				created = true
				out, err = s.insert(t, obj, dryRun, "PATCH")
				return err
			}
			out, err = s.applyUpdate(t, old, obj, dryRun, "PATCH")
			return err
		})
		if err != nil {
			return err
		}
		if moved {
			if err := r.Context().Err(); err != nil {
				return err // the client is gone
			}
			continue
		}
		writeWarnings(w, warnings)
		code := http.StatusOK
		if created {
			code = http.StatusCreated
		}
		writeRaw(w, code, out.encoded())
		return nil
	}
}

// applyOptions reads and validates the PatchOptions of an apply request.
func applyOptions(r *http.Request) (metav1.PatchOptions, error) {
	q := r.URL.Query()
	opts := metav1.PatchOptions{FieldManager: q.Get("fieldManager"), DryRun: q["dryRun"], FieldValidation: q.Get("fieldValidation")}
	if v, ok := q["force"]; ok && len(v) > 0 {
		force := isTrue(v[0])
		opts.Force = &force
	}
	if errs := metav1validation.ValidatePatchOptions(&opts, types.ApplyYAMLPatchType); len(errs) > 0 {
		return opts, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", errs)
	}
	return opts, nil
}

// applyError turns an error of the field manager into the response kube-apiserver gives: its
// conflicts are already a 409 Status, and anything else (an applied configuration that does not
// fit the schema, say) is a 500 carrying the error's text.
func applyError(err error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return err
	}
	klog.V(4).InfoS("Server-side apply failed", "err", err)
	return statusError(http.StatusInternalServerError, metav1.StatusReasonUnknown, err.Error())
}

// updateWithTypedHints is the field manager's update of a status write's cuts with their typed
// hints registered (see keptTyped), removed even when the library panics (the request is then
// answered 500 and the hints would otherwise stay registered).
func updateWithTypedHints(fm *managedfields.FieldManager, t target, liveCut, objCut runtime.Object) runtime.Object {
	done := typedHintsFor(t, liveCut, objCut)
	defer done()
	return fm.UpdateNoErrors(liveCut, objCut, t.manager)
}
