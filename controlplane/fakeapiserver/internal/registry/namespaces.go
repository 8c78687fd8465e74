package registry

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Namespaces is the namespace strategy: a namespace is created Active with the "kubernetes"
// finalizer and the kubernetes.io/metadata.name label, and an update keeps its status and
// finalizers. Its lifecycle (admission, deletion, finalizing) is the server's.
func Namespaces() Strategy {
	return Strategy{
		NewObj:        func() runtime.Object { return &corev1.Namespace{} },
		FieldSet:      namespaceFields,
		PrepareCreate: PrepareNamespaceCreate,
		Validate:      validateNamespace,
		PrepareUpdate: prepareNamespaceUpdate,
		Columns:       namespaceColumns,
		Cells:         namespaceCells,
	}
}

func namespaceFields(obj runtime.Object) fields.Set {
	ns := obj.(*corev1.Namespace)
	return fields.Set{"metadata.name": ns.Name, "status.phase": string(ns.Status.Phase)}
}

// PrepareNamespaceCreate is SetDefaults_Namespace and the namespace strategy's PrepareForCreate:
// the name label, phase Active, and the "kubernetes" finalizer the namespace controller removes.
func PrepareNamespaceCreate(obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	defaultNamespaceLabel(ns)
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	for _, f := range ns.Spec.Finalizers {
		if f == corev1.FinalizerKubernetes {
			return
		}
	}
	ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
}

func defaultNamespaceLabel(ns *corev1.Namespace) {
	if ns.Name == "" {
		return
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[corev1.LabelMetadataName] = ns.Name
}

// prepareNamespaceUpdate keeps the status and the spec's finalizers, which only the finalize
// subresource changes, and the name label.
func prepareNamespaceUpdate(oldObj, newObj runtime.Object) field.ErrorList {
	oldNS, newNS := oldObj.(*corev1.Namespace), newObj.(*corev1.Namespace)
	defaultNamespaceLabel(newNS)
	newNS.Status = *oldNS.Status.DeepCopy()
	newNS.Spec.Finalizers = append([]corev1.FinalizerName(nil), oldNS.Spec.Finalizers...)
	return nil
}

// validateNamespace checks the name is a DNS label, as ValidateNamespaceName does.
func validateNamespace(obj runtime.Object) field.ErrorList {
	ns := obj.(*corev1.Namespace)
	if ns.Name == "" {
		return ValidateMeta(obj, false)
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(ns.Name) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), ns.Name, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	return ValidateMeta(obj, false)
}

var namespaceColumns = []metav1.TableColumnDefinition{
	Col("Name", "string", "name", 0),
	Col("Status", "string", "", 0),
	Col("Age", "string", "", 0),
}

func namespaceCells(now time.Time, obj runtime.Object) []any {
	ns := obj.(*corev1.Namespace)
	return []any{ns.Name, string(ns.Status.Phase), Age(now, ns.CreationTimestamp)}
}
