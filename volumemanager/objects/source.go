package objects

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kind is a kind of object the kubelet watches one object at a time.
type Kind int

// The kinds.
const (
	ConfigMaps Kind = iota + 1
	Secrets
)

// String is the kind's resource, as the API names it in URLs.
func (k Kind) String() string {
	switch k {
	case ConfigMaps:
		return "configmaps"
	case Secrets:
		return "secrets"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// groupResource is the manager's group resource, in whose name NotFound errors speak: the
// kubelet's managers use the singular (corev1.Resource("secret")), so the message reads
// `secret "x" not found`.
func (k Kind) groupResource() schema.GroupResource {
	switch k {
	case ConfigMaps:
		return v1.Resource("configmap")
	case Secrets:
		return v1.Resource("secret")
	}
	return schema.GroupResource{Resource: k.String()}
}

// immutable reports whether obj is a ConfigMap or Secret marked immutable.
func immutable(obj runtime.Object) bool {
	switch o := obj.(type) {
	case *v1.ConfigMap:
		return o.Immutable != nil && *o.Immutable
	case *v1.Secret:
		return o.Immutable != nil && *o.Immutable
	}
	return false
}

// Key names one watched object.
type Key struct {
	Kind            Kind
	Namespace, Name string
}

// Source is where the managers' objects come from: a watch of each object, started by the
// object's first reference and stopped by its last.
type Source interface {
	// Watch starts watching the object, Stop stops it; a Watch is always followed by one Stop.
	Watch(k Key)
	Stop(k Key)
	// Get returns the object as its watch last delivered it: synced is false until the watch
	// has listed once, and obj is nil when the object does not exist.
	Get(k Key) (obj runtime.Object, synced bool)
}

// Services is the kubelet's service lister: every Service with a cluster IP, once its informer
// has listed.
type Services interface {
	// List returns the Services; synced is false until the informer has listed once.
	List() (services []*v1.Service, synced bool)
}
