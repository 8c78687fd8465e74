package podvalidation

import (
	"math"

	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidatePodCreate checks pod as the API server's ValidatePodCreate does, restricted to subset,
// and returns every problem found, in the order the subset's checks run; nil means valid. A value
// outside the Subset enum is treated as APIServer. pod is not modified.
func ValidatePodCreate(pod *v1.Pod, subset Subset) field.ErrorList {
	v := &validator{static: subset == StaticPod, names: sets.New[string](), grace: pod.Spec.TerminationGracePeriodSeconds}
	var allErrs field.ErrorList
	if v.static {
		allErrs = apivalidation.ValidateObjectMeta(&pod.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	} else {
		allErrs = ValidateObjectMeta(pod, true)
	}
	specPath := field.NewPath("spec")
	spec := &pod.Spec
	if v.static {
		var errs field.ErrorList
		v.volumes, errs = validateVolumes(spec.Volumes, specPath.Child("volumes"))
		allErrs = append(allErrs, errs...)
	}
	if len(spec.Containers) == 0 {
		allErrs = append(allErrs, field.Required(specPath.Child("containers"), ""))
	}
	// The API server checks app containers first and init containers against them; the
	// APIServer subset has always gone the other way round, which decides which of two containers
	// with one name is the duplicate.
	if v.static {
		allErrs = append(allErrs, v.containers(spec.Containers, specPath.Child("containers"), false)...)
		allErrs = append(allErrs, v.containers(spec.InitContainers, specPath.Child("initContainers"), true)...)
	} else {
		allErrs = append(allErrs, v.containers(spec.InitContainers, specPath.Child("initContainers"), true)...)
		allErrs = append(allErrs, v.containers(spec.Containers, specPath.Child("containers"), false)...)
	}
	if v.static && spec.HostNetwork {
		allErrs = append(allErrs, validateHostNetworkPorts(spec.Containers, specPath.Child("containers"))...)
		allErrs = append(allErrs, validateHostNetworkPorts(spec.InitContainers, specPath.Child("initContainers"))...)
	}
	allErrs = append(allErrs, enum(v, spec.RestartPolicy, specPath.Child("restartPolicy"),
		v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever)...)
	if v.static {
		allErrs = append(allErrs, enum(v, spec.DNSPolicy, specPath.Child("dnsPolicy"),
			v1.DNSClusterFirstWithHostNet, v1.DNSClusterFirst, v1.DNSDefault, v1.DNSNone)...)
	} else {
		allErrs = append(allErrs, enum(v, spec.DNSPolicy, specPath.Child("dnsPolicy"),
			v1.DNSClusterFirst, v1.DNSClusterFirstWithHostNet, v1.DNSDefault, v1.DNSNone)...)
	}
	if v.static && spec.DNSPolicy == v1.DNSNone && spec.DNSConfig == nil {
		allErrs = append(allErrs, field.Required(specPath.Child("dnsConfig"), "must provide `dnsConfig` when `dnsPolicy` is None"))
	}
	if v.static {
		allErrs = append(allErrs, validateNodeName(spec.NodeName, specPath.Child("nodeName"))...)
		if d := spec.ActiveDeadlineSeconds; d != nil && (*d < 1 || *d > math.MaxInt32) {
			allErrs = append(allErrs, field.Invalid(specPath.Child("activeDeadlineSeconds"), *d, validation.InclusiveRangeError(1, math.MaxInt32)))
		}
	} else {
		if d := spec.ActiveDeadlineSeconds; d != nil && *d <= 0 {
			allErrs = append(allErrs, field.Invalid(specPath.Child("activeDeadlineSeconds"), *d, "must be greater than 0"))
		}
		allErrs = append(allErrs, validateNodeName(spec.NodeName, specPath.Child("nodeName"))...)
	}
	if !v.static {
		return allErrs
	}
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		allErrs = append(allErrs, field.Invalid(specPath.Child("terminationGracePeriodSeconds"), *g, "must be greater than or equal to 0"))
	}
	if len(spec.EphemeralContainers) > 0 {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("ephemeralContainers"), "cannot be set on create"))
	}
	return allErrs
}

// validator holds what one ValidatePodCreate call accumulates across the pod.
type validator struct {
	static  bool             // the StaticPod subset
	volumes sets.Set[string] // the pod's volume names, for the mount checks (StaticPod only)
	names   sets.Set[string] // every container name seen so far, init and app alike
	grace   *int64           // the pod's terminationGracePeriodSeconds, which bounds sleep hooks
}

// enum reports a value outside allowed as not supported. StaticPod reports an empty value as
// required, as the API server does, and the bad value as a plain string; APIServer reports an
// empty value as not supported and keeps the value's type.
func enum[T ~string](v *validator, value T, p *field.Path, allowed ...T) field.ErrorList {
	if v.static && value == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	if v.static {
		return field.ErrorList{field.NotSupported(p, string(value), allowed)}
	}
	return field.ErrorList{field.NotSupported(p, value, allowed)}
}

func validateNodeName(name string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if name != "" {
		for _, msg := range validation.IsDNS1123Subdomain(name) {
			allErrs = append(allErrs, field.Invalid(p, name, msg))
		}
	}
	return allErrs
}
