// Package apidefaults holds the core/v1 pod defaults and the pod QoS class, which the kubelet's
// static pod decoder, the API server and the status manager all apply.
//
// It mirrors k8s.io/kubernetes/pkg/apis/core/v1 (defaults.go, SetDefaults_Pod and its siblings)
// and pkg/apis/core/v1/helper/qos (GetPodQOS). k8s.io/kubernetes cannot be imported, so the
// subset that changes what minikubelet reads is written here once.
package apidefaults
