package podvalidation

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/minikubelet/minikubelet/api/apidefaults"
)

// validateVolumes checks volume names (DNS labels, unique) and that each volume has exactly one
// source. It returns the set of names for the mount checks.
func validateVolumes(volumes []v1.Volume, p *field.Path) (sets.Set[string], field.ErrorList) {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i := range volumes {
		vol := &volumes[i]
		idx := p.Index(i)
		namePath := idx.Child("name")
		if vol.Name == "" {
			allErrs = append(allErrs, field.Required(namePath, ""))
		} else {
			for _, msg := range validation.IsDNS1123Label(vol.Name) {
				allErrs = append(allErrs, field.Invalid(namePath, vol.Name, msg))
			}
		}
		if names.Has(vol.Name) {
			allErrs = append(allErrs, field.Duplicate(namePath, vol.Name))
		}
		names.Insert(vol.Name)
		switch n := apidefaults.VolumeSourceCount(&vol.VolumeSource); {
		case n == 0:
			allErrs = append(allErrs, field.Required(idx, "must specify a volume type"))
		case n > 1:
			allErrs = append(allErrs, field.Forbidden(idx, "may not specify more than 1 volume type"))
		}
		if hp := vol.HostPath; hp != nil && hp.Path == "" {
			allErrs = append(allErrs, field.Required(idx.Child("hostPath", "path"), ""))
		}
	}
	return names, allErrs
}
