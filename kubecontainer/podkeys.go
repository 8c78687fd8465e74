package kubecontainer

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// KeyKeeper keeps a pod's trace key, "namespace/name", for as long as it knows the pod: the pod
// workers, which build it when a pod's worker starts and drop it with the worker.
type KeyKeeper interface {
	// PodKey returns the key kept for uid if it is namespace/name.
	PodKey(uid types.UID, namespace, name string) (key string, ok bool)
}

// SharedKeys hands every component of one kubelet the same key string for a pod: the keeper's,
// when it has the pod, else a new one. The trace needs a key in nearly every event about a pod,
// and each component that traces a pod (the sync loop at every sync tick, the status manager,
// the PLEG, the runtime) built its own copy of the same text; the answer is the same string
// either way (KeyOf checks the kept key against the pod's namespace and name), so sharing it
// changes no event. Keeper is set once the keeper is built (the pod workers come after the
// components that ask); a nil *SharedKeys, or one without a keeper, builds every key.
type SharedKeys struct {
	Keeper KeyKeeper
}

// Of returns pod's key.
func (k *SharedKeys) Of(pod *v1.Pod) string {
	return k.Key(pod.UID, pod.Namespace, pod.Name)
}

// Key returns the key of the pod with uid, namespace and name.
func (k *SharedKeys) Key(uid types.UID, namespace, name string) string {
	if k != nil && k.Keeper != nil {
		if key, ok := k.Keeper.PodKey(uid, namespace, name); ok {
			return key
		}
	}
	return namespace + "/" + name
}

// IsKeyOf reports whether key is namespace/name, without building it.
func IsKeyOf(key, namespace, name string) bool {
	return len(key) == len(namespace)+1+len(name) && key[:len(namespace)] == namespace &&
		key[len(namespace)] == '/' && key[len(namespace)+1:] == name
}

// KeyAndFullName returns the pod's trace key, "<namespace>/<name>", and its full name,
// "<name>_<namespace>", as two views of one string, "<namespace>/<name>_<namespace>": one
// allocation where building each costs one. The pod workers and the pod manager keep both for
// every pod they hold; the bytes are the same as podkey.Build's and BuildPodFullName's.
func KeyAndFullName(namespace, name string) (key, fullname string) {
	both := namespace + "/" + name + "_" + namespace
	n := len(namespace) + 1
	return both[:n+len(name)], both[n:]
}
