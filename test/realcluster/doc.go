// Package realcluster runs simulated nodes against a real control plane: etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler v1.35.4 started by the test on a fresh etcd, with
// certificates it generates and the flags kubeadm gives them (Node,RBAC authorization,
// NodeRestriction). It has no kubelet counterpart: it is the harness of the end-to-end tests
// against a real cluster and of the side-by-side benchmark of minikubelet, KWOK and kubemark
// (real kubelet code, one hollow node per process), which measures the time from a Deployment
// to every pod Running, each simulator's CPU time and peak RSS, and its API requests by verb and
// resource from kube-apiserver's audit log.
//
// It is a module of its own so that the main module never depends on k8s.io/kubernetes: the
// control plane's binaries and kubemark are built from this module's go.mod (cmd/build). The
// tests skip unless the binaries are given (MINIKUBELET_E2E_BIN_DIR); docs/benchmarks.md says
// how to build and run them.
package realcluster
