// Package csiplugin is the kubelet's CSI plugin as far as registration goes: the CSIPlugin
// handler of the plugin manager and the node info manager that records a driver on the Node and
// its CSINode object.
//
// It mirrors pkg/volume/csi/csi_plugin.go (RegistrationHandler) and
// pkg/volume/csi/nodeinfomanager:
//
//	ValidatePlugin: a non-empty version list whose highest version of major 1 or lower is newer
//	                than the one a driver of the same name registered with
//	RegisterPlugin: validate again, remember (endpoint, version), NodeGetInfo on the endpoint (2m),
//	                then install: the old attachable-volumes-csi-<driver> node resource removed,
//	                node annotation csi.volume.kubernetes.io/nodeid, topology labels (one patch of
//	                nodes/status), and the driver in the CSINode (node id, topology keys,
//	                allocatable count); any failure forgets the driver again
//	DeRegisterPlugin: forget the driver, remove it from the CSINode, then the old node resource
//	                and the annotation
//
// Handler does its API writes and NodeGetInfo calls synchronously, on the goroutine of the plugin
// manager's operation; its lock only guards the driver table.
package csiplugin
