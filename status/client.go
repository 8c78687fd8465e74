package status

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// PodStatusClient is the part of the API the Manager writes through. Errors are the API's, so
// that apierrors.IsNotFound works on them. Of the pods it returns, the Manager reads the metadata
// (not the managed fields) and the status only: an implementation may leave the spec and the
// managed fields out (AnswerAdapter).
type PodStatusClient interface {
	// GetPod reads a pod. The caller only reads the pod returned (its UID, status and deletion
	// timestamp: syncPod's merge, patch and canBeDeleted) and keeps nothing of it, so that an
	// in-process client may return a view of the API server's stored object.
	GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error)
	// PatchPodStatus applies a strategic merge patch to the pod's status subresource and returns
	// the pod as stored afterwards. The caller only reads the pod returned (its UID, name,
	// phase, deletion timestamp, annotations and container states: the trace, canBeDeleted,
	// the startup tracker) and keeps nothing of it past the write's handling, so that an
	// in-process client may return a view of the API server's stored object instead of a copy
	// (docs/design/008-shared-pods.md).
	PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error)
	// DeletePod deletes a pod with grace period 0, on condition that its UID is still uid.
	DeletePod(ctx context.Context, namespace, name string, uid types.UID) error
}

// ClientsetAdapter implements PodStatusClient with client-go typed calls, as the kubelet's
// statusutil.PatchPodStatus and status manager make them.
type ClientsetAdapter struct {
	// Client is the clientset; it must not be nil.
	Client kubernetes.Interface
}

var _ PodStatusClient = ClientsetAdapter{}

// GetPod reads a pod.
func (a ClientsetAdapter) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	pod, err := a.Client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get pod %s/%s: %w", namespace, name, err)
	}
	return pod, nil
}

// PatchPodStatus sends a strategic merge patch to the status subresource.
func (a ClientsetAdapter) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	pod, err := a.Client.CoreV1().Pods(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return nil, fmt.Errorf("patch status of pod %s/%s: %w", namespace, name, err)
	}
	return pod, nil
}

// DeletePod deletes a pod with grace period 0 and a UID precondition, so that a pod re-created
// under the same name is never deleted by mistake.
func (a ClientsetAdapter) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	grace := int64(0)
	err := a.Client.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{
		GracePeriodSeconds: &grace,
		Preconditions:      metav1.NewUIDPreconditions(string(uid)),
	})
	if err != nil {
		return fmt.Errorf("delete pod %s/%s: %w", namespace, name, err)
	}
	return nil
}
