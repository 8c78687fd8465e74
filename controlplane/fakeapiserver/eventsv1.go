package fakeapiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// events.k8s.io/v1 Events are the core/v1 Events in another shape, as in kube-apiserver, where
// both versions share one storage and are converted on the way in and out. Here a request to
// events.k8s.io is turned into the core/v1 request it amounts to (its body and field selector
// converted), served by the core handlers, and the answer converted back: objects, lists and
// every line of a watch. A create through events.k8s.io/v1 gets its stricter validation
// (eventTime, reportingController, reportingInstance, action and type required; the deprecated
// fields unset).

var eventsV = schema.GroupVersion{Group: "events.k8s.io", Version: "v1"}

func eventsV1Resource() *resource {
	return &resource{
		name: "events", singular: "event", kind: "Event", gv: eventsV, namespaced: true,
		shortNames: []string{"ev"}, view: true, verbs: verbsStored,
		newObj:   func() runtime.Object { return &eventsv1.Event{} },
		fieldSet: eventsV1Fields,
		validate: func(runtime.Object) field.ErrorList { return nil },
		columns:  eventColumns,
		cells: func(now time.Time, obj runtime.Object) []any {
			return eventCells(now, eventToCore(obj.(*eventsv1.Event)))
		},
	}
}

// eventsV1FieldLabels maps the field labels of events.k8s.io/v1 to core/v1's, as kube-apiserver's
// AddFieldLabelConversionsForEvent does; no other label is supported.
var eventsV1FieldLabels = map[string]string{
	"reason":                    "reason",
	"regarding.kind":            "involvedObject.kind",
	"regarding.namespace":       "involvedObject.namespace",
	"regarding.name":            "involvedObject.name",
	"regarding.uid":             "involvedObject.uid",
	"regarding.apiVersion":      "involvedObject.apiVersion",
	"regarding.resourceVersion": "involvedObject.resourceVersion",
	"regarding.fieldPath":       "involvedObject.fieldPath",
	"reportingController":       "reportingComponent",
	"type":                      "type",
	"metadata.namespace":        "metadata.namespace",
	"metadata.name":             "metadata.name",
}

func eventsV1Fields(obj runtime.Object) fields.Set {
	core := eventFields(eventToCore(obj.(*eventsv1.Event)))
	set := fields.Set{}
	for v1Label, coreLabel := range eventsV1FieldLabels {
		set[v1Label] = core[coreLabel]
	}
	return set
}

// eventToCore is Convert_v1_Event_To_core_Event.
func eventToCore(in *eventsv1.Event) *corev1.Event {
	return &corev1.Event{
		TypeMeta:            metav1.TypeMeta{Kind: "Event", APIVersion: "v1"},
		ObjectMeta:          in.ObjectMeta,
		InvolvedObject:      in.Regarding,
		Reason:              in.Reason,
		Message:             in.Note,
		Source:              in.DeprecatedSource,
		FirstTimestamp:      in.DeprecatedFirstTimestamp,
		LastTimestamp:       in.DeprecatedLastTimestamp,
		Count:               in.DeprecatedCount,
		Type:                in.Type,
		EventTime:           in.EventTime,
		Series:              (*corev1.EventSeries)(in.Series),
		Action:              in.Action,
		Related:             in.Related,
		ReportingController: in.ReportingController,
		ReportingInstance:   in.ReportingInstance,
	}
}

// eventFromCore is Convert_core_Event_To_v1_Event.
func eventFromCore(in *corev1.Event) *eventsv1.Event {
	return &eventsv1.Event{
		TypeMeta:                 metav1.TypeMeta{Kind: "Event", APIVersion: eventsV.String()},
		ObjectMeta:               in.ObjectMeta,
		EventTime:                in.EventTime,
		Series:                   (*eventsv1.EventSeries)(in.Series),
		ReportingController:      in.ReportingController,
		ReportingInstance:        in.ReportingInstance,
		Action:                   in.Action,
		Reason:                   in.Reason,
		Regarding:                in.InvolvedObject,
		Related:                  in.Related,
		Note:                     in.Message,
		Type:                     in.Type,
		DeprecatedSource:         in.Source,
		DeprecatedFirstTimestamp: in.FirstTimestamp,
		DeprecatedLastTimestamp:  in.LastTimestamp,
		DeprecatedCount:          in.Count,
	}
}

// Length limits of an event's fields, from kube-apiserver's event validation.
const (
	reportingInstanceLengthLimit = 128
	actionLengthLimit            = 128
	reasonLengthLimit            = 128
	noteLengthLimit              = 1024
)

// validateEventsV1Create is the part of ValidateEventCreate that applies to a create through
// events.k8s.io/v1 (the core/v1 checks run after conversion, as for any Event).
func validateEventsV1Create(ev *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	if ev.Series != nil {
		if ev.Series.Count < 2 {
			errs = append(errs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
		}
		if ev.Series.LastObservedTime.IsZero() {
			errs = append(errs, field.Required(field.NewPath("series.lastObservedTime"), ""))
		}
	}
	if ev.EventTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
	} else {
		if ev.InvolvedObject.Namespace == "" && ev.Namespace != metav1.NamespaceDefault && ev.Namespace != metav1.NamespaceSystem {
			errs = append(errs, field.Invalid(field.NewPath("involvedObject", "namespace"), ev.InvolvedObject.Namespace, "does not match event.namespace"))
		}
		if ev.ReportingController == "" {
			errs = append(errs, field.Required(field.NewPath("reportingController"), ""))
		}
		for _, msg := range validation.IsQualifiedName(ev.ReportingController) {
			errs = append(errs, field.Invalid(field.NewPath("reportingController"), ev.ReportingController, msg))
		}
		for _, c := range []struct {
			name  string
			value string
			limit int
		}{
			{"reportingInstance", ev.ReportingInstance, reportingInstanceLengthLimit},
			{"action", ev.Action, actionLengthLimit},
			{"reason", ev.Reason, reasonLengthLimit},
		} {
			if c.value == "" {
				errs = append(errs, field.Required(field.NewPath(c.name), ""))
			}
			if len(c.value) > c.limit {
				errs = append(errs, field.Invalid(field.NewPath(c.name), "", fmt.Sprintf("can have at most %v characters", c.limit)))
			}
		}
		if len(ev.Message) > noteLengthLimit {
			errs = append(errs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", noteLengthLimit)))
		}
	}
	if ev.Type != corev1.EventTypeNormal && ev.Type != corev1.EventTypeWarning {
		errs = append(errs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", ev.Type)))
	}
	if !ev.FirstTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("firstTimestamp"), "", "needs to be unset"))
	}
	if !ev.LastTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("lastTimestamp"), "", "needs to be unset"))
	}
	if ev.Count != 0 {
		errs = append(errs, field.Invalid(field.NewPath("count"), "", "needs to be unset"))
	}
	if ev.Source.Component != "" || ev.Source.Host != "" {
		errs = append(errs, field.Invalid(field.NewPath("source"), "", "needs to be unset"))
	}
	return errs
}

// serveEventsV1 serves a request to events.k8s.io/v1 events through the core/v1 handlers.
func (s *Server) serveEventsV1(w http.ResponseWriter, r *http.Request, t target) {
	core := t
	core.res = s.store.resource("events")
	r2, err := eventsV1CoreRequest(r)
	if err != nil {
		writeError(w, err)
		return
	}
	isWatch := t.watch || queryBool(r, "watch")
	switch {
	case r.Method == http.MethodGet && isWatch:
		cw := &convertingWriter{w: w}
		s.serveResource(cw, r2, core)
		cw.finish()
		return
	case (r.Method == http.MethodPost && t.name == "") || (r.Method == http.MethodPut && t.name != ""):
		if err := eventsV1CoreBody(r2, t, r.Method == http.MethodPost); err != nil {
			writeError(w, err)
			return
		}
	case r.Method == http.MethodPatch && t.name != "":
		s.patchEventsV1(w, r2, t, core)
		return
	}
	rec := httptest.NewRecorder()
	s.serveResource(rec, r2, core)
	writeConverted(w, rec)
}

// eventsV1CoreRequest copies r with its field selector in core/v1's labels.
func eventsV1CoreRequest(r *http.Request) (*http.Request, error) {
	r2 := r.Clone(r.Context())
	// The view converts the core/v1 handlers' JSON: it answers in JSON only.
	if answerForm(r) == outputProtobuf {
		r2.Header.Set("Accept", "application/json")
	}
	q := r2.URL.Query()
	if v := q.Get("fieldSelector"); v != "" {
		sel, err := fields.ParseSelector(v)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
		}
		sel, err = sel.Transform(func(label, value string) (string, string, error) {
			core, ok := eventsV1FieldLabels[label]
			if !ok {
				return "", "", fmt.Errorf("field label not supported: %s", label)
			}
			return core, value, nil
		})
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		q.Set("fieldSelector", sel.String())
		r2.URL.RawQuery = q.Encode()
	}
	return r2, nil
}

// eventsV1CoreBody replaces the body of a create or update with the core/v1 Event it converts to,
// after events.k8s.io/v1's validation of a create.
func eventsV1CoreBody(r *http.Request, t target, create bool) error {
	obj, _, err := readObject(r, t)
	if err != nil {
		return err
	}
	ev := eventToCore(obj.(*eventsv1.Event))
	if create {
		if errs := validateEventsV1Create(ev); len(errs) > 0 {
			return apierrors.NewInvalid(t.res.gvk().GroupKind(), ev.Name, errs)
		}
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode event %s: %w", ev.Name, err)
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	r.ContentLength = int64(len(raw))
	r.Header.Set("Content-Type", "application/json")
	return nil
}

// patchEventsV1 applies a patch to the events.k8s.io/v1 form of the event and writes the result
// back as a core/v1 update guarded by the resource version it read, again if that moved on.
func (s *Server) patchEventsV1(w http.ResponseWriter, r *http.Request, t, core target) {
	ct := r.Header.Get("Content-Type")
	pt := types.PatchType(strings.TrimSpace(strings.Split(ct, ";")[0]))
	switch pt {
	case types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType:
	default:
		writeError(w, unsupportedMediaType(ct, patchMediaTypes))
		return
	}
	data, err := readBody(r)
	if err != nil {
		writeError(w, err)
		return
	}
	p, err := newPatchRequest(pt, data)
	if err != nil {
		writeError(w, err)
		return
	}
	for {
		var old *entry
		err := s.store.lockedAs(r.Context(), core.class, func() error {
			var ok bool
			if old, ok = s.store.get(core.res, core.namespace, core.name); !ok {
				return apierrors.NewNotFound(t.res.groupResource(), t.name)
			}
			return nil
		})
		if err != nil {
			writeError(w, err)
			return
		}
		v1raw, err := json.Marshal(eventFromCore(old.obj.(*corev1.Event)))
		if err == nil {
			v1raw, err = p.apply(t.res, v1raw)
		}
		var patched eventsv1.Event
		if err == nil {
			if uerr := json.Unmarshal(v1raw, &patched); uerr != nil {
				err = apierrors.NewBadRequest(fmt.Sprintf("Event in version %q cannot be handled as a Event: %v", eventsV.Version, uerr))
			}
		}
		if err != nil {
			writeError(w, err)
			return
		}
		ev := eventToCore(&patched)
		// The patched object's namespace and name are checked first (400), as kube-apiserver's
		// patch handler checks them before the update's validation.
		if err := checkIdentity(core, &ev.ObjectMeta); err != nil {
			writeError(w, err)
			return
		}
		if uid := old.meta().GetUID(); ev.UID != "" && ev.UID != uid {
			// A patch carries no UID precondition: another UID fails the update's validation,
			// as on a core/v1 patch (prepareUpdate). The PUT below would take it for one, and
			// its conflict would be tried again for ever.
			immutable := field.Invalid(field.NewPath("metadata", "uid"), ev.UID, "field is immutable")
			writeError(w, apierrors.NewInvalid(core.res.gvk().GroupKind(), t.name, field.ErrorList{immutable, immutable}))
			return
		}
		ev.ResourceVersion = old.meta().GetResourceVersion()
		raw, err := json.Marshal(ev)
		if err != nil {
			writeError(w, err)
			return
		}
		put := r.Clone(r.Context())
		put.Method = http.MethodPut
		put.Body = io.NopCloser(bytes.NewReader(raw))
		put.ContentLength = int64(len(raw))
		put.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.serveResource(rec, put, core)
		if rec.Code == http.StatusConflict && r.Context().Err() == nil {
			continue
		}
		writeConverted(w, rec)
		return
	}
}

// writeConverted writes a recorded core/v1 answer with its Events and EventLists converted.
func writeConverted(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, vs := range rec.Header() {
		w.Header()[k] = vs
	}
	body := rec.Body.Bytes()
	if rec.Code < 300 {
		body = convertEventJSON(body)
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}

// convertEventJSON converts a core/v1 Event or EventList to events.k8s.io/v1; anything else
// (a Status, a Table) is returned as it is.
func convertEventJSON(raw []byte) []byte {
	var head metav1.TypeMeta
	if json.Unmarshal(raw, &head) != nil || head.APIVersion != "v1" {
		return raw
	}
	var out any
	switch head.Kind {
	case "Event":
		var ev corev1.Event
		if json.Unmarshal(raw, &ev) != nil {
			return raw
		}
		out = eventFromCore(&ev)
	case "EventList":
		var list corev1.EventList
		if json.Unmarshal(raw, &list) != nil {
			return raw
		}
		v1 := &eventsv1.EventList{
			TypeMeta: metav1.TypeMeta{Kind: "EventList", APIVersion: eventsV.String()},
			ListMeta: list.ListMeta, Items: make([]eventsv1.Event, 0, len(list.Items)),
		}
		for i := range list.Items {
			ev := eventFromCore(&list.Items[i])
			ev.TypeMeta = metav1.TypeMeta{}
			v1.Items = append(v1.Items, *ev)
		}
		out = v1
	default:
		return raw
	}
	converted, err := json.Marshal(out)
	if err != nil {
		return raw
	}
	return converted
}

// convertingWriter passes a core/v1 watch stream on with the object of every event converted.
// The core handler writes whole lines; a line split across writes waits for its end.
type convertingWriter struct {
	w       http.ResponseWriter
	partial []byte
}

func (c *convertingWriter) Header() http.Header         { return c.w.Header() }
func (c *convertingWriter) WriteHeader(code int)        { c.w.WriteHeader(code) }
func (c *convertingWriter) Unwrap() http.ResponseWriter { return c.w }

func (c *convertingWriter) Write(p []byte) (int, error) {
	c.partial = append(c.partial, p...)
	var out []byte
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		out = append(out, convertWatchLine(c.partial[:i])...)
		out = append(out, '\n')
		c.partial = c.partial[i+1:]
	}
	if len(out) > 0 {
		if _, err := c.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// FlushError flushes what was converted; http.ResponseController finds it.
func (c *convertingWriter) FlushError() error {
	return http.NewResponseController(c.w).Flush()
}

// finish writes what a response that is not a watch stream (an error Status) left unconverted.
func (c *convertingWriter) finish() {
	if len(c.partial) > 0 {
		_, _ = c.w.Write(c.partial)
		c.partial = nil
	}
}

func convertWatchLine(line []byte) []byte {
	var ev struct {
		Type   string          `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	if json.Unmarshal(line, &ev) != nil || ev.Type == "ERROR" {
		return line
	}
	ev.Object = convertEventJSON(ev.Object)
	out, err := json.Marshal(&ev)
	if err != nil {
		return line
	}
	return out
}
