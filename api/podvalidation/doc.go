// Package podvalidation checks a pod the way the API server does on create, in the two subsets
// minikubelet runs: the kubelet's, for static pods it decodes (package staticpod), and the fake API
// server's, for pods written to it (package fakeapiserver).
//
// It mirrors k8s.io/kubernetes pkg/apis/core/validation: ValidatePodCreate and the helpers it
// calls (ValidatePodSpec, validateContainers, validateInitContainers, validatePorts,
// ValidateVolumes, validateProbe, ValidateResourceRequirements and friends). k8s.io/kubernetes
// cannot be imported, so the subset that minikubelet's callers observe is written here once, on
// top of k8s.io/apimachinery. Paths and messages follow the API server's, so errors read the same.
//
// A Subset says which checks apply. StaticPod is the larger one and follows the API server
// closely. APIServer is the fake API server's smaller, older subset; where it words a shared check
// differently (a reused container name is only a duplicate, an empty policy is unsupported rather
// than required), the difference is kept so that the server's Status causes do not change. The
// PreventStaticPodAPIReferences check is the kubelet's own, not validation, and lives in manifest.
package podvalidation
