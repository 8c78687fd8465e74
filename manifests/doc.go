// Package manifests holds the example static pods that ship with minikubelet.
//
// They are the kind of files a kubelet finds in its staticPodPath (kubeadm's
// /etc/kubernetes/manifests): control-plane pods in kube-system, a web server, a pod with init
// containers and a crash-looping pod. The files are embedded so that the minikubelet binary can
// run them from anywhere; `minikubelet run --pod-manifest-path manifests` in a checkout reads the
// same files from disk.
package manifests

import "embed"

// FS holds every bundled manifest at its base name.
//
//go:embed *.yaml
var FS embed.FS
