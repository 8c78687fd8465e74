package registry

import (
	"fmt"
	"iter"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/minikubelet/minikubelet/api/podvalidation"
)

// Strategy is a kind's registry strategy: the hooks its create and update run, in the order of
// the fields, and how kubectl's table prints it. Every hook but NewObj and FieldSet may be nil: a
// nil one does nothing, and nil Cells print the default Name and Age columns. It has one field
// per hook because it is a row the server copies into its resource table; the names, verbs and
// subresources the kind is served under stay with the server.
type Strategy struct {
	NewObj func() runtime.Object
	// FieldSet is what field selectors match against; every key is a supported field label.
	FieldSet func(runtime.Object) fields.Set
	// PrepareCreate resets what a client may not set on create (PrepareForCreate).
	PrepareCreate func(obj runtime.Object)
	// BeginCreate allocates what a create takes from the server's shared ranges (a Service's
	// cluster IP), after admission and before validation, as the REST storage's BeginCreate
	// does. The caller holds the store lock.
	BeginCreate func(st Store, obj runtime.Object, dryRun bool) error
	// Validate checks an object before it is stored.
	Validate func(obj runtime.Object) field.ErrorList
	// PrepareUpdate makes newObj keep what an update of the main resource may not change (the
	// status), and rejects forbidden spec changes (PrepareForUpdate).
	PrepareUpdate func(oldObj, newObj runtime.Object) field.ErrorList
	// BeginUpdate allocates what an update newly needs from the server's shared ranges, after
	// PrepareUpdate, as the REST storage's BeginUpdate does. The caller holds the store lock.
	BeginUpdate func(st Store, oldObj, newObj runtime.Object, dryRun bool) error
	// ValidateUpdate checks what an update may not change; its errors come before those of
	// Validate on the new object.
	ValidateUpdate func(oldObj, newObj runtime.Object) field.ErrorList
	// Columns and Cells render the object as a kubectl table row.
	Columns []metav1.TableColumnDefinition
	Cells   func(now time.Time, obj runtime.Object) []any
}

// Store is what the strategies' allocations read of the server's store, whose lock the caller
// of BeginCreate and BeginUpdate holds.
type Store interface {
	// Services yields every stored Service, in the store's order.
	Services() iter.Seq[*corev1.Service]
	// Intn draws from the store's seeded random source, so that a replay allocates alike.
	Intn(n int) int
	// ServiceCIDR is the range cluster IPs are allocated from.
	ServiceCIDR() netip.Prefix
}

// MetaFields are the field labels of every kind: its name and namespace.
func MetaFields(obj runtime.Object) fields.Set {
	m := MustMeta(obj)
	set := fields.Set{"metadata.name": m.GetName()}
	set["metadata.namespace"] = m.GetNamespace()
	return set
}

// ValidateMeta checks an object's metadata as ValidateObjectMeta does.
func ValidateMeta(obj runtime.Object, namespaced bool) field.ErrorList {
	return podvalidation.ValidateObjectMeta(MustMeta(obj), namespaced)
}

// Age renders the time since t the way kubectl does, "<unknown>" for a zero time.
func Age(now time.Time, t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// Col is a kubectl table column of the given name, type, format and priority.
func Col(name, typ, format string, priority int32) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Format: format, Priority: priority}
}

// MustMeta returns obj's object metadata. Every kind the server stores has it, so an object
// without it is the server's bug, and it panics naming the server.
func MustMeta(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("fakeapiserver: %T has no object metadata", obj))
	}
	return m
}
