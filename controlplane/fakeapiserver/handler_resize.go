package fakeapiserver

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/minikubelet/minikubelet/api/apidefaults"
	"github.com/minikubelet/minikubelet/api/podvalidation"
)

// The pods/resize subresource: in-place pod resize, GA in v1.35. A write through it may change
// the cpu and memory requests and limits of a pod's containers and sidecars and nothing else;
// the kubelet of the pod's node then allocates and actuates the new values. The pod registry's
// ResizeStrategy (pkg/registry/core/pod/strategy.go) and ValidatePodResize
// (pkg/apis/core/validation/validation.go), in their order and words.

// prepareResize is the resize strategy's PrepareForUpdate (dropNonResizeUpdates): of the object
// written, only each container's and init container's resources and resizePolicy are taken; the
// rest of the spec, the status and the metadata stay as stored. A write that adds, removes,
// renames or reorders containers keeps its spec, for validateResize to refuse. The generation
// goes up when the spec changed (updatePodGeneration). The written object is defaulted first, as
// kube-apiserver's decoder defaults it (requests from limits).
func prepareResize(oldObj, newObj runtime.Object) runtime.Object {
	oldPod, newPod := oldObj.(*corev1.Pod), newObj.(*corev1.Pod)
	apidefaults.SetPodDefaults(newPod)
	next := oldPod.DeepCopy()
	if containers, ok := mergeResizable(oldPod.Spec.Containers, newPod.Spec.Containers); ok {
		next.Spec.Containers = containers
	} else {
		next.Spec.Containers = newPod.Spec.Containers
	}
	if inits, ok := mergeResizable(oldPod.Spec.InitContainers, newPod.Spec.InitContainers); ok {
		next.Spec.InitContainers = inits
	} else {
		next.Spec.InitContainers = newPod.Spec.InitContainers
	}
	// Pod-level resources are resizable only with InPlacePodLevelResourcesVerticalScaling (alpha,
	// off in v1.35): the written ones are dropped.
	if !equality.Semantic.DeepEqual(oldPod.Spec, next.Spec) {
		next.Generation = oldPod.Generation + 1
	}
	return next
}

// mergeResizable is dropNonResizeUpdatesForContainers: the stored containers with the written
// ones' resources and resize policies, or false when the written list does not name the same
// containers in the same order.
func mergeResizable(old, written []corev1.Container) ([]corev1.Container, bool) {
	if len(old) != len(written) {
		return nil, false
	}
	out := make([]corev1.Container, len(old))
	for i := range old {
		if old[i].Name != written[i].Name {
			return nil, false
		}
		out[i] = *old[i].DeepCopy()
		out[i].Resources = *written[i].Resources.DeepCopy()
		out[i].ResizePolicy = append([]corev1.ContainerResizePolicy(nil), written[i].ResizePolicy...)
	}
	return out, true
}

// validateResize is ValidatePodResize over the pod's own validation errors (objectErrs): a static
// pod's mirror or a Windows pod cannot be resized at all; the QoS class may not change; a pod
// whose running container reports no resources runs on a node without resize; pod-level
// resources are not resizable; containers may not come, go, be renamed or reordered; requests and
// limits may not be removed; and only the cpu and memory of main containers and sidecars may
// change.
func validateResize(oldObj, newObj runtime.Object, objectErrs field.ErrorList) field.ErrorList {
	oldPod, newPod := oldObj.(*corev1.Pod), newObj.(*corev1.Pod)
	if _, ok := oldPod.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods cannot be resized")}
	}
	if oldPod.Spec.OS != nil && oldPod.Spec.OS.Name == corev1.Windows {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "windows pods cannot be resized")}
	}
	errs := objectErrs
	specPath := field.NewPath("spec")
	// The API server's subset of pod validation leaves resources out; a resize is about them, so
	// they are checked here, where kube-apiserver's validatePodMetadataAndSpec checks them.
	for i := range newPod.Spec.InitContainers {
		errs = append(errs, podvalidation.ValidateResources(&newPod.Spec.InitContainers[i].Resources, specPath.Child("initContainers").Index(i).Child("resources"))...)
	}
	for i := range newPod.Spec.Containers {
		errs = append(errs, podvalidation.ValidateResources(&newPod.Spec.Containers[i].Resources, specPath.Child("containers").Index(i).Child("resources"))...)
	}
	if apidefaults.QOSClass(oldPod) != apidefaults.ComputeQOSClass(newPod) {
		errs = append(errs, field.Invalid(specPath, newPod.Status.QOSClass, "Pod QOS Class may not change as a result of resizing"))
	}
	if !resizeSupported(oldPod) {
		errs = append(errs, field.Forbidden(specPath, "Pod running on node without support for resize"))
	}
	if podLevelResourcesSet(oldPod) || podLevelResourcesSet(newPod) {
		return append(errs, field.Forbidden(field.NewPath(""), "resize of pods with pod-level resources is forbidden when InPlacePodLevelResourcesVerticalScalingEnabled feature gate is disabled"))
	}
	if orderErrs := resizeContainerOrder(newPod, oldPod, specPath); len(orderErrs) > 0 {
		return append(errs, orderErrs...)
	}
	for i := range oldPod.Spec.InitContainers {
		if isSidecar(&oldPod.Spec.InitContainers[i]) {
			errs = append(errs, resourcesRemoved(&newPod.Spec.InitContainers[i].Resources, &oldPod.Spec.InitContainers[i].Resources,
				specPath.Child("initContainers").Index(i).Child("resources"))...)
		}
	}
	for i := range oldPod.Spec.Containers {
		errs = append(errs, resourcesRemoved(&newPod.Spec.Containers[i].Resources, &oldPod.Spec.Containers[i].Resources,
			specPath.Child("containers").Index(i).Child("resources"))...)
	}
	masked := newPod.Spec.DeepCopy()
	for i := range masked.Containers {
		keepCPUMemory(&masked.Containers[i], &oldPod.Spec.Containers[i])
		if !equality.Semantic.DeepEqual(masked.Containers[i], oldPod.Spec.Containers[i]) {
			errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
		}
	}
	for i := range masked.InitContainers {
		c := &masked.InitContainers[i]
		switch {
		case isSidecar(c):
			keepCPUMemory(c, &oldPod.Spec.InitContainers[i])
			if !equality.Semantic.DeepEqual(*c, oldPod.Spec.InitContainers[i]) {
				errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources for sidecar containers are mutable"))
			}
		case !equality.Semantic.DeepEqual(*c, oldPod.Spec.InitContainers[i]):
			errs = append(errs, field.Forbidden(specPath, "resources for non-sidecar init containers are immutable"))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if !equality.Semantic.DeepEqual(*masked, oldPod.Spec) {
		errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
	}
	return errs
}

// resizeSupported is isPodResizeRequestSupported: kube-apiserver takes a pod whose first running
// container reports no resources in its status to run on a kubelet without in-place resize.
func resizeSupported(pod *corev1.Pod) bool {
	for _, c := range pod.Status.ContainerStatuses {
		if c.State.Running != nil {
			return c.Resources != nil
		}
	}
	return true
}

func podLevelResourcesSet(pod *corev1.Pod) bool {
	r := pod.Spec.Resources
	return r != nil && len(r.Requests)+len(r.Limits) > 0
}

func isSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// resizeContainerOrder is validatePodResizeContainerOrdering.
func resizeContainerOrder(newPod, oldPod *corev1.Pod, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, l := range []struct {
		child    string
		new, old []corev1.Container
	}{{"containers", newPod.Spec.Containers, oldPod.Spec.Containers}, {"initContainers", newPod.Spec.InitContainers, oldPod.Spec.InitContainers}} {
		path := specPath.Child(l.child)
		if len(l.new) != len(l.old) {
			errs = append(errs, field.Forbidden(path, l.child+" may not be added or removed on resize"))
			continue
		}
		for i := range l.old {
			if l.new[i].Name != l.old[i].Name {
				errs = append(errs, field.Forbidden(path.Index(i).Child("name"), l.child+" may not be renamed or reordered on resize"))
			}
		}
	}
	return errs
}

// resourcesRemoved is validateContainerResize: a resize may not remove a request or a limit.
func resourcesRemoved(newReq, oldReq *corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	removed := func(now, before corev1.ResourceList) bool {
		if len(before) > len(now) {
			return true
		}
		for name := range before {
			if _, ok := now[name]; !ok {
				return true
			}
		}
		return false
	}
	if removed(newReq.Requests, oldReq.Requests) {
		errs = append(errs, field.Forbidden(path.Child("requests"), "resource requests cannot be removed"))
	}
	if removed(newReq.Limits, oldReq.Limits) {
		errs = append(errs, field.Forbidden(path.Child("limits"), "resource limits cannot be removed"))
	}
	return errs
}

// keepCPUMemory is dropCPUMemoryResourcesFromContainer: c's resources with their cpu and memory
// put back as old has them, so that what still differs is what a resize may not change.
func keepCPUMemory(c, old *corev1.Container) {
	c.Resources = corev1.ResourceRequirements{
		Limits:   keepCPUMemoryOf(c.Resources.Limits, old.Resources.Limits),
		Requests: keepCPUMemoryOf(c.Resources.Requests, old.Resources.Requests),
	}
}

func keepCPUMemoryOf(list, old corev1.ResourceList) corev1.ResourceList {
	var out corev1.ResourceList
	switch {
	case list == nil && old == nil:
		return nil
	case list == nil:
		out = corev1.ResourceList{}
	default:
		out = list.DeepCopy()
	}
	delete(out, corev1.ResourceCPU)
	delete(out, corev1.ResourceMemory)
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := old[name]; ok {
			out[name] = q
		}
	}
	return out
}
