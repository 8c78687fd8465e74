package nodestatus

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// DeviceCapacity is the device manager's GetCapacity: the extended resources its device plugins
// offer, and those removed now.
type DeviceCapacity interface {
	GetCapacity() (capacity, allocatable v1.ResourceList, removed []string)
}

// applyDevices is the device plugin part of the kubelet's MachineInfo setter: device plugin
// capacity overwrites the node's, a removed resource is written as capacity 0 (not deleted), device
// plugin allocatable overwrites the node's, and an extended resource no longer in capacity leaves
// allocatable.
func (s *Status) applyDevices(node *v1.Node) {
	if s.opts.Devices == nil {
		return
	}
	capacity, allocatable, removed := s.opts.Devices.GetCapacity()
	if node.Status.Capacity == nil {
		node.Status.Capacity = v1.ResourceList{}
	}
	if node.Status.Allocatable == nil {
		node.Status.Allocatable = v1.ResourceList{}
	}
	for name, q := range capacity {
		node.Status.Capacity[name] = q
	}
	for _, name := range removed {
		node.Status.Capacity[v1.ResourceName(name)] = *resource.NewQuantity(0, resource.DecimalSI)
	}
	// Allocatable is capacity less reservations, none of which apply to extended resources.
	for name, q := range node.Status.Capacity {
		if isExtended(name) {
			node.Status.Allocatable[name] = q.DeepCopy()
		}
	}
	for name, q := range allocatable {
		node.Status.Allocatable[name] = q
	}
	for name := range node.Status.Allocatable {
		if _, ok := node.Status.Capacity[name]; !ok && isExtended(name) {
			delete(node.Status.Allocatable, name)
		}
	}
}

// isExtended reports whether a resource name is outside the kubernetes.io namespace and prefixed:
// the names device plugins may advertise.
func isExtended(name v1.ResourceName) bool {
	n := string(name)
	return strings.Contains(n, "/") && !strings.Contains(n, "kubernetes.io/")
}
