package fakeapiserver

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// verbs is a set of the REST verbs a resource or subresource serves. Discovery lists it, the
// OpenAPI documents describe a route for each verb in it, and the router answers any other verb
// with 405, so that what a resource serves is said once, on its row in resources().
type verbs uint16

const (
	verbCreate verbs = 1 << iota
	verbDelete
	verbDeleteCollection
	verbGet
	verbList
	verbPatch
	verbUpdate
	verbWatch

	// verbsReadOnly is what a resource whose objects clients only read serves.
	verbsReadOnly = verbGet | verbList | verbWatch
	// verbsStored is what kube-apiserver's generic registry serves for a stored resource.
	verbsStored = verbCreate | verbDelete | verbDeleteCollection | verbGet | verbList | verbPatch | verbUpdate | verbWatch
	// verbsStatus is what a status subresource serves.
	verbsStatus = verbGet | verbPatch | verbUpdate
	// verbsWrite are the verbs that change what is stored.
	verbsWrite = verbCreate | verbDelete | verbDeleteCollection | verbPatch | verbUpdate
)

// verbNames are the verbs' names as discovery spells them, in its (alphabetical) order.
var verbNames = []struct {
	v    verbs
	name string
}{
	{verbCreate, "create"}, {verbDelete, "delete"}, {verbDeleteCollection, "deletecollection"},
	{verbGet, "get"}, {verbList, "list"}, {verbPatch, "patch"}, {verbUpdate, "update"}, {verbWatch, "watch"},
}

func (v verbs) has(x verbs) bool { return v&x == x }

// name is one verb's name, "" for a set of several or none.
func (v verbs) name() string {
	for _, n := range verbNames {
		if n.v == v {
			return n.name
		}
	}
	return ""
}

// names lists the verbs as discovery does.
func (v verbs) names() metav1.Verbs {
	out := metav1.Verbs{}
	for _, n := range verbNames {
		if v.has(n.v) {
			out = append(out, n.name)
		}
	}
	return out
}

// subresource is a subresource a resource serves, such as pods/status or pods/binding.
type subresource struct {
	name  string
	kind  string // the kind it takes and returns, when not the resource's own (Binding)
	verbs verbs
	// prepare makes the stored object's next version from the object a write sends, for a
	// subresource whose writes take only part of it (pods/resize, the registry's
	// PrepareForUpdate). Nil for status, whose writes take the status.
	prepare func(oldObj, newObj runtime.Object) runtime.Object
	// validate checks such a write: it gets the errors of the object's own validation and
	// returns the write's, which may replace them (the registry's ValidateUpdate).
	validate func(oldObj, newObj runtime.Object, objectErrs field.ErrorList) field.ErrorList
}

// subresource returns the resource's subresource named name.
func (r *resource) subresource(name string) (subresource, bool) {
	for _, sub := range r.subresources {
		if sub.name == name {
			return sub, true
		}
	}
	return subresource{}, false
}

// requestVerb is the verb a request on t amounts to, 0 when its method means nothing there (a PUT
// on a collection, a create across namespaces).
func requestVerb(r *http.Request, t target) verbs {
	allNamespaces := t.res.namespaced && t.namespace == ""
	switch r.Method {
	case http.MethodGet:
		switch {
		case t.watch || queryBool(r, "watch"):
			if t.subresource != "" {
				return 0
			}
			return verbWatch
		case t.name == "":
			return verbList
		}
		return verbGet
	case http.MethodPost:
		switch {
		case t.watch:
			return 0
		case t.name == "" && !allNamespaces:
			return verbCreate
		case t.name != "" && t.subresource != "":
			// A subresource that takes another kind (pods/binding) is created.
			return verbCreate
		}
	case http.MethodPut:
		if t.name != "" && !t.watch {
			return verbUpdate
		}
	case http.MethodPatch:
		if t.name != "" && !t.watch {
			return verbPatch
		}
	case http.MethodDelete:
		switch {
		case t.watch:
			return 0
		case t.name != "" && t.subresource == "":
			return verbDelete
		case t.name == "" && !allNamespaces:
			return verbDeleteCollection
		}
	}
	return 0
}

// allows reports whether t's resource, or its subresource, serves verb.
func (t target) allows(verb verbs) bool {
	if verb == 0 {
		return false
	}
	if t.subresource == "" {
		return t.res.verbs.has(verb)
	}
	sub, ok := t.res.subresource(t.subresource)
	return ok && sub.verbs.has(verb)
}
