package podvalidation

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateLifecycle checks a container's postStart and preStop handlers as the API server's
// validateLifecycle does: exactly one handler each, a command for exec, a path, port and scheme
// for httpGet, a port for tcpSocket, and a sleep of 0 to terminationGracePeriodSeconds seconds
// (PodLifecycleSleepActionAllowZero is GA in v1.35). grace is the pod's; nil skips the sleep
// bound, as the API server does when the grace is itself invalid.
func validateLifecycle(l *v1.Lifecycle, grace *int64, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if l.PostStart != nil {
		allErrs = append(allErrs, validateHandler(l.PostStart, grace, p.Child("postStart"))...)
	}
	if l.PreStop != nil {
		allErrs = append(allErrs, validateHandler(l.PreStop, grace, p.Child("preStop"))...)
	}
	return allErrs
}

// validateHandler is the API server's validateHandler for a lifecycle handler.
func validateHandler(h *v1.LifecycleHandler, grace *int64, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	n := 0
	one := func(name string, set bool, check func() field.ErrorList) {
		if !set {
			return
		}
		if n > 0 {
			allErrs = append(allErrs, field.Forbidden(p.Child(name), "may not specify more than 1 handler type"))
			return
		}
		n++
		allErrs = append(allErrs, check()...)
	}
	one("exec", h.Exec != nil, func() field.ErrorList {
		if len(h.Exec.Command) == 0 {
			return field.ErrorList{field.Required(p.Child("exec", "command"), "")}
		}
		return nil
	})
	one("httpGet", h.HTTPGet != nil, func() field.ErrorList {
		return validateHTTPGet(h.HTTPGet, p.Child("httpGet"))
	})
	one("tcpSocket", h.TCPSocket != nil, func() field.ErrorList {
		return validatePortNumOrName(h.TCPSocket.Port, p.Child("tcpSocket", "port"))
	})
	one("sleep", h.Sleep != nil, func() field.ErrorList {
		if grace != nil && (h.Sleep.Seconds < 0 || h.Sleep.Seconds > *grace) {
			return field.ErrorList{field.Invalid(p.Child("sleep"), h.Sleep.Seconds,
				fmt.Sprintf("must be non-negative and less than terminationGracePeriodSeconds (%d)", *grace))}
		}
		return nil
	})
	if n == 0 {
		allErrs = append(allErrs, field.Required(p, "must specify a handler type"))
	}
	return allErrs
}

// validateHTTPGet is the API server's validateHTTPGetAction.
func validateHTTPGet(h *v1.HTTPGetAction, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if h.Path == "" {
		allErrs = append(allErrs, field.Required(p.Child("path"), ""))
	}
	allErrs = append(allErrs, validatePortNumOrName(h.Port, p.Child("port"))...)
	schemes := sets.New(v1.URISchemeHTTP, v1.URISchemeHTTPS)
	if !schemes.Has(h.Scheme) {
		allErrs = append(allErrs, field.NotSupported(p.Child("scheme"), h.Scheme, sets.List(schemes)))
	}
	for _, header := range h.HTTPHeaders {
		for _, msg := range validation.IsHTTPHeaderName(header.Name) {
			allErrs = append(allErrs, field.Invalid(p.Child("httpHeaders"), header.Name, msg))
		}
	}
	return allErrs
}

// validatePortNumOrName is the API server's ValidatePortNumOrName.
func validatePortNumOrName(port intstr.IntOrString, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if port.Type == intstr.Int {
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			allErrs = append(allErrs, field.Invalid(p, port.IntValue(), msg))
		}
		return allErrs
	}
	for _, msg := range validation.IsValidPortName(port.StrVal) {
		allErrs = append(allErrs, field.Invalid(p, port.StrVal, msg))
	}
	return allErrs
}
