package fakeapiserver

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/apf"
)

// target is what a resource URL names.
type target struct {
	res         *resource
	namespace   string // "" for cluster-scoped resources and for lists across namespaces
	name        string // "" for the collection
	subresource string // "" or "status"
	watch       bool   // the legacy /watch/ path prefix
	// manager is the field manager a write is recorded under (managedfields.go).
	manager string
	// tracked is set once the write's managed fields are recorded: by a server-side apply, whose
	// merge records them, and by a create, which records them before taking the store lock.
	tracked bool
	// class is where the request waits for the store lock (priority.go); the zero class, of
	// the store's own work, is exempt.
	class apf.Class
}

var served = func() map[string]*resource {
	m := map[string]*resource{}
	for _, res := range resources() {
		m[res.gv.String()+"/"+res.name] = res
	}
	return m
}()

// serveAPI handles /api and /apis: discovery documents and resource requests.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var gvSegs int
	switch {
	case segs[0] == "api" && len(segs) == 1:
		s.serveAPIVersions(w, r)
		return
	case segs[0] == "api" && len(segs) == 2:
		s.serveResourceList(w, r, segs[1])
		return
	case segs[0] == "api":
		gvSegs = 2
	case segs[0] == "apis" && len(segs) == 1:
		s.serveGroupList(w, r)
		return
	case segs[0] == "apis" && len(segs) == 2:
		s.serveGroup(w, r, segs[1])
		return
	case segs[0] == "apis" && len(segs) == 3:
		s.serveResourceList(w, r, segs[1]+"/"+segs[2])
		return
	case segs[0] == "apis":
		gvSegs = 3
	default:
		writeError(w, notFoundPath(r.URL.Path))
		return
	}
	gv := strings.Join(segs[1:gvSegs], "/")
	if gv == "v1" && s.serveKubeletProxy(w, r, segs[gvSegs:]) {
		return
	}
	t, ok := parseTarget(gv, segs[gvSegs:])
	if !ok || !t.res.servedBy(s) {
		writeError(w, notFoundPath(r.URL.Path))
		return
	}
	s.instrument(w, r, t, func(w http.ResponseWriter) { s.serveResource(w, r, t) })
}

// parseTarget parses [watch/][namespaces/NS/]RESOURCE[/NAME[/SUBRESOURCE]].
func parseTarget(gv string, segs []string) (target, bool) {
	var t target
	if len(segs) > 0 && segs[0] == "watch" {
		t.watch = true
		segs = segs[1:]
	}
	// namespaces/NAME/status is a namespace's own subresource, not a resource in it: no
	// namespaced resource is named as a namespace's subresource.
	if len(segs) == 3 && segs[0] == "namespaces" && segs[1] != "" && !t.watch {
		if res, ok := served[gv+"/namespaces"]; ok {
			if _, ok := res.subresource(segs[2]); ok {
				return target{res: res, name: segs[1], subresource: segs[2]}, true
			}
		}
	}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		t.namespace = segs[1]
		segs = segs[2:]
		if t.namespace == "" {
			return t, false
		}
	}
	if len(segs) == 0 || len(segs) > 3 {
		return t, false
	}
	res, ok := served[gv+"/"+segs[0]]
	if !ok || (t.namespace != "" && !res.namespaced) {
		return t, false
	}
	t.res = res
	if len(segs) > 1 {
		t.name = segs[1]
		if t.name == "" || (res.namespaced && t.namespace == "") {
			return t, false
		}
	}
	if len(segs) > 2 {
		t.subresource = segs[2]
		if _, ok := res.subresource(t.subresource); !ok {
			return t, false
		}
	}
	if t.watch && t.subresource != "" {
		return t, false
	}
	return t, true
}

// serveResource serves a request on a resource: a verb the resource (or subresource) does not
// serve is 405, as from kube-apiserver, which registers a route for each verb it serves and no
// other.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, t target) {
	verb := requestVerb(r, t)
	if !t.allows(verb) {
		writeErrorAs(w, answerForm(r), methodNotAllowed(r, t.res))
		return
	}
	if t.res.deprecation != "" {
		writeWarnings(w, []string{t.res.deprecation})
	}
	if verb&verbsWrite != 0 {
		// kube-apiserver's write handlers negotiate the answer first: an Accept that names
		// nothing the server produces is 406 (in JSON, the form it falls back to) before the body
		// is read or anything is written.
		if _, _, err := negotiate(r); err != nil {
			writeErrorAs(w, outputJSON, err)
			return
		}
	}
	t.manager = managerOf(r)
	t.class = requestClass(s.requestUser(), verb, t)
	var err error
	switch {
	case t.res.serve != nil:
		err = t.res.serve(s, w, r, t, verb)
	case t.res.view:
		s.serveEventsV1(w, r, t)
	case verb == verbWatch:
		err = s.watch(w, r, t)
	case verb == verbList:
		err = s.list(w, r, t)
	case verb == verbGet:
		err = s.get(w, r, t)
	case verb == verbCreate:
		switch t.subresource {
		case "binding":
			err = s.bind(w, r, t)
		case "token":
			err = s.createToken(w, r, t)
		default:
			err = s.create(w, r, t)
		}
	case verb == verbUpdate:
		err = s.update(w, r, t)
	case verb == verbPatch:
		err = s.patch(w, r, t)
	case verb == verbDelete:
		err = s.delete(w, r, t)
	case verb == verbDeleteCollection:
		err = s.deleteCollection(w, r, t)
	}
	if err != nil {
		writeErrorAs(w, answerForm(r), err)
	}
}

// queryBool reads a boolean query parameter as kube-apiserver's parameter codec does
// (Convert_Slice_string_To_bool): absent, "0" and "false" in any case are false, and any other
// value is true, "maybe" and the empty value included.
func queryBool(r *http.Request, key string) bool {
	v, ok := r.URL.Query()[key]
	return ok && len(v) > 0 && isTrue(v[0])
}

// isTrue is the parameter codec's reading of one present boolean value.
func isTrue(v string) bool {
	return v != "0" && !strings.EqualFold(v, "false")
}

// listOptions are the query parameters of a list or watch.
type listOptions struct {
	labels          labels.Selector
	fields          fields.Selector
	resourceVersion string
	rvMatch         metav1.ResourceVersionMatch
	bookmarks       bool
	// sendInitialEvents is nil when the parameter is absent.
	sendInitialEvents *bool
	timeout           time.Duration
	includeObject     metav1.IncludeObjectPolicy
	// limit and continueToken page a list (paging.go); zero and empty for all of it.
	limit         int64
	continueToken string
}

func parseListOptions(r *http.Request, t target) (listOptions, error) {
	q := r.URL.Query()
	opts := listOptions{
		resourceVersion: q.Get("resourceVersion"),
		rvMatch:         metav1.ResourceVersionMatch(q.Get("resourceVersionMatch")),
		bookmarks:       queryBool(r, "allowWatchBookmarks"),
		includeObject:   metav1.IncludeObjectPolicy(q.Get("includeObject")),
		continueToken:   q.Get("continue"),
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return opts, apierrors.NewBadRequest(fmt.Sprintf("invalid limit %q", v))
		}
		opts.limit = max(n, 0)
	}
	var err error
	if opts.labels, err = labels.Parse(q.Get("labelSelector")); err != nil {
		return opts, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
	}
	if opts.fields, err = fields.ParseSelector(q.Get("fieldSelector")); err != nil {
		return opts, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
	}
	supported := t.res.fieldSet(t.res.newObj())
	for _, req := range opts.fields.Requirements() {
		if _, ok := supported[req.Field]; !ok {
			return opts, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
		}
	}
	if t.name != "" {
		opts.fields = fields.AndSelectors(opts.fields, fields.OneTermEqualSelector("metadata.name", t.name))
	}
	if opts.resourceVersion != "" {
		if _, err := strconv.ParseUint(opts.resourceVersion, 10, 64); err != nil {
			return opts, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q", opts.resourceVersion))
		}
	}
	if v, ok := q["sendInitialEvents"]; ok && len(v) > 0 {
		b := isTrue(v[0]) // Convert_Slice_string_To_Pointer_bool
		opts.sendInitialEvents = &b
	}
	if v := q.Get("timeoutSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return opts, apierrors.NewBadRequest(fmt.Sprintf("invalid timeoutSeconds %q", v))
		}
		// A count of seconds past what a Duration holds would wrap negative; no watch needs to
		// outlive a century.
		const maxTimeout = 100 * 365 * 24 * time.Hour
		opts.timeout = maxTimeout
		if n < int64(maxTimeout/time.Second) {
			opts.timeout = time.Duration(n) * time.Second
		}
	}
	switch opts.includeObject {
	case "", metav1.IncludeNone, metav1.IncludeMetadata, metav1.IncludeObject:
	default:
		return opts, apierrors.NewBadRequest(fmt.Sprintf("invalid includeObject %q", opts.includeObject))
	}
	return opts, nil
}

// matches reports whether the entry passes the selectors.
func (o *listOptions) matches(res *resource, e *entry) bool {
	if !o.labels.Empty() && !o.labels.Matches(labels.Set(e.meta().GetLabels())) {
		return false
	}
	return o.fields.Empty() || o.fields.Matches(res.fieldSet(e.obj))
}

// tooLargeRV is the error kube-apiserver returns for a resource version it has not reached.
func tooLargeRV(want, have uint64) error {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", want, have), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version",
	}}
	return err
}

// deprecationWarning is the warning kube-apiserver adds to every response about a kind that its
// served version deprecates (the k8s.io/api type's APILifecycleDeprecated is this release or
// older), naming its removal and its replacement when the type says; "" for the others.
func deprecationWarning(res *resource) string {
	obj := res.newObj()
	deprecated, ok := obj.(interface{ APILifecycleDeprecated() (int, int) })
	if !ok {
		return ""
	}
	major, minor := deprecated.APILifecycleDeprecated()
	serverMinor, _ := strconv.Atoi(ServerVersion.Minor)
	if (major == 0 && minor == 0) || major > 1 || (major == 1 && minor > serverMinor) {
		return ""
	}
	msg := fmt.Sprintf("%s %s is deprecated in v%d.%d+", res.gv.String(), res.kind, major, minor)
	if removed, ok := obj.(interface{ APILifecycleRemoved() (int, int) }); ok {
		if major, minor := removed.APILifecycleRemoved(); major != 0 || minor != 0 {
			msg += fmt.Sprintf(", unavailable in v%d.%d+", major, minor)
		}
	}
	if replaced, ok := obj.(interface {
		APILifecycleReplacement() schema.GroupVersionKind
	}); ok {
		if gvk := replaced.APILifecycleReplacement(); !gvk.Empty() {
			msg += fmt.Sprintf("; use %s %s", gvk.GroupVersion().String(), gvk.Kind)
		}
	}
	return msg
}
