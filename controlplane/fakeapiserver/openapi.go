package fakeapiserver

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/openapi"
)

// The OpenAPI documents are built as kube-apiserver builds them: the schemas are the definitions
// openapi-gen generated from the k8s.io/api types (internal/openapi), and kube-openapi's builders
// turn them and a description of every served route into the v2 document (/openapi/v2) and one v3
// document per group version (/openapi/v3/api/v1, /openapi/v3/apis/GROUP/VERSION). Routes name
// their kind with x-kubernetes-group-version-kind and their verb with x-kubernetes-action, and
// definitions of top-level kinds carry x-kubernetes-group-version-kind, which is how kubectl
// explain finds a kind's schema, how kubectl decides the server validates fields itself (a
// fieldValidation parameter on the kind's PATCH), and how the server-side apply type converter
// maps a kind to its schema (managedfields.go, internal/fieldmanager). openapi_serve.go serves them.

// openAPISpecs are the built documents, shared by every Server of the process: they depend only
// on the served resources and are costly enough to build (tens of milliseconds) that a process
// builds them once, on first use.
type openAPISpecs struct {
	v2 *spec.Swagger
	// v3 maps "api/v1" and "apis/GROUP/VERSION" to the group version's document.
	v3 map[string]*spec3.OpenAPI
	// models are the v3 schemas of all group versions by definition name, for the type converter.
	models map[string]*spec.Schema
}

var builtOpenAPI = sync.OnceValues(buildOpenAPI)

func buildOpenAPI() (*openAPISpecs, error) {
	namer := newDefinitionNamer(scheme)
	info := &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: ServerVersion.GitVersion}}
	unauthorized := "Unauthorized"
	v2, err := builder.BuildOpenAPISpecFromRoutes(routeContainers(""), &common.Config{
		Info:                           info,
		GetDefinitions:                 openapi.GetOpenAPIDefinitions,
		GetDefinitionName:              namer.name,
		GetOperationIDAndTagsFromRoute: operationIDAndTags,
		CommonResponses:                map[int]spec.Response{401: {ResponseProps: spec.ResponseProps{Description: unauthorized}}},
		SecurityDefinitions: &spec.SecurityDefinitions{"BearerToken": {SecuritySchemeProps: spec.SecuritySchemeProps{
			Type: "apiKey", Name: "authorization", In: "header",
			Description: "Bearer Token authentication",
		}}},
		DefaultSecurity: []map[string][]string{{"BearerToken": {}}},
	})
	if err != nil {
		return nil, fmt.Errorf("build OpenAPI v2 document: %w", err)
	}
	out := &openAPISpecs{v2: v2, v3: map[string]*spec3.OpenAPI{}, models: map[string]*spec.Schema{}}
	for _, gv := range servedGroupVersions() {
		doc, err := builder3.BuildOpenAPISpecFromRoutes(routeContainers(gv.String()), &common.OpenAPIV3Config{
			Info:                           info,
			GetDefinitions:                 openapi.GetOpenAPIDefinitions,
			GetDefinitionName:              namer.name,
			GetOperationIDAndTagsFromRoute: operationIDAndTags,
			CommonResponses:                map[int]*spec3.Response{401: {ResponseProps: spec3.ResponseProps{Description: unauthorized}}},
			SecuritySchemes: spec3.SecuritySchemes{"BearerToken": {SecuritySchemeProps: spec3.SecuritySchemeProps{
				Type: "apiKey", Name: "authorization", In: "header", Description: "Bearer Token authentication",
			}}},
			DefaultSecurity: []map[string][]string{{"BearerToken": {}}},
		})
		if err != nil {
			return nil, fmt.Errorf("build OpenAPI v3 document of %s: %w", gv, err)
		}
		out.v3[openAPIV3Key(gv)] = doc
		for name, s := range doc.Components.Schemas {
			out.models[name] = s
		}
	}
	return out, nil
}

// openAPIV3Key is the group version's path below /openapi/v3.
func openAPIV3Key(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.String()
}

func servedGroupVersions() []schema.GroupVersion {
	var out []schema.GroupVersion
	seen := map[schema.GroupVersion]bool{}
	for _, res := range resources() {
		if !inOpenAPI(res) {
			continue
		}
		if !seen[res.gv] {
			seen[res.gv] = true
			out = append(out, res.gv)
		}
	}
	return out
}

// definitionNamer names definitions by their model names and gives the ones of kinds registered in
// the scheme the x-kubernetes-group-version-kind extension, listing every group version kind the
// type is registered as, sorted, as kube-apiserver's definition namer does.
type definitionNamer struct {
	gvks map[string][]schema.GroupVersionKind
}

func newDefinitionNamer(s *runtime.Scheme) definitionNamer {
	n := definitionNamer{gvks: map[string][]schema.GroupVersionKind{}}
	for gvk := range s.AllKnownTypes() {
		name, err := s.ToOpenAPIDefinitionName(gvk)
		if err != nil {
			continue // a type with no model name has no definition to extend
		}
		n.gvks[name] = append(n.gvks[name], gvk)
	}
	for _, list := range n.gvks {
		sort.Slice(list, func(i, j int) bool {
			a, b := list[i], list[j]
			if a.Group != b.Group {
				return a.Group < b.Group
			}
			if a.Version != b.Version {
				return a.Version < b.Version
			}
			return a.Kind < b.Kind
		})
	}
	return n
}

func (n definitionNamer) name(name string) (string, spec.Extensions) {
	list, ok := n.gvks[name]
	if !ok {
		return name, nil
	}
	ext := make([]any, 0, len(list))
	for _, gvk := range list {
		ext = append(ext, map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind})
	}
	return name, spec.Extensions{"x-kubernetes-group-version-kind": ext}
}

// operationIDAndTags names an operation as kube-apiserver does: the verb, the group without
// ".k8s.io" and the version, then the rest of the route's name (readCoreV1NamespacedPod), with
// the tag core_v1.
func operationIDAndTags(r common.Route) (string, []string, error) {
	rt, ok := r.(*route)
	if !ok {
		return "", nil, fmt.Errorf("route %s %s: not one of this server's routes", r.Method(), r.Path())
	}
	group := strings.TrimSuffix(rt.gv.Group, ".k8s.io")
	if group == "" {
		group = "core"
	}
	id := rt.verb + camel(group, true) + camel(rt.gv.Version, true) + rt.noun
	return id, []string{camel(group, false) + "_" + camel(rt.gv.Version, false)}, nil
}

// camel drops what is not a letter, digit or underscore and capitalises the letter after each
// dropped character (and the first when first is set): "coordination" → "Coordination",
// "storage" → "Storage".
func camel(s string, first bool) string {
	var b strings.Builder
	up := first
	for i, r := range s {
		if !(unicode.IsLetter(r) || r == '_' || (i > 0 && unicode.IsDigit(r))) {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// routeContainer, route and param describe the served REST API to kube-openapi's builders
// through their common.RouteContainer interfaces, as kube-apiserver's go-restful web services do.
type routeContainer struct {
	root   string
	routes []common.Route
}

func (c *routeContainer) RootPath() string                   { return c.root }
func (c *routeContainer) PathParameters() []common.Parameter { return nil }
func (c *routeContainer) Routes() []common.Route             { return c.routes }

type route struct {
	method, path string
	gv           schema.GroupVersion
	verb, noun   string // the operation ID is verb + group + version + noun
	action       string // x-kubernetes-action
	gvk          schema.GroupVersionKind
	description  string
	params       []common.Parameter
	consumes     []string
	produces     []string
	body         any // the request body's model, nil for none
	responses    []common.StatusCodeResponse
}

func (r *route) Method() string                                   { return r.method }
func (r *route) Path() string                                     { return r.path }
func (r *route) OperationName() string                            { return r.verb + r.noun }
func (r *route) Parameters() []common.Parameter                   { return r.params }
func (r *route) Description() string                              { return r.description }
func (r *route) Consumes() []string                               { return r.consumes }
func (r *route) Produces() []string                               { return r.produces }
func (r *route) RequestPayloadSample() any                        { return r.body }
func (r *route) ResponsePayloadSample() any                       { return nil }
func (r *route) StatusCodeResponses() []common.StatusCodeResponse { return r.responses }
func (r *route) Metadata() map[string]any {
	return map[string]any{
		"x-kubernetes-action": r.action,
		"x-kubernetes-group-version-kind": metav1.GroupVersionKind{
			Group: r.gvk.Group, Version: r.gvk.Version, Kind: r.gvk.Kind,
		},
	}
}

type param struct {
	name, description, dataType string
	kind                        common.ParameterKind
	required, multiple          bool
}

func (p *param) Name() string               { return p.name }
func (p *param) Description() string        { return p.description }
func (p *param) Required() bool             { return p.required }
func (p *param) Kind() common.ParameterKind { return p.kind }
func (p *param) DataType() string           { return p.dataType }
func (p *param) AllowMultiple() bool        { return p.multiple }

type response struct {
	code  int
	model any
}

func (r response) Code() int       { return r.code }
func (r response) Message() string { return httpStatusMessages[r.code] }
func (r response) Model() any      { return r.model }

var httpStatusMessages = map[int]string{200: "OK", 201: "Created", 202: "Accepted"}

// optionParams are the query parameters of an options type (metav1.ListOptions and the like):
// one per field of a simple type, named by its JSON tag and described by the type's generated
// swagger doc, as kube-apiserver derives them from the same types. skip names fields the server
// does not take from the query.
func optionParams(opts interface{ SwaggerDoc() map[string]string }, skip ...string) []common.Parameter {
	docs := opts.SwaggerDoc()
	t := reflect.TypeOf(opts)
	var out []common.Parameter
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous || name == "" || name == "-" || contains(skip, name) {
			continue
		}
		typ := f.Type
		if typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		p := &param{name: name, description: docs[name], kind: common.QueryParameterKind}
		switch typ.Kind() {
		case reflect.String:
			p.dataType = "string"
		case reflect.Bool:
			p.dataType = "boolean"
		case reflect.Int, reflect.Int32, reflect.Int64:
			p.dataType = "integer"
		case reflect.Slice:
			if typ.Elem().Kind() != reflect.String {
				continue
			}
			p.dataType, p.multiple = "string", true
		default:
			continue // Preconditions and other structs travel in the body only
		}
		out = append(out, p)
	}
	return out
}

// collectionDeleteParams are the delete options' parameters and the list options' that select
// what to delete; dryRun is in both and listed once.
func collectionDeleteParams(deleteParams, listParams []common.Parameter) []common.Parameter {
	out := append([]common.Parameter(nil), deleteParams...)
	for _, p := range listParams {
		if p.Name() != "dryRun" && p.Name() != "watch" && p.Name() != "allowWatchBookmarks" {
			out = append(out, p)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

var (
	objectProduces = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
	listProduces   = append(append([]string(nil), objectProduces...),
		"application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch")
	patchConsumes = []string{
		"application/json-patch+json", "application/merge-patch+json",
		"application/strategic-merge-patch+json", "application/apply-patch+yaml",
	}
)

// routeContainers describes the routes of the group version gv, or of all with gv "".
func routeContainers(gv string) []common.RouteContainer {
	var out []common.RouteContainer
	for _, res := range resources() {
		if (gv != "" && res.gv.String() != gv) || !inOpenAPI(res) {
			continue
		}
		out = append(out, resourceRoutes(res))
	}
	return out
}

// inOpenAPI reports whether the documents describe res: they do for every kind whose schema is
// compiled in, that is every kind in the scheme; not for those the server only ever lists empty
// (CustomResourceDefinitions).
func inOpenAPI(res *resource) bool {
	return scheme.Recognizes(res.gvk())
}

// resourceRoutes describes the routes of one resource: the collection (and, for namespaced
// resources, the list across namespaces), the object, and its status subresource.
func resourceRoutes(res *resource) *routeContainer {
	prefix := "/api/" + res.gv.Version
	if res.gv.Group != "" {
		prefix = "/apis/" + res.gv.String()
	}
	obj := res.newObj()
	var list runtime.Object
	if res.verbs.has(verbList) {
		list = listModel(res)
	}
	kind := res.kind
	c := &routeContainer{root: prefix}
	add := func(method, path, verb, noun, action, desc string, params []common.Parameter, body any, responses ...response) {
		rt := &route{
			method: method, path: path, gv: res.gv, verb: verb, noun: noun, action: action,
			gvk: res.gvk(), description: desc, params: params, body: body,
			consumes: []string{"*/*"}, produces: objectProduces,
		}
		if action == "list" {
			rt.produces = listProduces
		}
		if method == "PATCH" {
			rt.consumes = patchConsumes
		}
		for _, r := range responses {
			rt.responses = append(rt.responses, r)
		}
		if body != nil {
			rt.params = append(rt.params, &param{name: "body", kind: common.BodyParameterKind, required: true,
				dataType: util.GetCanonicalTypeName(body)})
		}
		c.routes = append(c.routes, rt)
	}
	pathParam := func(name, desc string) common.Parameter {
		return &param{name: name, description: desc, kind: common.PathParameterKind, required: true, dataType: "string"}
	}
	nameParam := pathParam("name", "name of the "+kind)
	nsParam := pathParam("namespace", "object name and auth scope, such as for teams and projects")
	listParams := optionParams(metav1.ListOptions{})
	createParams := optionParams(metav1.CreateOptions{})
	updateParams := optionParams(metav1.UpdateOptions{})
	patchParams := optionParams(metav1.PatchOptions{})
	deleteParams := optionParams(metav1.DeleteOptions{})
	scope, collection := "", prefix+"/"+res.name
	var scoped []common.Parameter
	if res.namespaced {
		scope = "Namespaced"
		collection = prefix + "/namespaces/{namespace}/" + res.name
		scoped = []common.Parameter{nsParam}
		if res.verbs.has(verbList) {
			add("GET", prefix+"/"+res.name, "list", kind+"ForAllNamespaces", "list",
				"list or watch objects of kind "+kind, listParams, nil, response{200, list})
		}
	}
	with := func(extra []common.Parameter, more ...common.Parameter) []common.Parameter {
		return append(append(append([]common.Parameter(nil), scoped...), more...), extra...)
	}
	item := collection + "/{name}"
	if res.verbs.has(verbList) {
		add("GET", collection, "list", scope+kind, "list", "list or watch objects of kind "+kind,
			with(listParams), nil, response{200, list})
	}
	if res.verbs.has(verbCreate) {
		add("POST", collection, "create", scope+kind, "post", "create "+article(kind)+" "+kind,
			with(createParams), obj, response{200, obj}, response{201, obj}, response{202, obj})
	}
	deleted := any(&metav1.Status{})
	if res.returnDeleted {
		deleted = obj
	}
	if res.verbs.has(verbDeleteCollection) {
		add("DELETE", collection, "delete", "Collection"+scope+kind, "deletecollection",
			"delete collection of "+kind, with(collectionDeleteParams(deleteParams, listParams)),
			&metav1.DeleteOptions{}, response{200, &metav1.Status{}})
	}
	if res.verbs.has(verbGet) {
		add("GET", item, "read", scope+kind, "get", "read the specified "+kind,
			with(nil, nameParam), nil, response{200, obj})
	}
	if res.verbs.has(verbUpdate) {
		add("PUT", item, "replace", scope+kind, "put", "replace the specified "+kind,
			with(updateParams, nameParam), obj, response{200, obj}, response{201, obj})
	}
	if res.verbs.has(verbDelete) {
		add("DELETE", item, "delete", scope+kind, "delete", "delete "+article(kind)+" "+kind,
			with(deleteParams, nameParam), &metav1.DeleteOptions{}, response{200, deleted}, response{202, deleted})
	}
	if res.verbs.has(verbPatch) {
		add("PATCH", item, "patch", scope+kind, "patch", "partially update the specified "+kind,
			with(patchParams, nameParam), &metav1.Patch{}, response{200, obj}, response{201, obj})
	}
	for _, sub := range res.subresources {
		if sub.kind != "" {
			// A subresource of another kind (pods/binding) is the one only a scheduler writes;
			// its route is left out, as the documents describe only what kubectl works with.
			continue
		}
		path, noun := item+"/"+sub.name, scope+kind+camel(sub.name, true)
		if sub.verbs.has(verbGet) {
			add("GET", path, "read", noun, "get", "read "+sub.name+" of the specified "+kind,
				with(nil, nameParam), nil, response{200, obj})
		}
		if sub.verbs.has(verbUpdate) {
			add("PUT", path, "replace", noun, "put", "replace "+sub.name+" of the specified "+kind,
				with(updateParams, nameParam), obj, response{200, obj}, response{201, obj})
		}
		if sub.verbs.has(verbPatch) {
			add("PATCH", path, "patch", noun, "patch", "partially update "+sub.name+" of the specified "+kind,
				with(patchParams, nameParam), &metav1.Patch{}, response{200, obj}, response{201, obj})
		}
	}
	return c
}

// listModel returns an empty list of the resource's kind, found in the scheme as KIND+"List".
func listModel(res *resource) runtime.Object {
	obj, err := scheme.New(res.gv.WithKind(res.kind + "List"))
	if err != nil {
		panic(fmt.Sprintf("fakeapiserver: %sList is not in the scheme: %v", res.kind, err))
	}
	return obj
}

func article(kind string) string {
	if strings.ContainsRune("AEIOU", rune(kind[0])) {
		return "an"
	}
	return "a"
}
