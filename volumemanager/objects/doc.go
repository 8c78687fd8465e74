// Package objects holds what the kubelet reads of the API server besides its pods and its node:
// the ConfigMap and Secret managers (pkg/kubelet/configmap, pkg/kubelet/secret, both on
// pkg/kubelet/util/manager's watch-based cache) and the service lister that feeds the service
// environment variables (kubelet.go's service informer, kubelet_pods.go getServiceEnvVarMap).
//
// It lives under volumemanager because the volumes are the first reader: every pod's
// kube-api-access-* volume reads its namespace's kube-root-ca.crt through the ConfigMap manager,
// and Secret and ConfigMap volumes mount what these managers hold. Environment references
// (env, envFrom) are the other reader.
//
// # The watch-based managers
//
// v1.35's default configMapAndSecretChangeDetectionStrategy is Watch. A pod's SyncPod registers
// the pod with both managers (RegisterPod); each object it references (getSecretNames,
// getConfigMapNames: volumes, env, envFrom, image pull secrets) is counted, and the first
// reference starts a watch of that one object (a reflector with fieldSelector metadata.name).
// SyncTerminatedPod unregisters the pod; the last reference stops the watch. Get answers from
// what the watch delivered: "object not registered" for an object no pod references, "failed to
// sync ... cache" for a watch that has not listed yet, NotFound (`secret "x" not found`) for an
// object that does not exist. An object marked immutable is kept and its watch stopped, as the
// kubelet stops watching it.
//
// The watches are a Source, a seam of the kubelet's world: in `run`, Reflectors (run.go)
// runs a client-go reflector per watched object beside the sync loop (a fleet's nodes share one
// Reflectors, whose reflector for an object runs while any node watches it); in replay, the simulated
// world reads the in-process API server at every step the API server is reachable: on a virtual
// clock that nothing delays, a watch delivers a write in the instant it is made, so reading the
// store is what the watch would have delivered.
//
// A Manager is a core: the sync loop's goroutine calls it. Its Source may be shared with a
// runner's goroutines, and guards itself.
package objects
