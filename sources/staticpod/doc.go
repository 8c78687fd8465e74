// Package staticpod decodes a static pod manifest into the pod the kubelet's file and http sources
// send.
//
// It mirrors the kubelet's pkg/kubelet/config/common.go: tryDecodeSinglePod (DecodePod),
// tryDecodePodList (DecodePodList, which only the http source uses) and applyDefaults. For every
// pod, in the kubelet's order:
//
//  1. decode YAML or JSON into a core/v1 Pod (or PodList); anything else is "not parsed";
//  2. apply the core/v1 scheme defaults (package apidefaults) and the status normalisation of the
//     kubelet's round trip through the internal type;
//  3. refuse a pod without a name (ErrInvalidPod), then apply the static-pod defaults: the name gets a "-<node>" suffix (lower-cased), a pod without
//     metadata.uid gets one hashed from its content and location, the kubernetes.io/config.hash
//     annotation is set to the UID, spec.nodeName is set, the namespace defaults to "default",
//     the phase is Pending, and a file pod tolerates every NoExecute taint;
//  4. validate the pod as the API server does on create, in the static-pod subset (package
//     podvalidation); failures wrap ErrInvalidPod;
//  5. refuse references to API objects (the PreventStaticPodAPIReferences check: service
//     accounts, secrets, config maps, claims and the volumes that reach them); failures wrap
//     ErrAPIReference.
//
// The package is pure: it reads no files, makes no requests and keeps no state. Reading the
// manifest, its size limit and the errors that name the file or URL belong to package sources.
//
// Deliberate differences from the kubelet, all listed in docs/fidelity.md:
//   - A generated UID hashes canonical JSON of the decoded, defaulted pod instead of the kubelet's
//     dump of its internal Go types, so UIDs differ from a real kubelet's while keeping the rule:
//     same content, node and location give the same UID; any change gives a new one.
//   - Defaulting (package apidefaults) and validation (package podvalidation, its StaticPod
//     subset) are a subset of the API server's, written on top of k8s.io/apimachinery because
//     k8s.io/kubernetes cannot be imported.
package staticpod
