package admission

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// PodRequests is what a pod asks of the node at admission, as v1.35 computes it
// (noderesources.computePodResourceRequest with PodLevelResources on): per resource, the larger of
// the main containers plus every sidecar and the peak of the init sequence (each regular init
// container plus the sidecars started before it), pod-level requests where set, plus the pod
// overhead. Limits never count.
func PodRequests(pod *v1.Pod) v1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

// amounts is the scheduler framework's Resource: the quantities the fit compares, cpu in
// millicores and the rest in units.
type amounts struct {
	milliCPU, memory, ephemeralStorage int64
	pods                               int64
	scalar                             map[v1.ResourceName]int64
}

// addAmounts adds b times sign (1 or -1). A scalar resource that drops to zero stays in the map:
// a missing entry reads as zero too.
func (a *amounts) addAmounts(b amounts, sign int64) {
	a.milliCPU += sign * b.milliCPU
	a.memory += sign * b.memory
	a.ephemeralStorage += sign * b.ephemeralStorage
	a.pods += sign * b.pods
	for name, q := range b.scalar {
		if a.scalar == nil {
			a.scalar = map[v1.ResourceName]int64{}
		}
		a.scalar[name] += sign * q
	}
}

// String lists the amounts, scalar resources by name and without zeros, so that two amounts that
// read the same print the same.
func (a amounts) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cpu=%dm memory=%d ephemeral-storage=%d pods=%d", a.milliCPU, a.memory, a.ephemeralStorage, a.pods)
	for _, name := range slices.Sorted(maps.Keys(a.scalar)) {
		if q := a.scalar[name]; q != 0 {
			fmt.Fprintf(&b, " %s=%d", name, q)
		}
	}
	return b.String()
}

// add adds a resource list, as the framework's Resource.Add does: pods counts pods, and only the
// scalar resources (extended, hugepages, prefixed native) beyond the four named ones.
func (a *amounts) add(rl v1.ResourceList) {
	for name, q := range rl {
		switch name {
		case v1.ResourceCPU:
			a.milliCPU += q.MilliValue()
		case v1.ResourceMemory:
			a.memory += q.Value()
		case v1.ResourceEphemeralStorage:
			a.ephemeralStorage += q.Value()
		case v1.ResourcePods:
			a.pods += q.Value()
		default:
			if isScalar(name) {
				if a.scalar == nil {
					a.scalar = map[v1.ResourceName]int64{}
				}
				a.scalar[name] += q.Value()
			}
		}
	}
}

// isScalar is the scheduler's IsScalarResourceName: extended resources, hugepages, native
// resources under kubernetes.io/, and attachable volume counts.
func isScalar(name v1.ResourceName) bool {
	n := string(name)
	return isExtended(name) || strings.HasPrefix(n, v1.ResourceHugePagesPrefix) ||
		strings.Contains(n, "kubernetes.io/") || strings.HasPrefix(n, v1.ResourceAttachableVolumesPrefix)
}

// isExtended is v1helper.IsExtendedResourceName: a prefixed name outside the kubernetes.io
// namespace that is not a quota "requests." name. (API validation has already checked that it is
// a qualified name.)
func isExtended(name v1.ResourceName) bool {
	n := string(name)
	if !strings.Contains(n, "/") || strings.Contains(n, v1.ResourceDefaultNamespacePrefix) {
		return false
	}
	return !strings.HasPrefix(n, v1.DefaultResourceRequestsPrefix)
}

// resourceRequest is pkg/api/v1/resource GetResourceRequest, which preemption measures pods
// with: a pod counts 1 against pods; cpu in millicores, the rest in units; the pod overhead is
// added to a resource only when the containers request some of it.
func resourceRequest(pod *v1.Pod, name v1.ResourceName) int64 {
	if name == v1.ResourcePods {
		return 1
	}
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{
		ExcludeOverhead:             true,
		SkipContainerLevelResources: resourcehelper.IsPodLevelResourcesSet(pod),
	})
	q := reqs[name]
	if o, ok := pod.Spec.Overhead[name]; ok && !q.IsZero() {
		q.Add(o)
	}
	if name == v1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}
