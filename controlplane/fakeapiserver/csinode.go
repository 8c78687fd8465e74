package fakeapiserver

import (
	"fmt"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CSINode (storage.k8s.io/v1) is written by the kubelet's CSI node info manager when a CSI driver
// registers: one object per node, named after it, listing the node's drivers.

var storageV = schema.GroupVersion{Group: "storage.k8s.io", Version: "v1"}

// csiNodeIDMaxLength is kube-apiserver's limit on a CSINode driver's nodeID.
const csiNodeIDMaxLength = 192

func csiNodeResource() *resource {
	return &resource{
		name: "csinodes", singular: "csinode", kind: "CSINode", gv: storageV, verbs: verbsStored,
		newObj:   func() runtime.Object { return &storagev1.CSINode{} },
		fieldSet: metaFields,
		validate: validateCSINode,
		columns:  csiNodeColumns,
		cells:    csiNodeCells,
	}
}

// validateCSINode is the part of kube-apiserver's CSINode validation a kubelet can trip: driver
// names present and unique, node ids present and short enough, topology keys qualified names,
// allocatable counts not negative.
func validateCSINode(obj runtime.Object) field.ErrorList {
	cn := obj.(*storagev1.CSINode)
	errs := validateMeta(obj, false)
	seen := map[string]bool{}
	for i, d := range cn.Spec.Drivers {
		p := field.NewPath("spec", "drivers").Index(i)
		switch {
		case d.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case seen[d.Name]:
			errs = append(errs, field.Duplicate(p.Child("name"), d.Name))
		}
		seen[d.Name] = true
		switch {
		case d.NodeID == "":
			errs = append(errs, field.Required(p.Child("nodeID"), ""))
		case len(d.NodeID) > csiNodeIDMaxLength:
			errs = append(errs, field.Invalid(p.Child("nodeID"), d.NodeID, fmt.Sprintf("must be %d characters or less", csiNodeIDMaxLength)))
		}
		for j, k := range d.TopologyKeys {
			for _, msg := range validation.IsQualifiedName(k) {
				errs = append(errs, field.Invalid(p.Child("topologyKeys").Index(j), k, msg))
			}
		}
		if d.Allocatable != nil && d.Allocatable.Count != nil && *d.Allocatable.Count < 0 {
			errs = append(errs, field.Invalid(p.Child("allocatable", "count"), *d.Allocatable.Count, "must be greater than or equal to 0"))
		}
	}
	return errs
}

var csiNodeColumns = []metav1.TableColumnDefinition{
	col("Name", "string", "name", 0),
	col("Drivers", "integer", "", 0),
	col("Age", "string", "", 0),
}

func csiNodeCells(now time.Time, obj runtime.Object) []any {
	cn := obj.(*storagev1.CSINode)
	return []any{cn.Name, int64(len(cn.Spec.Drivers)), age(now, cn.CreationTimestamp)}
}
