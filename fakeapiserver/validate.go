package fakeapiserver

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateMeta checks the object metadata every resource shares.
func validateMeta(obj runtime.Object, namespaced bool) field.ErrorList {
	m := mustMeta(obj)
	var errs field.ErrorList
	path := field.NewPath("metadata")
	if m.GetName() == "" {
		errs = append(errs, field.Required(path.Child("name"), "name or generateName is required"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(m.GetName()) {
			errs = append(errs, field.Invalid(path.Child("name"), m.GetName(), msg))
		}
	}
	if namespaced {
		for _, msg := range validation.IsDNS1123Label(m.GetNamespace()) {
			errs = append(errs, field.Invalid(path.Child("namespace"), m.GetNamespace(), msg))
		}
	}
	for k, v := range m.GetLabels() {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(path.Child("labels"), k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(path.Child("labels"), v, msg))
		}
	}
	return errs
}

func validateMetaOnly(obj runtime.Object) field.ErrorList { return validateMeta(obj, true) }

func validateNode(obj runtime.Object) field.ErrorList { return validateMeta(obj, false) }

func validateEvent(obj runtime.Object) field.ErrorList {
	ev := obj.(*corev1.Event)
	errs := validateMeta(obj, true)
	if ev.InvolvedObject.Namespace != "" && ev.InvolvedObject.Namespace != ev.Namespace {
		errs = append(errs, field.Invalid(field.NewPath("involvedObject", "namespace"), ev.InvolvedObject.Namespace,
			"does not match event.namespace"))
	}
	return errs
}

// validatePod is a subset of the core/v1 pod validation: the checks a malformed manifest or a
// client bug is most likely to trip.
func validatePod(obj runtime.Object) field.ErrorList {
	pod := obj.(*corev1.Pod)
	errs := validateMeta(obj, true)
	spec := field.NewPath("spec")
	if len(pod.Spec.Containers) == 0 {
		errs = append(errs, field.Required(spec.Child("containers"), ""))
	}
	names := sets.New[string]()
	errs = append(errs, validateContainers(pod.Spec.InitContainers, spec.Child("initContainers"), names)...)
	errs = append(errs, validateContainers(pod.Spec.Containers, spec.Child("containers"), names)...)
	switch pod.Spec.RestartPolicy {
	case corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
	default:
		errs = append(errs, field.NotSupported(spec.Child("restartPolicy"), pod.Spec.RestartPolicy,
			[]corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}))
	}
	switch pod.Spec.DNSPolicy {
	case corev1.DNSClusterFirst, corev1.DNSClusterFirstWithHostNet, corev1.DNSDefault, corev1.DNSNone:
	default:
		errs = append(errs, field.NotSupported(spec.Child("dnsPolicy"), pod.Spec.DNSPolicy,
			[]corev1.DNSPolicy{corev1.DNSClusterFirst, corev1.DNSClusterFirstWithHostNet, corev1.DNSDefault, corev1.DNSNone}))
	}
	if d := pod.Spec.ActiveDeadlineSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(spec.Child("activeDeadlineSeconds"), *d, "must be greater than 0"))
	}
	if n := pod.Spec.NodeName; n != "" {
		for _, msg := range validation.IsDNS1123Subdomain(n) {
			errs = append(errs, field.Invalid(spec.Child("nodeName"), n, msg))
		}
	}
	return errs
}

func validateContainers(cs []corev1.Container, path *field.Path, names sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	for i, c := range cs {
		p := path.Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case names.Has(c.Name):
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg))
			}
		}
		names.Insert(c.Name)
		if c.Image == "" {
			errs = append(errs, field.Required(p.Child("image"), ""))
		}
		for j, port := range c.Ports {
			if port.ContainerPort < 1 || port.ContainerPort > 65535 {
				errs = append(errs, field.Invalid(p.Child("ports").Index(j).Child("containerPort"), port.ContainerPort,
					fmt.Sprintf("must be between %d and %d, inclusive", 1, 65535)))
			}
		}
	}
	return errs
}
