// Package podkey names a pod "namespace/name", the key the kubelet side and the control plane
// both use: in the trace, in logs and as map keys.
//
// It is the kubelet's kubecontainer.GetPodFullName without the underscore: the trace and kubectl
// say "namespace/name". It lives in the shared API layer so that the control plane does not import
// a kubelet package for it.
package podkey
