package fakeapiserver

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/fieldmanager"
)

// Managed fields and server-side apply are the field manager's (internal/fieldmanager); this file
// names the manager of each write, hands the writes to it, and serves applies.

// fieldManager is the process's field manager, over the served resources and the OpenAPI models
// this server serves, which every Server of the process shares (openapi.go).
var fieldManager = sync.OnceValues(func() (*fieldmanager.Manager, error) {
	var rows []*fieldmanager.Resource
	for _, res := range resources() {
		if res.fields != nil {
			rows = append(rows, res.fields)
		}
	}
	return fieldmanager.New(fieldmanager.Options{
		Resources: rows,
		Scheme:    scheme,
		Models: func() (map[string]*spec.Schema, error) {
			specs, err := builtOpenAPI()
			if err != nil {
				return nil, err
			}
			return specs.models, nil
		},
	})
})

// fieldsResource is res as the field manager knows it: its names, its type and the
// subresources of its own kind (status, resize), whose writes it tracks under their names.
func fieldsResource(res *resource) *fieldmanager.Resource {
	out := &fieldmanager.Resource{Name: res.name, Kind: res.kind, GV: res.gv, New: res.newObj}
	for _, sub := range res.subresources {
		if sub.kind == "" {
			out.Subresources = append(out.Subresources, sub.name)
		}
	}
	return out
}

// write is the write t makes, as the field manager records it.
func (t target) write() fieldmanager.Write {
	return fieldmanager.Write{Resource: t.res.fields, Subresource: t.subresource, Manager: t.manager, Namespace: t.namespace, Name: t.name}
}

// trackFields records in obj's managedFields the fields this write sets, under t.manager, and
// returns the object to store (fieldmanager.Manager.Track); live is the stored object, nil for a
// create, and liveRaw its stored encoding (nil where the store keeps none). A server-side apply
// has already done so. Its cost grows with the managed fields of obj and live, so it runs
// without the store lock: on the object as read for an update (guaranteedUpdate), on the request
// alone for a create.
func (s *Server) trackFields(t target, live runtime.Object, liveRaw []byte, obj runtime.Object) runtime.Object {
	if t.tracked {
		return obj
	}
	fm, err := fieldManager()
	if err != nil {
		// The options are the server's own; a failure is a bug that every write would hit.
		panic(fmt.Sprintf("fakeapiserver: %v", err))
	}
	return fm.Track(t.write(), live, liveRaw, obj, s.now)
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
	fm, err := fieldManager()
	if err != nil {
		return err
	}
	if err := fm.Ready(); err != nil {
		return err
	}
	t.manager, t.tracked = opts.FieldManager, true
	force := opts.Force != nil && *opts.Force
	dryRun := len(opts.DryRun) > 0
	for {
		var old *entry
		_ = s.store.lockedAs(r.Context(), t.class, func() error {
			old, _ = s.store.get(t.res, t.namespace, t.name)
			return nil
		})
		live := t.res.newObj()
		if old != nil {
			live = old.obj.DeepCopyObject()
		} else if t.subresource != "" {
			return apierrors.NewNotFound(t.res.groupResource(), t.name)
		}
		obj, err := fm.Apply(t.write(), live, patch, force, s.now)
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
		err = s.store.lockedAs(r.Context(), t.class, func() error {
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
