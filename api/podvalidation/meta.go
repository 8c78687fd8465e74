package podvalidation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateObjectMeta checks the metadata fields the APIServer subset checks on every object, pods
// or not: a name that is a DNS-1123 subdomain, for a namespaced object a namespace that is a
// DNS-1123 label, and label keys and values. It is a subset of apimachinery's ValidateObjectMeta,
// which the StaticPod subset uses instead. Errors are under "metadata".
func ValidateObjectMeta(m metav1.Object, namespaced bool) field.ErrorList {
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
