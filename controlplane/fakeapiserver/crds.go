package fakeapiserver

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CustomResourceDefinitions (apiextensions.k8s.io/v1) are served as a collection that is always
// empty and cannot be written: the server has no apiextensions-apiserver to serve custom
// resources with. kubectl lists CRDs to tell whether a kind it finds no schema for is a custom
// resource (its field validation does, for an `apply -f` of any bundle), and a cluster without
// CRDs answers that list with no items, not 404. The objects are read as bare metadata, since
// there are never any; so the kind is in no OpenAPI document either.

var apiextensionsV = schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"}

func crdResource() *resource {
	return &resource{
		name: "customresourcedefinitions", singular: "customresourcedefinition", kind: "CustomResourceDefinition",
		gv: apiextensionsV, shortNames: []string{"crd", "crds"}, categories: []string{"api-extensions"},
		verbs:    verbsReadOnly,
		newObj:   func() runtime.Object { return &metav1.PartialObjectMetadata{} },
		fieldSet: metaFields,
		validate: func(obj runtime.Object) field.ErrorList { return validateMeta(obj, false) },
		columns:  crdColumns,
		cells:    crdCells,
	}
}

// crdColumns are those of kube-apiserver's default table convertor, which serves CRDs.
var crdColumns = []metav1.TableColumnDefinition{
	col("Name", "string", "name", 0),
	col("Created At", "date", "", 0),
}

func crdCells(_ time.Time, obj runtime.Object) []any {
	m := mustMeta(obj)
	return []any{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)}
}
