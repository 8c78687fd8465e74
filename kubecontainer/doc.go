// Package kubecontainer holds the runtime-neutral view of pods and containers that the runtime,
// the PLEG, the pod cache and the pod workers share.
//
// It mirrors the types of the kubelet's pkg/kubelet/container (imported there as kubecontainer):
// PodStatus, ContainerStatus, the container states and the pod full name, with the few rules the
// runtime and the status both apply: HashContainer (container/helpers.go) and the one restart rule,
// ShouldContainerBeRestarted over ContainerShouldRestart (podutil's). The fake runtime in package
// fakeruntime produces the data and package pleg caches it.
package kubecontainer
