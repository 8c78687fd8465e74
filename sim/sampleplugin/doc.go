// Package sampleplugin holds the sample node plugins of `minikubelet plugin`: a device plugin
// written against the public deviceplugin v1beta1 API, and a CSI driver with a registrar in
// node-driver-registrar's shape. They are real gRPC servers on unix sockets, as plugins that
// register with a kubelet are; nothing in them knows minikubelet.
//
// Kubelet counterpart: none. They play the part of the kubelet tests' stub plugins
// (pkg/kubelet/cm/devicemanager/plugin/v1beta1/stub.go, pluginwatcher/example_plugin.go) and of
// kubernetes-csi/node-driver-registrar.
package sampleplugin
