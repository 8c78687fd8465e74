package nodestatus

import (
	"context"
	"encoding/json"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes"
)

// Client is the part of the API the node heartbeat and the lease controller write through. Errors
// are the API's, so that apierrors.IsNotFound works on them.
type Client interface {
	// GetNode reads the node from the API server.
	GetNode(ctx context.Context, name string) (*v1.Node, error)
	// CreateNode creates the node.
	CreateNode(ctx context.Context, node *v1.Node) (*v1.Node, error)
	// PatchNodeStatus writes the difference between original, the node as read, and node to the
	// status subresource.
	PatchNodeStatus(ctx context.Context, original, node *v1.Node) (*v1.Node, error)
	// GetLease, CreateLease and UpdateLease read and write a lease.
	GetLease(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error)
	CreateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error)
	UpdateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error)
}

// NodeLister is the kubelet's node lister: the node as its informer last saw it.
type NodeLister interface {
	// Get returns the node, or an error when the informer has not seen it.
	Get(name string) (*v1.Node, error)
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

// PatchNodeStatus sends the strategic merge patch from original to node to the status
// subresource, as the kubelet's nodeutil.PatchNodeStatus does: the spec is left out, and the
// addresses, which the API marks merge-by-type although they are a list to replace, are replaced
// whole when they changed. The patch has no resource version: a node a controller changed since
// it was read is patched all the same.
func (c ClientsetClient) PatchNodeStatus(ctx context.Context, original, node *v1.Node) (*v1.Node, error) {
	return PatchStatus(original, node, func(patch []byte) (*v1.Node, error) {
		return c.Client.CoreV1().Nodes().Patch(ctx, node.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	})
}

// PatchStatus is nodeutil.PatchNodeStatus around a client's way of sending the patch: the
// strategic merge patch from original to node (statusPatch) goes to send, and a failure is
// wrapped in the kubelet's message, which names the patch and the node. Every Client's
// PatchNodeStatus goes through it, whatever carries the request.
func PatchStatus(original, node *v1.Node, send func(patch []byte) (*v1.Node, error)) (*v1.Node, error) {
	patch, err := statusPatch(original, node)
	if err != nil {
		return nil, err
	}
	updated, err := send(patch)
	if err != nil {
		return nil, fmt.Errorf("failed to patch status %q for node %q: %w", patch, node.Name, err)
	}
	return updated, nil
}

// statusPatch is nodeutil's preparePatchBytesforNodeStatus: the strategic merge patch
// PatchNodeStatus sends, for a client that sends it another way.
func statusPatch(original, node *v1.Node) ([]byte, error) {
	oldData, err := json.Marshal(original)
	if err != nil {
		return nil, fmt.Errorf("marshal node %s: %w", original.Name, err)
	}
	replaceAddresses := len(original.Status.Addresses) > 0 && !apiequality.Semantic.DeepEqual(original.Status.Addresses, node.Status.Addresses)
	// The node to diff against is node with original's spec (and addresses): a shallow copy
	// does, as nothing is written through it and the encoding only reads it. The kubelet
	// deep-copies the whole node, its images and managed fields, at every status write.
	diff := *node
	diff.Spec = original.Spec
	if replaceAddresses {
		diff.Status.Addresses = original.Status.Addresses
	}
	newData, err := json.Marshal(&diff)
	if err != nil {
		return nil, fmt.Errorf("marshal node %s: %w", node.Name, err)
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, v1.Node{})
	if err != nil {
		return nil, fmt.Errorf("status patch for node %s: %w", node.Name, err)
	}
	if !replaceAddresses {
		return patch, nil
	}
	// A "$patch: replace" directive at the end of the addresses replaces the list.
	var p map[string]any
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, fmt.Errorf("status patch for node %s: %w", node.Name, err)
	}
	status, _ := p["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		p["status"] = status
	}
	raw, err := json.Marshal(node.Status.Addresses)
	if err != nil {
		return nil, fmt.Errorf("status patch for node %s: %w", node.Name, err)
	}
	var addrs []any
	if err := json.Unmarshal(raw, &addrs); err != nil {
		return nil, fmt.Errorf("status patch for node %s: %w", node.Name, err)
	}
	status["addresses"] = append(addrs, map[string]any{"$patch": "replace"})
	return json.Marshal(p)
}

// GetLease reads a lease.
func (c ClientsetClient) GetLease(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	return c.Client.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
}

// CreateLease creates a lease.
func (c ClientsetClient) CreateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	return c.Client.CoordinationV1().Leases(lease.Namespace).Create(ctx, lease, metav1.CreateOptions{})
}

// UpdateLease replaces a lease, on condition that its resource version is still lease's.
func (c ClientsetClient) UpdateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	return c.Client.CoordinationV1().Leases(lease.Namespace).Update(ctx, lease, metav1.UpdateOptions{})
}
