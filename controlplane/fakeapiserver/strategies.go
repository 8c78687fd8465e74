package fakeapiserver

import (
	"iter"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/registry"
)

// The rows of the kinds whose strategies live in internal/registry: the server keeps what a kind
// is served under (names, verbs, subresources) and takes its hooks from the strategy.

var (
	discoveryV = schema.GroupVersion{Group: "discovery.k8s.io", Version: "v1"}
	resourceV  = schema.GroupVersion{Group: "resource.k8s.io", Version: "v1"}
)

func serviceResource() *resource {
	return withStrategy(&resource{
		name: "services", singular: "service", kind: "Service", gv: coreV1, namespaced: true,
		shortNames: []string{"svc"}, categories: []string{"all"}, verbs: verbsStored,
		subresources: []subresource{{name: "status", verbs: verbsStatus}},
	}, registry.Services())
}

func endpointsResource() *resource {
	return withStrategy(&resource{
		name: "endpoints", singular: "endpoints", kind: "Endpoints", gv: coreV1, namespaced: true,
		shortNames: []string{"ep"}, verbs: verbsStored,
	}, registry.Endpoints())
}

func endpointSliceResource() *resource {
	return withStrategy(&resource{
		name: "endpointslices", singular: "endpointslice", kind: "EndpointSlice", gv: discoveryV, namespaced: true,
		verbs: verbsStored,
	}, registry.EndpointSlices())
}

func resourceSliceResource() *resource {
	return withStrategy(&resource{
		name: "resourceslices", singular: "resourceslice", kind: "ResourceSlice", gv: resourceV, verbs: verbsStored,
	}, registry.ResourceSlices())
}

func namespaceResource() *resource {
	return withStrategy(&resource{
		name: "namespaces", singular: "namespace", kind: "Namespace", gv: coreV1, shortNames: []string{"ns"},
		// No deletecollection, as on kube-apiserver: each namespace goes through its own lifecycle.
		verbs:        verbsStored &^ verbDeleteCollection,
		subresources: []subresource{{name: "status", verbs: verbsStatus}},
	}, registry.Namespaces())
}

// withStrategy sets res's hooks to st's.
func withStrategy(res *resource, st registry.Strategy) *resource {
	res.newObj, res.fieldSet = st.NewObj, st.FieldSet
	res.prepareCreate, res.beginCreate, res.validate = st.PrepareCreate, st.BeginCreate, st.Validate
	res.prepareUpdate, res.beginUpdate, res.validateUpdate = st.PrepareUpdate, st.BeginUpdate, st.ValidateUpdate
	res.columns, res.cells = st.Columns, st.Cells
	return res
}

// strategyStore is the server as the strategies' allocations read it (registry.Store). It holds
// only the server, so that passing it as the interface does not allocate.
type strategyStore struct{ s *Server }

var _ registry.Store = strategyStore{}

// Services yields the stored Services in name order. The caller holds the store lock.
func (v strategyStore) Services() iter.Seq[*corev1.Service] {
	return func(yield func(*corev1.Service) bool) {
		for _, e := range v.s.store.list(v.s.store.resource("services"), "") {
			if !yield(e.obj.(*corev1.Service)) {
				return
			}
		}
	}
}

// Intn draws from the store's random source. The caller holds the store lock.
func (v strategyStore) Intn(n int) int { return v.s.store.rand.Intn(n) }

func (v strategyStore) ServiceCIDR() netip.Prefix { return v.s.serviceCIDR }
