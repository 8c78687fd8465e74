package fakeapiserver

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/minikubelet/minikubelet/api/podvalidation"
)

// validateMeta checks the object metadata every resource shares.
func validateMeta(obj runtime.Object, namespaced bool) field.ErrorList {
	return podvalidation.ValidateObjectMeta(mustMeta(obj), namespaced)
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

// validatePod runs the API server subset of the pod checks: the ones a malformed manifest or a
// client bug is most likely to trip.
func validatePod(obj runtime.Object) field.ErrorList {
	return podvalidation.ValidatePodCreate(obj.(*corev1.Pod), podvalidation.APIServer)
}
