package fakeapiserver

import (
	"bytes"
	"encoding/json"
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
	err = s.store.locked(func() error {
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
	writeRaw(w, http.StatusOK, e.raw)
	return nil
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
	err = s.store.locked(func() error {
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
	size := 128
	for _, e := range items {
		size += len(e.raw) + 1
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	listMeta, err := json.Marshal(metav1.ListMeta{ResourceVersion: formatRV(rv), Continue: page.cont, RemainingItemCount: page.remaining})
	if err != nil {
		return err
	}
	fmt.Fprintf(buf, `{"kind":%q,"apiVersion":%q,"metadata":%s,"items":[`,
		t.res.kind+"List", t.res.gv.String(), listMeta)
	for i, e := range items {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(e.raw)
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
	m := mustMeta(obj)
	switch {
	case !t.res.namespaced:
		m.SetNamespace("")
	case m.GetNamespace() == "":
		m.SetNamespace(t.namespace)
	case m.GetNamespace() != t.namespace:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	// The managed fields of a create depend on the object alone, so they are computed before the
	// lock is taken, on the object as the create strategy will leave it.
	if t.res.prepareCreate != nil {
		t.res.prepareCreate(obj)
	}
	obj = s.trackFields(t, nil, obj)
	t.tracked = true
	var out *entry
	err = s.store.locked(func() error {
		out, err = s.insert(t, obj, isDryRun(r), "POST")
		return err
	})
	if err != nil {
		return err
	}
	writeWarnings(w, warnings)
	writeRaw(w, http.StatusCreated, out.raw)
	return nil
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
		if err := t.res.beginCreate(s, obj, dryRun); err != nil {
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
	obj = s.trackFields(t, nil, obj)
	m = mustMeta(obj)
	if errs := t.res.validate(obj); len(errs) > 0 {
		return nil, apierrors.NewInvalid(t.res.gvk().GroupKind(), m.GetName(), errs)
	}
	if _, exists := s.store.get(t.res, m.GetNamespace(), m.GetName()); exists {
		return nil, apierrors.NewAlreadyExists(t.res.groupResource(), m.GetName())
	}
	if dryRun {
		return dryRunEntry(t.res, obj)
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
	return &entry{obj: obj, raw: raw}, nil
}

// update serves PUT of an object or its status.
func (s *Server) update(w http.ResponseWriter, r *http.Request, t target) error {
	obj, warnings, err := readObject(r, t)
	if err != nil {
		return err
	}
	if err := checkIdentity(t, mustMeta(obj)); err != nil {
		return err
	}
	var out *entry
	err = s.store.locked(func() error {
		old, ok := s.store.get(t.res, t.namespace, t.name)
		if !ok {
			return apierrors.NewNotFound(t.res.groupResource(), t.name)
		}
		out, err = s.applyUpdate(t, old, obj, isDryRun(r), "PUT")
		return err
	})
	if err != nil {
		return err
	}
	writeWarnings(w, warnings)
	writeRaw(w, http.StatusOK, out.raw)
	return nil
}

// checkIdentity rejects a body that names another object than the URL.
func checkIdentity(t target, m metav1.Object) error {
	if m.GetName() != "" && m.GetName() != t.name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), t.name))
	}
	if t.res.namespaced && m.GetNamespace() != "" && m.GetNamespace() != t.namespace {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// applyUpdate makes newObj the next version of old, after the preconditions, the strategy and
// validation. An update that changes nothing writes nothing, as on the real server. The caller
// holds the store lock.
func (s *Server) applyUpdate(t target, old *entry, newObj runtime.Object, dryRun bool, verb string) (*entry, error) {
	res, om, nm := t.res, old.meta(), mustMeta(newObj)
	if rv := nm.GetResourceVersion(); rv != "" && rv != om.GetResourceVersion() {
		return nil, apierrors.NewConflict(res.groupResource(), t.name,
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	if uid := nm.GetUID(); uid != "" && uid != om.GetUID() {
		return nil, apierrors.NewConflict(res.groupResource(), t.name,
			//lint:ignore ST1005 kube-apiserver's exact message, which clients show
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, om.GetUID()))
	}
	next := newObj
	if t.subresource == "status" {
		next = old.obj.DeepCopyObject()
		field := reflect.ValueOf(next).Elem().FieldByName("Status")
		field.Set(reflect.ValueOf(newObj).Elem().FieldByName("Status"))
		if res.statusWritesMeta {
			mustMeta(next).SetLabels(nm.GetLabels())
			mustMeta(next).SetAnnotations(nm.GetAnnotations())
		}
		if t.tracked {
			// The apply recorded its fields on the object it returns.
			mustMeta(next).SetManagedFields(nm.GetManagedFields())
		}
	} else {
		nm.SetName(om.GetName())
		nm.SetNamespace(om.GetNamespace())
		nm.SetUID(om.GetUID())
		nm.SetCreationTimestamp(om.GetCreationTimestamp())
		nm.SetDeletionTimestamp(om.GetDeletionTimestamp())
		nm.SetDeletionGracePeriodSeconds(om.GetDeletionGracePeriodSeconds())
		nm.SetGeneration(om.GetGeneration())
		if res.prepareUpdate != nil {
			if errs := res.prepareUpdate(old.obj, next); len(errs) > 0 {
				return nil, apierrors.NewInvalid(res.gvk().GroupKind(), t.name, errs)
			}
		}
		if res.beginUpdate != nil {
			if err := res.beginUpdate(s, old.obj, next, dryRun); err != nil {
				return nil, err
			}
		}
	}
	next = s.trackFields(t, old.obj, next)
	var errs field.ErrorList
	if res.validateUpdate != nil && t.subresource == "" {
		errs = res.validateUpdate(old.obj, next)
	}
	if errs = append(errs, res.validate(next)...); len(errs) > 0 {
		return nil, apierrors.NewInvalid(res.gvk().GroupKind(), t.name, errs)
	}
	mustMeta(next).SetResourceVersion(om.GetResourceVersion())
	candidate, err := dryRunEntry(res, next)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(candidate.raw, old.raw) || dryRun {
		return candidate, nil
	}
	e, err := s.store.commit(res, watch.Modified, next, old)
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

// delete serves DELETE of one object.
func (s *Server) delete(w http.ResponseWriter, r *http.Request, t target) error {
	opts, err := parseDeleteOptions(r)
	if err != nil {
		return err
	}
	dryRun := isDryRun(r) || len(opts.DryRun) > 0
	var out *entry
	var removed bool
	err = s.store.locked(func() error {
		old, ok := s.store.get(t.res, t.namespace, t.name)
		if !ok {
			return apierrors.NewNotFound(t.res.groupResource(), t.name)
		}
		if err := checkPreconditions(t, old, opts.Preconditions); err != nil {
			return err
		}
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
		return err
	}
	if t.res.returnDeleted || !removed {
		writeRaw(w, http.StatusOK, out.raw)
		return nil
	}
	writeJSON(w, http.StatusOK, successStatus(t.res, t.name, string(out.meta().GetUID())))
	return nil
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
