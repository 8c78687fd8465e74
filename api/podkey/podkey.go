package podkey

import v1 "k8s.io/api/core/v1"

// Of returns the pod's "namespace/name", the way the trace, the kubelet's logs and the control
// plane name pods.
func Of(pod *v1.Pod) string {
	return Build(pod.Namespace, pod.Name)
}

// Build returns "namespace/name" for a pod known only by its namespace and name (a runtime pod,
// a mirror pod's full name, a pod a scenario step names).
func Build(namespace, name string) string {
	return namespace + "/" + name
}
