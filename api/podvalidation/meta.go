package podvalidation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateObjectMeta checks the metadata fields the APIServer subset checks itself on every
// object, pods or not: a name that is a DNS-1123 subdomain and, for a namespaced object, a
// namespace that is a DNS-1123 label. It is a subset of apimachinery's ValidateObjectMeta, which
// the StaticPod subset uses instead; the API server checks labels and annotations for every kind
// in its shared create and update path. Errors are under "metadata".
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
	return errs
}
