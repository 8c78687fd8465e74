// Package ctrltest holds what the controllers' tests share: a fake API server on the test's
// virtual clock, reached through client-go's typed clientset in process, as the controllers
// reach kube-apiserver through theirs; a feed of the nodes a test changed; and a client that
// counts the reads a controller makes.
//
// Kubelet counterpart: none; kube-controller-manager's controller tests build a fake clientset
// (client-go's fake package) the same way in each.
package ctrltest
