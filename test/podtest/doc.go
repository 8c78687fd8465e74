// Package podtest builds the pods and static pod manifests that tests across the kubelet's
// packages need, so that a test says only what matters to it (a node, a restart policy, a
// container's requests) and every test pod has the same defaults.
//
// Kubelet counterpart: none. The kubelet's tests each build their own pods (newPod, newTestPod,
// makePod... in a dozen files); this package is the one place for them here.
package podtest
