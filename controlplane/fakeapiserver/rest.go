package fakeapiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// get serves GET of one object.
func (s *Server) get(w http.ResponseWriter, r *http.Request, t target) error {
	out, tableVersion, err := negotiate(r)
	if err != nil {
		return err
	}
	opts, err := parseListOptions(r, t)
	if err != nil {
		return err
	}
	var e *entry
	err = s.store.lockedAs(r.Context(), t.class, func() error {
		var ok bool
		if e, ok = s.store.get(t.res, t.namespace, t.name); !ok {
			return apierrors.NewNotFound(t.res.groupResource(), t.name)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if out == outputTable {
		return s.writeTable(w, tableVersion, t.res, []*entry{e}, "", opts.includeObject)
	}
	return writeEntry(w, out, http.StatusOK, e)
}

// list serves GET of a collection, paged with limit and continue (paging.go).
func (s *Server) list(w http.ResponseWriter, r *http.Request, t target) error {
	out, tableVersion, err := negotiate(r)
	if err != nil {
		return err
	}
	opts, err := parseListOptions(r, t)
	if err != nil {
		return err
	}
	if err := validateListOptions(opts, false); err != nil {
		return err
	}
	var page listPage
	err = s.store.lockedAs(r.Context(), t.class, func() error {
		page, err = s.listPage(t, opts)
		return err
	})
	if err != nil {
		return err
	}
	items, rv := page.items, page.rv
	if out == outputTable {
		table, err := s.buildTable(tableVersion, t.res, items, formatRV(rv), opts.includeObject, true)
		if err != nil {
			return err
		}
		table.Continue, table.RemainingItemCount = page.cont, page.remaining
		writeJSON(w, http.StatusOK, table)
		return nil
	}
	listMeta := metav1.ListMeta{ResourceVersion: formatRV(rv), Continue: page.cont, RemainingItemCount: page.remaining}
	if out == outputProtobuf {
		return writeProtoList(w, t.res, listMeta, items)
	}
	size := 128
	for _, e := range items {
		size += e.size + 1
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	metaJSON, err := json.Marshal(listMeta)
	if err != nil {
		return err
	}
	fmt.Fprintf(buf, `{"kind":%q,"apiVersion":%q,"metadata":%s,"items":[`,
		t.res.kind+"List", t.res.gv.String(), metaJSON)
	for i, e := range items {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(e.encoded())
	}
	buf.WriteString("]}")
	writeRaw(w, http.StatusOK, buf.Bytes())
	return nil
}

func isDryRun(r *http.Request) bool {
	return len(r.URL.Query()["dryRun"]) > 0
}

func (s *Server) now() metav1.Time {
	return metav1.NewTime(s.clock.Now().Truncate(time.Second))
}

// readObject decodes the request body of a create or update, with the request's field validation.
func readObject(r *http.Request, t target) (runtime.Object, []string, error) {
	fv, err := parseFieldValidation(r)
	if err != nil {
		return nil, nil, err
	}
	data, err := readObjectBody(r)
	if err != nil {
		return nil, nil, err
	}
	return decode(t.res, data, fv)
}

// create serves POST to a collection.
func (s *Server) create(w http.ResponseWriter, r *http.Request, t target) error {
	obj, warnings, err := readObject(r, t)
	if err != nil {
		return err
	}
	out, err := s.createObject(r.Context(), t, obj, isDryRun(r))
	if err != nil {
		return err
	}
	writeWarnings(w, warnings)
	return writeEntry(w, answerForm(r), http.StatusCreated, out)
}

// createObject is a create on a decoded object, shared by POST and the in-process client
// (direct.go): the request's namespace, the managed fields, then insert under the store lock.
// obj is the caller's to give away.
func (s *Server) createObject(ctx context.Context, t target, obj runtime.Object, dryRun bool) (*entry, error) {
	m := mustMeta(obj)
	switch {
	case !t.res.namespaced:
		m.SetNamespace("")
	case m.GetNamespace() == "":
		m.SetNamespace(t.namespace)
	case m.GetNamespace() != t.namespace:
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	// The managed fields of a create depend on the object alone, so they are computed before the
	// lock is taken, on the object as the create strategy will leave it.
	if t.res.prepareCreate != nil {
		t.res.prepareCreate(obj)
	}
	obj = s.trackFields(t, nil, nil, obj)
	t.tracked = true
	var out *entry
	var err error
	insert := func() error {
		return s.store.lockedAs(ctx, t.class, func() error {
			out, err = s.insert(t, obj, dryRun, "POST")
			return err
		})
	}
	err = insert()
	if errors.Is(err, errTooLarge) {
		// kube-apiserver's retry: the managed fields, which can be large, are dropped.
		mustMeta(obj).SetManagedFields(nil)
		err = insert()
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// insert stores obj as a new object, after naming it, the create strategy, the managed fields of
// the request's manager, and validation: the part of a create that holds the store lock, shared
// by POST and by a server-side apply that creates (verb PATCH, for the trace). The caller holds
// the store lock.
func (s *Server) insert(t target, obj runtime.Object, dryRun bool, verb string) (*entry, error) {
	// Admission mutates after the managed fields were computed, as in kube-apiserver, where what
	// mutating admission sets is owned by no manager.
	if err := s.admitCreate(t, obj); err != nil {
		return nil, err
	}
	if t.res.beginCreate != nil {
		if err := t.res.beginCreate(strategyStore{s}, obj, dryRun); err != nil {
			return nil, err
		}
	}
	m := mustMeta(obj)
	if m.GetName() == "" && m.GetGenerateName() != "" {
		for range 16 {
			m.SetName(m.GetGenerateName() + s.store.nameSuffix())
			if _, taken := s.store.get(t.res, m.GetNamespace(), m.GetName()); !taken {
				break
			}
		}
	}
	m.SetUID(s.store.newUID())
	m.SetCreationTimestamp(s.now())
	m.SetResourceVersion("")
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	if t.res.prepareCreate != nil {
		t.res.prepareCreate(obj)
	}
	obj = s.trackFields(t, nil, nil, obj)
	m = mustMeta(obj)
	if errs := validateObject(t.res, obj); len(errs) > 0 {
		return nil, apierrors.NewInvalid(t.res.gvk().GroupKind(), m.GetName(), errs)
	}
	if _, exists := s.store.get(t.res, m.GetNamespace(), m.GetName()); exists {
		return nil, apierrors.NewAlreadyExists(t.res.groupResource(), m.GetName())
	}
	if dryRun {
		return dryRunEntry(t.res, obj)
	}
	if err := checkStoredSize(t.res, obj); err != nil {
		return nil, err
	}
	out, err := s.store.commit(t.res, watch.Added, obj, nil)
	if err != nil {
		return nil, err
	}
	if err := s.afterCommit(t.res, watch.Added, out.meta()); err != nil {
		return nil, err
	}
	s.tracePod(t, trace.KindCreate, verb, out.obj)
	return out, nil
}

func dryRunEntry(res *resource, obj runtime.Object) (*entry, error) {
	obj.GetObjectKind().SetGroupVersionKind(res.gvk())
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", res.kind, err)
	}
	return newEntry(obj, raw), nil
}

// update serves PUT of an object or its status.
func (s *Server) update(w http.ResponseWriter, r *http.Request, t target) error {
	obj, warnings, err := readObject(r, t)
	if err != nil {
		return err
	}
	out, err := s.updateObject(r.Context(), t, obj, isDryRun(r))
	if err != nil {
		return err
	}
	writeWarnings(w, warnings)
	return writeEntry(w, answerForm(r), http.StatusOK, out)
}

// updateObject is an update to a decoded object, shared by PUT and the in-process client
// (direct.go). obj is not changed: each try of the update works on a copy.
func (s *Server) updateObject(ctx context.Context, t target, obj runtime.Object, dryRun bool) (*entry, error) {
	return s.updateOwned(ctx, t, obj.DeepCopyObject(), dryRun, func() (runtime.Object, error) {
		return obj.DeepCopyObject(), nil
	})
}

// updateOwned is updateObject on an object the caller gives away: the first try works on obj
// itself, and every further try (the stored object moved under it, or its managed fields must
// be dropped) on what again makes, an object equal to obj as it was given. The in-process client
// makes each try's object from the caller's with the wire's copy, so a write that stores at the
// first try copies the object once, not twice.
func (s *Server) updateOwned(ctx context.Context, t target, obj runtime.Object, dryRun bool, again func() (runtime.Object, error)) (*entry, error) {
	if err := checkIdentity(t, mustMeta(obj)); err != nil {
		return nil, err
	}
	first := true
	return s.guaranteedUpdate(ctx, t, dryRun, "PUT", func(*entry) (runtime.Object, error) {
		if first {
			first = false
			return obj, nil
		}
		return again()
	})
}

// guaranteedUpdate writes the object tryUpdate makes from the stored one, as kube-apiserver's
// GuaranteedUpdate does: the strategy and the field manager, whose cost grows with the request's
// managedFields (15 s of CPU for 15,000 entries), run without the store lock on the version read
// first; the write then commits only if the object is still that version, else it all runs again
// on the newer one. An object too large to store is tried once more with its managed fields
// dropped and not tracked, as kube-apiserver does when etcd refuses it (errTooLarge).
func (s *Server) guaranteedUpdate(ctx context.Context, t target, dryRun bool, verb string, tryUpdate func(old *entry) (runtime.Object, error)) (*entry, error) {
	dropManaged := false
	for try := 0; ; try++ {
		var old *entry
		err := s.store.lockedAs(ctx, t.class, func() error {
			var ok bool
			if old, ok = s.store.get(t.res, t.namespace, t.name); !ok {
				return apierrors.NewNotFound(t.res.groupResource(), t.name)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		obj, err := tryUpdate(old)
		if err != nil {
			return nil, err
		}
		tt := t
		if dropManaged {
			mustMeta(obj).SetManagedFields(nil)
			tt.tracked = true
		}
		next, err := s.prepareUpdate(tt, old, obj, verb)
		if err != nil {
			return nil, err
		}
		if s.afterTry != nil {
			s.afterTry(try)
		}
		var out *entry
		var moved bool
		err = s.store.lockedAs(ctx, t.class, func() error {
			cur, ok := s.store.get(t.res, t.namespace, t.name)
			switch {
			case !ok:
				return apierrors.NewNotFound(t.res.groupResource(), t.name)
			case cur != old:
				moved = true
				return nil
			}
			out, err = s.commitUpdate(tt, old, next, dryRun, verb)
			return err
		})
		switch {
		case errors.Is(err, errTooLarge) && !dropManaged:
			dropManaged = true
			continue
		case err != nil:
			return nil, err
		case moved:
			if err := ctx.Err(); err != nil {
				return nil, err // the client is gone
			}
			continue
		}
		return out, nil
	}
}

// checkIdentity rejects a body that names another object than the URL, as kube-apiserver's
// update and patch handlers do (EnsureObjectNamespaceMatchesRequestNamespace, then checkName,
// in staging/src/k8s.io/apiserver/pkg/endpoints/handlers): the namespace first, then the name,
// which must be there (a PUT without one, a patch that removes it or replaces the metadata:
// ContextBasedNaming.ObjectName's errEmptyName, 400).
func checkIdentity(t target, m metav1.Object) error {
	if t.res.namespaced && m.GetNamespace() != "" && m.GetNamespace() != t.namespace {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	switch m.GetName() {
	case t.name:
	case "":
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s based on URL) was undeterminable: name must be provided", t.name))
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), t.name))
	}
	return nil
}

// applyUpdate makes newObj the next version of old: prepareUpdate and commitUpdate at once, for a
// server-side apply, whose merge already recorded the managed fields. The caller holds the store
// lock.
func (s *Server) applyUpdate(t target, old *entry, newObj runtime.Object, dryRun bool, verb string) (*entry, error) {
	next, err := s.prepareUpdate(t, old, newObj, verb)
	if err != nil {
		return nil, err
	}
	return s.commitUpdate(t, old, next, dryRun, verb)
}

// prepareUpdate makes newObj the next version of old, unless a precondition fails: the strategy,
// then the managed fields of the request's manager (unless t.tracked). It reads the store only
// through old and needs no lock; newObj is the caller's to give away.
//
// The checks and their order are kube-apiserver's Store.Update (staging/src/k8s.io/apiserver/
// pkg/registry/generic/registry/store.go). A PUT's UID is a precondition (its handler's
// DefaultUpdatedObjectInfo holds the object), which the storage checks before anything else:
// 409. A patch's is not (DefaultUpdatedObjectInfo(nil)): a patched UID that differs fails
// BeforeUpdate's validation as an immutable field, 422, after the resource version's checks.
// A resource version that is no number fails ObjectResourceVersion's parse, an error that is
// no Status: 500 with the bare message.
func (s *Server) prepareUpdate(t target, old *entry, newObj runtime.Object, verb string) (runtime.Object, error) {
	res, om, nm := t.res, old.meta(), mustMeta(newObj)
	uid := nm.GetUID()
	if verb == "PUT" && uid != "" && uid != om.GetUID() {
		return nil, apierrors.NewConflict(res.groupResource(), t.name,
			//lint:ignore ST1005 kube-apiserver's exact message, which clients show
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, om.GetUID()))
	}
	if rv := nm.GetResourceVersion(); rv != "" {
		if _, err := strconv.ParseUint(rv, 10, 64); err != nil {
			return nil, statusError(http.StatusInternalServerError, metav1.StatusReasonUnknown, err.Error())
		}
		if rv != om.GetResourceVersion() {
			return nil, apierrors.NewConflict(res.groupResource(), t.name,
				fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
		}
	}
	if uid != "" && uid != om.GetUID() {
		// BeforeUpdate's validateCommonFields and the kind's update validation
		// (ValidateObjectMetaUpdate) each report it: two causes, one message; a core/v1
		// event's update validation checks no metadata (ValidateEventUpdate keeps the legacy
		// rules for that version), nor do an EndpointSlice's and a CSINode's
		// (ValidateEndpointSliceUpdate, ValidateCSINodeUpdate): one.
		immutable := field.Invalid(field.NewPath("metadata", "uid"), uid, "field is immutable")
		errs := field.ErrorList{immutable, immutable}
		if res == eventsTarget || res.kind == "EndpointSlice" || res.kind == "CSINode" {
			errs = errs[:1]
		}
		return nil, apierrors.NewInvalid(res.gvk().GroupKind(), t.name, errs)
	}
	next := newObj
	sub, _ := res.subresource(t.subresource)
	switch {
	case sub.prepare != nil:
		next = sub.prepare(old.obj, newObj)
		if t.tracked {
			mustMeta(next).SetManagedFields(nm.GetManagedFields())
		}
	case t.subresource == "status":
		// kube-apiserver's status strategies (pods, nodes, namespaces, services) take only the
		// spec from the stored object; the rest of the metadata is the request's, as on an update
		// (rest.BeforeUpdate), so labels, annotations and finalizers sent with a status write are
		// kept. The pod status strategy also keeps the stored owner references, which old
		// kubelets corrupted.
		keepStoredSpec(old.obj, newObj)
		keepStoredMeta(om, nm)
		if res.statusKeepsOwners {
			nm.SetOwnerReferences(om.GetOwnerReferences())
		}
	default:
		keepStoredMeta(om, nm)
		if res.prepareUpdate != nil {
			if errs := res.prepareUpdate(old.obj, next); len(errs) > 0 {
				return nil, apierrors.NewInvalid(res.gvk().GroupKind(), t.name, errs)
			}
		}
	}
	return s.trackFields(t, old.obj, old.raw, next), nil
}

// keepStoredMeta gives nm the metadata an update never changes: the identity, the creation and
// deletion marks and the generation, which the kind's strategy alone moves.
func keepStoredMeta(om, nm metav1.Object) {
	nm.SetName(om.GetName())
	nm.SetNamespace(om.GetNamespace())
	nm.SetUID(om.GetUID())
	nm.SetCreationTimestamp(om.GetCreationTimestamp())
	nm.SetDeletionTimestamp(om.GetDeletionTimestamp())
	nm.SetDeletionGracePeriodSeconds(om.GetDeletionGracePeriodSeconds())
	nm.SetGeneration(om.GetGeneration())
}

// keepStoredSpec sets the spec of newObj to old's, for a kind with a status subresource (a
// struct with a Spec field): what the status strategies do, as kube-apiserver's do, by
// assignment. The new version shares the spec's lists, maps and pointers with the stored one
// instead of a deep copy each (a pod's spec is most of it: a fleet's status writes kept one copy
// of it a version, in the current and the watch history's versions). Nothing past this point
// writes through them: the field manager, validation and the encoding read them, and the store
// interns only newObj's own top-level fields (podintern.Table.StoredPod). Sizing and encoding
// would write a pointer quantity's cached string if it had none, but every stored version's
// quantities have theirs: a write's checkStoredSize fills them before it stores, and a store
// loaded from disk sizes each object as it loads it (loadTx).
func keepStoredSpec(old, newObj runtime.Object) {
	reflect.ValueOf(newObj).Elem().FieldByName("Spec").Set(reflect.ValueOf(old).Elem().FieldByName("Spec"))
}

// commitUpdate validates next, the version prepareUpdate made of old, and stores it. An update
// that changes nothing writes nothing, as on the real server. The caller holds the store lock,
// and old is still the stored version: the kind's beginUpdate (an allocation against the store,
// as kube-apiserver's storage hooks make after the field manager ran) runs here.
func (s *Server) commitUpdate(t target, old *entry, next runtime.Object, dryRun bool, verb string) (*entry, error) {
	res := t.res
	if res.beginUpdate != nil && t.subresource == "" {
		if err := res.beginUpdate(strategyStore{s}, old.obj, next, dryRun); err != nil {
			return nil, err
		}
	}
	var errs field.ErrorList
	if res.validateUpdate != nil && t.subresource == "" {
		errs = res.validateUpdate(old.obj, next)
	}
	errs = append(errs, validateObject(res, next)...)
	if sub, _ := res.subresource(t.subresource); sub.validate != nil {
		errs = sub.validate(old.obj, next, errs)
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(res.gvk().GroupKind(), t.name, errs)
	}
	mustMeta(next).SetResourceVersion(old.meta().GetResourceVersion())
	candidate, err := dryRunEntry(res, next)
	if err != nil {
		return nil, err
	}
	if old.sameEncoding(candidate.raw) || dryRun {
		return candidate, nil
	}
	if err := checkStoredSize(res, next); err != nil {
		return nil, err
	}
	e, err := s.store.commitEncoded(res, watch.Modified, next, old, candidate)
	if err != nil {
		return nil, err
	}
	if t.subresource == "status" {
		s.tracePod(t, trace.KindStatus, verb, e.obj)
	} else {
		s.tracePod(t, trace.KindUpdate, verb, e.obj)
	}
	return e, nil
}

// maxStoredObjectBytes is the largest write etcd accepts by default (--max-request-bytes,
// 1.5 MiB): kube-apiserver's bound on one stored object, its key and its envelope.
const maxStoredObjectBytes = 3 << 19

// storedOverhead approximates what etcd's request adds to the object's protobuf encoding: the
// key (/registry/RESOURCE/NAMESPACE/NAME), the k8s\x00 envelope with apiVersion and kind.
const storedOverhead = 512

// errTooLarge is etcd's refusal of a write larger than maxStoredObjectBytes, as kube-apiserver
// passes it on: 500 with etcd's message.
var errTooLarge = statusError(http.StatusInternalServerError, metav1.StatusReasonUnknown, "etcdserver: request is too large")

// checkStoredSize refuses with errTooLarge an object that etcd would refuse to store: its size is
// measured as etcd stores it, in protobuf, which the API types know without encoding.
func checkStoredSize(res *resource, obj runtime.Object) error {
	sized, ok := obj.(interface{ Size() int })
	if ok && sized.Size()+storedOverhead > maxStoredObjectBytes {
		return errTooLarge
	}
	return nil
}

// delete serves DELETE of one object.
func (s *Server) delete(w http.ResponseWriter, r *http.Request, t target) error {
	opts, err := parseDeleteOptions(r)
	if err != nil {
		return err
	}
	out, removed, err := s.deleteObject(r.Context(), t, opts, isDryRun(r) || len(opts.DryRun) > 0)
	if err != nil {
		return err
	}
	if t.res.returnDeleted || !removed {
		return writeEntry(w, answerForm(r), http.StatusOK, out)
	}
	writeObject(w, answerForm(r), http.StatusOK, successStatus(t.res, t.name, string(out.meta().GetUID())))
	return nil
}

// deleteObject is a delete with decoded options, shared by DELETE and the in-process client
// (direct.go). It returns the object as last stored, and whether it is gone (a graceful delete
// leaves it, with its deletionTimestamp).
func (s *Server) deleteObject(ctx context.Context, t target, opts metav1.DeleteOptions, dryRun bool) (*entry, bool, error) {
	var out *entry
	var removed bool
	err := s.store.lockedAs(ctx, t.class, func() error {
		old, ok := s.store.get(t.res, t.namespace, t.name)
		if !ok {
			return apierrors.NewNotFound(t.res.groupResource(), t.name)
		}
		if err := checkPreconditions(t, old, opts.Preconditions); err != nil {
			return err
		}
		var err error
		switch t.res.name {
		case "pods":
			out, removed, err = s.deletePod(t, old, opts, dryRun)
			return err
		case "namespaces":
			out, removed, err = s.deleteNamespace(t, old, dryRun)
			return err
		}
		removed = true
		if dryRun {
			out = old
			return nil
		}
		if out, err = s.store.commit(t.res, watch.Deleted, old.obj.DeepCopyObject(), old); err != nil {
			return err
		}
		return s.afterCommit(t.res, watch.Deleted, out.meta())
	})
	if err != nil {
		return nil, false, err
	}
	return out, removed, nil
}

func parseDeleteOptions(r *http.Request) (metav1.DeleteOptions, error) {
	var opts metav1.DeleteOptions
	b, err := readObjectBody(r)
	if err != nil {
		return opts, err
	}
	switch {
	case b.proto && len(b.data) > 0:
		gvk := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
		if _, _, err := protoDecoder.Decode(b.data, &gvk, &opts); err != nil {
			return opts, apierrors.NewBadRequest(fmt.Sprintf("decoding DeleteOptions: %v", err))
		}
	case len(bytes.TrimSpace(b.data)) > 0:
		if err := json.Unmarshal(b.data, &opts); err != nil {
			return opts, apierrors.NewBadRequest(fmt.Sprintf("decoding DeleteOptions: %v", err))
		}
	}
	if v := r.URL.Query().Get("gracePeriodSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return opts, apierrors.NewBadRequest(fmt.Sprintf("invalid gracePeriodSeconds %q", v))
		}
		opts.GracePeriodSeconds = &n
	}
	return opts, nil
}

func checkPreconditions(t target, old *entry, pre *metav1.Preconditions) error {
	if pre == nil {
		return nil
	}
	m := old.meta()
	if pre.UID != nil && *pre.UID != m.GetUID() {
		return apierrors.NewConflict(t.res.groupResource(), t.name,
			//lint:ignore ST1005 kube-apiserver's exact message, which clients show
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *pre.UID, m.GetUID()))
	}
	if pre.ResourceVersion != nil && *pre.ResourceVersion != m.GetResourceVersion() {
		return apierrors.NewConflict(t.res.groupResource(), t.name,
			//lint:ignore ST1005 kube-apiserver's exact message, which clients show
			fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v",
				*pre.ResourceVersion, m.GetResourceVersion()))
	}
	return nil
}

// writeProtoList answers a list in protobuf: the resource's list kind with its items, which in
// protobuf carry no kind or apiVersion, as from kube-apiserver. The items are the entries' own
// encodings (entry.protoMessage), made once per stored version, as a JSON list is made of their
// stored JSON.
func writeProtoList(w http.ResponseWriter, res *resource, listMeta metav1.ListMeta, items []*entry) error {
	msgs := make([][]byte, len(items))
	for i, e := range items {
		msg, err := e.protoMessage()
		if err != nil {
			return err
		}
		msgs[i] = msg
	}
	raw, err := protoListBody(res.gv.WithKind(res.kind+"List"), listMeta, msgs)
	if err != nil {
		return err
	}
	writeProto(w, http.StatusOK, raw)
	return nil
}
