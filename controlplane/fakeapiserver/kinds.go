package fakeapiserver

import "k8s.io/apimachinery/pkg/runtime/schema"

// ReadableKind is a kind whose objects every server serves for get and list, as its row in the
// resource table says: what a client may read, and where.
type ReadableKind struct {
	Kind         string
	GroupVersion schema.GroupVersion
	// Resource is the plural in the URL, such as "csinodes".
	Resource   string
	Namespaced bool
}

// Path is the URL path of one object of the kind (or, with an empty name, of the list in the
// namespace, or of every namespace when that is empty too), as client-go builds it.
func (k ReadableKind) Path(namespace, name string) string {
	p := "/apis/" + k.GroupVersion.String()
	if k.GroupVersion.Group == "" {
		p = "/api/" + k.GroupVersion.Version
	}
	if k.Namespaced && namespace != "" {
		p += "/namespaces/" + namespace
	}
	p += "/" + k.Resource
	if name != "" {
		p += "/" + name
	}
	return p
}

// ReadableKinds lists the kinds every server serves for get and list, in the order discovery lists
// their resources (so the core group's Event comes before events.k8s.io's). Resources that only
// some servers serve (metrics.k8s.io, with Options.ResourceMetrics) are left out.
func ReadableKinds() []ReadableKind {
	var out []ReadableKind
	for _, res := range resources() {
		if res.available != nil || !res.verbs.has(verbGet|verbList) {
			continue
		}
		out = append(out, ReadableKind{Kind: res.kind, GroupVersion: res.gv, Resource: res.name, Namespaced: res.namespaced})
	}
	return out
}
