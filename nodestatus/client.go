package nodestatus

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Client is the part of the API the node heartbeat writes through. Errors are the API's, so that
// apierrors.IsNotFound works on them.
type Client interface {
	// GetNode reads the node.
	GetNode(ctx context.Context, name string) (*v1.Node, error)
	// CreateNode creates the node.
	CreateNode(ctx context.Context, node *v1.Node) (*v1.Node, error)
	// UpdateNodeStatus writes the node's status subresource.
	UpdateNodeStatus(ctx context.Context, node *v1.Node) (*v1.Node, error)
	// RenewLease creates the lease or replaces its spec.
	RenewLease(ctx context.Context, lease *coordinationv1.Lease) error
}

// ClientsetClient implements Client with client-go typed calls.
type ClientsetClient struct {
	// Client is the clientset; it must not be nil.
	Client kubernetes.Interface
}

var _ Client = ClientsetClient{}

// GetNode reads the node.
func (c ClientsetClient) GetNode(ctx context.Context, name string) (*v1.Node, error) {
	return c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}

// CreateNode creates the node.
func (c ClientsetClient) CreateNode(ctx context.Context, node *v1.Node) (*v1.Node, error) {
	return c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
}

// UpdateNodeStatus writes the node's status subresource.
func (c ClientsetClient) UpdateNodeStatus(ctx context.Context, node *v1.Node) (*v1.Node, error) {
	return c.Client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
}

// RenewLease creates the lease, or updates the existing one's spec.
func (c ClientsetClient) RenewLease(ctx context.Context, lease *coordinationv1.Lease) error {
	leases := c.Client.CoordinationV1().Leases(lease.Namespace)
	old, err := leases.Get(ctx, lease.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, lease, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	upd := old.DeepCopy()
	upd.Spec = lease.Spec
	if len(upd.OwnerReferences) == 0 {
		upd.OwnerReferences = lease.OwnerReferences
	}
	_, err = leases.Update(ctx, upd, metav1.UpdateOptions{})
	return err
}
