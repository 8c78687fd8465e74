package draplugin

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
)

// APISlices deletes ResourceSlices through the API server, as the kubelet's wipe does: one
// DELETE of the collection the field selector selects.
type APISlices struct {
	Client kubernetes.Interface
}

var _ Slices = APISlices{}

// DeleteSlices deletes the selected slices; a NotFound is no error (there was nothing to delete).
func (a APISlices) DeleteSlices(ctx context.Context, selector fields.Set) error {
	err := a.Client.ResourceV1().ResourceSlices().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: selector.String()})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
