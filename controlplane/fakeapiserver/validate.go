package fakeapiserver

import (
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/minikubelet/minikubelet/api/podvalidation"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/registry"
)

// validateObject is the validation of every create and update, whatever the kind: the kind's own
// checks (res.validate, nil for none), then the metadata checks every kind shares, so that a kind
// cannot leave them out.
func validateObject(res *resource, obj runtime.Object) field.ErrorList {
	var errs field.ErrorList
	if res.validate != nil {
		errs = res.validate(obj)
	}
	return append(errs, validateSharedMeta(mustMeta(obj))...)
}

// validateSharedMeta checks labels and annotations as apimachinery's ValidateObjectMeta does for
// every kind in kube-apiserver: label keys are qualified names and values label values; annotation
// keys are qualified names (in any case) and all annotations together hold at most 256 KiB
// (TotalAnnotationSizeLimitB, 262,144 bytes, keys and values counted). Answered 422 with the
// rest of the object's errors.
func validateSharedMeta(m metav1.Object) field.ErrorList {
	errs := metav1validation.ValidateLabels(m.GetLabels(), labelsPath)
	return append(errs, apivalidation.ValidateAnnotations(m.GetAnnotations(), annotationsPath)...)
}

// The paths validateSharedMeta names, built once: every write validates the metadata, and a
// path is never changed once built (Child and Key make new ones), so one may serve every call.
var (
	labelsPath      = field.NewPath("metadata", "labels")
	annotationsPath = field.NewPath("metadata", "annotations")
)

// validateMeta checks the name and namespace of an object (their rules depend on the kind).
func validateMeta(obj runtime.Object, namespaced bool) field.ErrorList {
	return registry.ValidateMeta(obj, namespaced)
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
