package sources

import (
	"fmt"
	"math"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/minikubelet/minikubelet/apidefaults"
)

// validatePodCreate is the subset of the API server's ValidatePodCreate that a static pod can
// trip over: object metadata, containers (names, images, policies, ports, resources, mounts,
// probes), volumes, the pod-level policies and node name, and the ban on ephemeral containers at
// creation. Paths and messages follow the API server's so errors read the same.
func validatePodCreate(pod *v1.Pod) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&pod.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	specPath := field.NewPath("spec")
	spec := &pod.Spec
	volumes, errs := validateVolumes(spec.Volumes, specPath.Child("volumes"))
	allErrs = append(allErrs, errs...)

	names := sets.New[string]()
	if len(spec.Containers) == 0 {
		allErrs = append(allErrs, field.Required(specPath.Child("containers"), ""))
	}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		p := specPath.Child("containers").Index(i)
		allErrs = append(allErrs, validateContainer(c, volumes, names, p)...)
		if c.RestartPolicy != nil {
			allErrs = append(allErrs, validateContainerRestartPolicy(*c.RestartPolicy, p.Child("restartPolicy"),
				v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever)...)
		}
		if c.LivenessProbe != nil && c.LivenessProbe.SuccessThreshold != 1 {
			allErrs = append(allErrs, field.Invalid(p.Child("livenessProbe", "successThreshold"), c.LivenessProbe.SuccessThreshold, "must be 1"))
		}
		if c.StartupProbe != nil && c.StartupProbe.SuccessThreshold != 1 {
			allErrs = append(allErrs, field.Invalid(p.Child("startupProbe", "successThreshold"), c.StartupProbe.SuccessThreshold, "must be 1"))
		}
	}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		p := specPath.Child("initContainers").Index(i)
		allErrs = append(allErrs, validateContainer(c, volumes, names, p)...)
		sidecar := false
		if c.RestartPolicy != nil {
			allErrs = append(allErrs, validateContainerRestartPolicy(*c.RestartPolicy, p.Child("restartPolicy"), v1.ContainerRestartPolicyAlways)...)
			sidecar = *c.RestartPolicy == v1.ContainerRestartPolicyAlways
		}
		if !sidecar {
			const msg = "may not be set for init containers without restartPolicy=Always"
			if c.Lifecycle != nil {
				allErrs = append(allErrs, field.Forbidden(p.Child("lifecycle"), msg))
			}
			if c.LivenessProbe != nil {
				allErrs = append(allErrs, field.Forbidden(p.Child("livenessProbe"), msg))
			}
			if c.ReadinessProbe != nil {
				allErrs = append(allErrs, field.Forbidden(p.Child("readinessProbe"), msg))
			}
			if c.StartupProbe != nil {
				allErrs = append(allErrs, field.Forbidden(p.Child("startupProbe"), msg))
			}
		}
	}
	if spec.HostNetwork {
		allErrs = append(allErrs, validateHostNetworkPorts(spec.Containers, specPath.Child("containers"))...)
		allErrs = append(allErrs, validateHostNetworkPorts(spec.InitContainers, specPath.Child("initContainers"))...)
	}
	allErrs = append(allErrs, validateEnum(string(spec.RestartPolicy), specPath.Child("restartPolicy"),
		string(v1.RestartPolicyAlways), string(v1.RestartPolicyOnFailure), string(v1.RestartPolicyNever))...)
	allErrs = append(allErrs, validateEnum(string(spec.DNSPolicy), specPath.Child("dnsPolicy"),
		string(v1.DNSClusterFirstWithHostNet), string(v1.DNSClusterFirst), string(v1.DNSDefault), string(v1.DNSNone))...)
	if spec.DNSPolicy == v1.DNSNone && spec.DNSConfig == nil {
		allErrs = append(allErrs, field.Required(specPath.Child("dnsConfig"), "must provide `dnsConfig` when `dnsPolicy` is None"))
	}
	if spec.NodeName != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(spec.NodeName, false) {
			allErrs = append(allErrs, field.Invalid(specPath.Child("nodeName"), spec.NodeName, msg))
		}
	}
	if d := spec.ActiveDeadlineSeconds; d != nil && (*d < 1 || *d > math.MaxInt32) {
		allErrs = append(allErrs, field.Invalid(specPath.Child("activeDeadlineSeconds"), *d, validation.InclusiveRangeError(1, math.MaxInt32)))
	}
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		allErrs = append(allErrs, field.Invalid(specPath.Child("terminationGracePeriodSeconds"), *g, "must be greater than or equal to 0"))
	}
	if len(spec.EphemeralContainers) > 0 {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("ephemeralContainers"), "cannot be set on create"))
	}
	return allErrs
}

// validateContainer checks what init and app containers share. names collects every container
// name seen so far, so a name used twice anywhere in the pod is a duplicate.
func validateContainer(c *v1.Container, volumes sets.Set[string], names sets.Set[string], p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	namePath := p.Child("name")
	if c.Name == "" {
		allErrs = append(allErrs, field.Required(namePath, ""))
	} else {
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			allErrs = append(allErrs, field.Invalid(namePath, c.Name, msg))
		}
	}
	if names.Has(c.Name) {
		allErrs = append(allErrs, field.Duplicate(namePath, c.Name))
	} else {
		names.Insert(c.Name)
	}
	if c.Image == "" {
		allErrs = append(allErrs, field.Required(p.Child("image"), ""))
	} else if c.Image != strings.TrimSpace(c.Image) {
		allErrs = append(allErrs, field.Invalid(p.Child("image"), c.Image, "must not have leading or trailing whitespace"))
	}
	switch c.TerminationMessagePolicy {
	case v1.TerminationMessageReadFile, v1.TerminationMessageFallbackToLogsOnError:
	case "":
		allErrs = append(allErrs, field.Required(p.Child("terminationMessagePolicy"), ""))
	default:
		allErrs = append(allErrs, field.Invalid(p.Child("terminationMessagePolicy"), c.TerminationMessagePolicy, "must be 'File' or 'FallbackToLogsOnError'"))
	}
	allErrs = append(allErrs, validateEnum(string(c.ImagePullPolicy), p.Child("imagePullPolicy"),
		string(v1.PullAlways), string(v1.PullIfNotPresent), string(v1.PullNever))...)
	allErrs = append(allErrs, validatePorts(c.Ports, p.Child("ports"))...)
	allErrs = append(allErrs, validateMounts(c.VolumeMounts, volumes, p.Child("volumeMounts"))...)
	allErrs = append(allErrs, validateResources(&c.Resources, p.Child("resources"))...)
	for _, probe := range []struct {
		name  string
		probe *v1.Probe
	}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}} {
		allErrs = append(allErrs, validateProbe(probe.probe, p.Child(probe.name))...)
	}
	return allErrs
}

func validateContainerRestartPolicy(policy v1.ContainerRestartPolicy, p *field.Path, allowed ...v1.ContainerRestartPolicy) field.ErrorList {
	values := make([]string, len(allowed))
	for i, a := range allowed {
		values[i] = string(a)
	}
	return validateEnum(string(policy), p, values...)
}

// validateEnum reports an empty value as required and any value outside allowed as not supported.
func validateEnum(value string, p *field.Path, allowed ...string) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(p, value, allowed)}
}

func validatePorts(ports []v1.ContainerPort, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, port := range ports {
		idx := p.Index(i)
		if port.Name != "" {
			if msgs := validation.IsValidPortName(port.Name); len(msgs) > 0 {
				for _, msg := range msgs {
					allErrs = append(allErrs, field.Invalid(idx.Child("name"), port.Name, msg))
				}
			} else if names.Has(port.Name) {
				allErrs = append(allErrs, field.Duplicate(idx.Child("name"), port.Name))
			} else {
				names.Insert(port.Name)
			}
		}
		if port.ContainerPort == 0 {
			allErrs = append(allErrs, field.Required(idx.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
				allErrs = append(allErrs, field.Invalid(idx.Child("containerPort"), port.ContainerPort, msg))
			}
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				allErrs = append(allErrs, field.Invalid(idx.Child("hostPort"), port.HostPort, msg))
			}
		}
		allErrs = append(allErrs, validateEnum(string(port.Protocol), idx.Child("protocol"),
			string(v1.ProtocolSCTP), string(v1.ProtocolTCP), string(v1.ProtocolUDP))...)
	}
	return allErrs
}

func validateHostNetworkPorts(containers []v1.Container, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, c := range containers {
		for j, port := range c.Ports {
			if port.HostPort != port.ContainerPort {
				allErrs = append(allErrs, field.Invalid(p.Index(i).Child("ports").Index(j).Child("hostPort"), port.HostPort,
					"must match `containerPort` when `hostNetwork` is true"))
			}
		}
	}
	return allErrs
}

func validateMounts(mounts []v1.VolumeMount, volumes sets.Set[string], p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	paths := sets.New[string]()
	for i, m := range mounts {
		idx := p.Index(i)
		if m.Name == "" {
			allErrs = append(allErrs, field.Required(idx.Child("name"), ""))
		} else if !volumes.Has(m.Name) {
			allErrs = append(allErrs, field.NotFound(idx.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			allErrs = append(allErrs, field.Required(idx.Child("mountPath"), ""))
		} else if paths.Has(m.MountPath) {
			allErrs = append(allErrs, field.Invalid(idx.Child("mountPath"), m.MountPath, "must be unique"))
		}
		paths.Insert(m.MountPath)
	}
	return allErrs
}

// validateResources checks resource names, that quantities are not negative and that no request
// exceeds its limit.
func validateResources(r *v1.ResourceRequirements, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	check := func(list v1.ResourceList, lp *field.Path) {
		for _, name := range sets.List(sets.KeySet(list)) {
			q := list[name]
			kp := lp.Key(string(name))
			for _, msg := range validation.IsQualifiedName(string(name)) {
				allErrs = append(allErrs, field.Invalid(kp, name, msg))
			}
			if q.Cmp(resource.Quantity{}) < 0 {
				allErrs = append(allErrs, field.Invalid(kp, q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	check(r.Limits, p.Child("limits"))
	check(r.Requests, p.Child("requests"))
	for _, name := range sets.List(sets.KeySet(r.Requests)) {
		req := r.Requests[name]
		if limit, ok := r.Limits[name]; ok && req.Cmp(limit) > 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("requests").Key(string(name)), req.String(),
				fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		}
	}
	return allErrs
}

func validateProbe(probe *v1.Probe, p *field.Path) field.ErrorList {
	if probe == nil {
		return nil
	}
	var allErrs field.ErrorList
	handlers := 0
	if probe.Exec != nil {
		handlers++
	}
	if probe.HTTPGet != nil {
		handlers++
	}
	if probe.TCPSocket != nil {
		handlers++
	}
	if probe.GRPC != nil {
		handlers++
	}
	if handlers == 0 {
		allErrs = append(allErrs, field.Required(p, "must specify a handler type"))
	} else if handlers > 1 {
		allErrs = append(allErrs, field.Forbidden(p, "may not specify more than 1 handler type"))
	}
	for _, f := range []struct {
		name string
		v    int32
	}{{"initialDelaySeconds", probe.InitialDelaySeconds}, {"timeoutSeconds", probe.TimeoutSeconds},
		{"periodSeconds", probe.PeriodSeconds}, {"successThreshold", probe.SuccessThreshold}, {"failureThreshold", probe.FailureThreshold}} {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(f.v), p.Child(f.name))...)
	}
	return allErrs
}

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
