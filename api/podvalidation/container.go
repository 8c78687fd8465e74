package podvalidation

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// containers checks a list of init or app containers; init selects the rules only one kind has.
func (v *validator) containers(cs []v1.Container, p *field.Path, init bool) field.ErrorList {
	var allErrs field.ErrorList
	for i := range cs {
		c := &cs[i]
		cp := p.Index(i)
		allErrs = append(allErrs, v.container(c, cp)...)
		if !v.static {
			continue
		}
		if init {
			allErrs = append(allErrs, validateInitContainer(c, cp)...)
		} else {
			allErrs = append(allErrs, validateAppContainer(c, cp)...)
		}
		// Hooks are checked on app containers and sidecars; a regular init container may not
		// have them at all (validateInitContainer).
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
		if c.Lifecycle != nil && (!init || sidecar) {
			allErrs = append(allErrs, validateLifecycle(c.Lifecycle, v.grace, cp.Child("lifecycle"))...)
		}
	}
	return allErrs
}

// container checks what init and app containers share. A name used twice anywhere in the pod is
// a duplicate; the APIServer subset reports it only as that, StaticPod checks it as a name too.
func (v *validator) container(c *v1.Container, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	namePath := p.Child("name")
	dup := v.names.Has(c.Name)
	v.names.Insert(c.Name)
	switch {
	case c.Name == "":
		allErrs = append(allErrs, field.Required(namePath, ""))
	case dup && !v.static:
		allErrs = append(allErrs, field.Duplicate(namePath, c.Name))
	default:
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			allErrs = append(allErrs, field.Invalid(namePath, c.Name, msg))
		}
	}
	if dup && v.static {
		allErrs = append(allErrs, field.Duplicate(namePath, c.Name))
	}
	if c.Image == "" {
		allErrs = append(allErrs, field.Required(p.Child("image"), ""))
	} else if v.static && c.Image != strings.TrimSpace(c.Image) {
		allErrs = append(allErrs, field.Invalid(p.Child("image"), c.Image, "must not have leading or trailing whitespace"))
	}
	if v.static {
		switch c.TerminationMessagePolicy {
		case v1.TerminationMessageReadFile, v1.TerminationMessageFallbackToLogsOnError:
		case "":
			allErrs = append(allErrs, field.Required(p.Child("terminationMessagePolicy"), ""))
		default:
			allErrs = append(allErrs, field.Invalid(p.Child("terminationMessagePolicy"), c.TerminationMessagePolicy, "must be 'File' or 'FallbackToLogsOnError'"))
		}
		allErrs = append(allErrs, enum(v, c.ImagePullPolicy, p.Child("imagePullPolicy"), v1.PullAlways, v1.PullIfNotPresent, v1.PullNever)...)
	}
	allErrs = append(allErrs, v.ports(c.Ports, p.Child("ports"))...)
	if !v.static {
		return allErrs
	}
	allErrs = append(allErrs, validateMounts(c.VolumeMounts, v.volumes, p.Child("volumeMounts"))...)
	allErrs = append(allErrs, validateResources(&c.Resources, p.Child("resources"))...)
	for _, probe := range []struct {
		name  string
		probe *v1.Probe
	}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}} {
		allErrs = append(allErrs, validateProbe(probe.probe, p.Child(probe.name))...)
	}
	return allErrs
}

// validateAppContainer checks what only app containers have: their own restart policy and probes
// whose success threshold must be 1.
func validateAppContainer(c *v1.Container, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if c.RestartPolicy != nil {
		allErrs = append(allErrs, validateEnum(*c.RestartPolicy, p.Child("restartPolicy"),
			v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever)...)
	}
	if c.LivenessProbe != nil && c.LivenessProbe.SuccessThreshold != 1 {
		allErrs = append(allErrs, field.Invalid(p.Child("livenessProbe", "successThreshold"), c.LivenessProbe.SuccessThreshold, "must be 1"))
	}
	if c.StartupProbe != nil && c.StartupProbe.SuccessThreshold != 1 {
		allErrs = append(allErrs, field.Invalid(p.Child("startupProbe", "successThreshold"), c.StartupProbe.SuccessThreshold, "must be 1"))
	}
	return allErrs
}

// validateInitContainer checks what only init containers have: restartPolicy Always makes a
// sidecar, and only a sidecar may have lifecycle hooks and probes.
func validateInitContainer(c *v1.Container, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	sidecar := false
	if c.RestartPolicy != nil {
		allErrs = append(allErrs, validateEnum(*c.RestartPolicy, p.Child("restartPolicy"), v1.ContainerRestartPolicyAlways)...)
		sidecar = *c.RestartPolicy == v1.ContainerRestartPolicyAlways
	}
	if sidecar {
		return allErrs
	}
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
	return allErrs
}

// validateEnum is enum's StaticPod form, for the checks only that subset makes.
func validateEnum[T ~string](value T, p *field.Path, allowed ...T) field.ErrorList {
	return enum(&validator{static: true}, value, p, allowed...)
}

// ports checks container ports. Both subsets check the port number; StaticPod reports a missing
// one as required and also checks names, host ports and protocols.
func (v *validator) ports(ports []v1.ContainerPort, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, port := range ports {
		idx := p.Index(i)
		if v.static && port.Name != "" {
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
		if v.static && port.ContainerPort == 0 {
			allErrs = append(allErrs, field.Required(idx.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
				allErrs = append(allErrs, field.Invalid(idx.Child("containerPort"), port.ContainerPort, msg))
			}
		}
		if !v.static {
			continue
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				allErrs = append(allErrs, field.Invalid(idx.Child("hostPort"), port.HostPort, msg))
			}
		}
		allErrs = append(allErrs, validateEnum(port.Protocol, idx.Child("protocol"), v1.ProtocolSCTP, v1.ProtocolTCP, v1.ProtocolUDP)...)
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

// ValidateResources checks a container's resource requirements as ValidateContainerResources
// does: resource names, that quantities are not negative and that no request exceeds its limit.
// The API server's subset runs it only for a resize (pods/resize).
func ValidateResources(r *v1.ResourceRequirements, p *field.Path) field.ErrorList {
	return validateResources(r, p)
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
