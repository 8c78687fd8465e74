// Package kubecontainer holds the runtime-neutral view of pods and containers that the runtime,
// the PLEG, the pod cache and the pod workers share.
//
// It mirrors the types of the kubelet's pkg/kubelet/container (imported there as kubecontainer):
// PodStatus, ContainerStatus, the container states and the pod full name. It holds data only; the
// fake runtime in package fakeruntime produces it and package pleg caches it.
package kubecontainer
