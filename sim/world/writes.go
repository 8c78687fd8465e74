package world

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minikubelet/minikubelet/api/eventrecord"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/nodestatus"
	"github.com/minikubelet/minikubelet/podmanager"
	"github.com/minikubelet/minikubelet/status"
	"github.com/minikubelet/minikubelet/volumemanager"
)

// NodeWrites is a node's client of the cluster's API server for the kubelet's hottest requests
// (its pods' status, mirror pods, its node's status and lease, service account tokens): while
// the node's link is up they go to the server in process (fakeapiserver.Direct), without client-go
// or HTTP, and answer and fail as the client-go adapters do; while it is down they go through the
// HTTP client over the link, which refuses them before they reach the server, with the error text
// the adapters have always given (callers put it in traces and events).
type NodeWrites struct {
	link   *Link
	direct *fakeapiserver.Direct
	// The adapters over the link's HTTP client, for when the link is down.
	pods   status.ClientsetAdapter
	mirror podmanager.ClientsetMirrorAPI
	node   nodestatus.ClientsetClient
	http   kubernetes.Interface
}

var (
	_ status.PodStatusClient    = (*NodeWrites)(nil)
	_ nodestatus.Client         = (*NodeWrites)(nil)
	_ volumemanager.TokenClient = (*NodeWrites)(nil)
	_ podmanager.MirrorAPI      = mirrorWrites{}
)

// userAgent is the User-Agent of the cluster's client-go clients, which name no other: the field
// manager the API server records their writes under is named after it, and so are Direct's.
var userAgent = rest.DefaultKubernetesUserAgent()

// NodeWrites is the in-process client of a node whose link to the API server is link and whose
// HTTP client over it is client.
func (c *Cluster) NodeWrites(link *Link, client kubernetes.Interface) *NodeWrites {
	return &NodeWrites{link: link, direct: c.direct, pods: status.ClientsetAdapter{Client: client},
		mirror: podmanager.ClientsetMirrorAPI{Client: client}, node: nodestatus.ClientsetClient{Client: client}, http: client}
}

// GetPod reads a pod, as status.ClientsetAdapter does. With the link up it answers a view of the
// stored pod (Direct.GetPodView), not a copy: the status manager, its one caller, only reads
// the pod it gets (status.PodStatusClient's contract).
func (w *NodeWrites) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	if w.link.Down() {
		return w.pods.GetPod(ctx, namespace, name)
	}
	pod, err := w.direct.GetPodView(ctx, namespace, name)
	if err != nil {
		return nil, fmt.Errorf("get pod %s/%s: %w", namespace, name, err)
	}
	return pod, nil
}

// PatchPodStatus patches a pod's status, as status.ClientsetAdapter does. With the link up it
// answers a view of the stored pod (Direct.PatchPodStatusView), not a copy: the status manager,
// its one caller, only reads the pod it gets back (status.PodStatusClient's contract).
func (w *NodeWrites) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	if w.link.Down() {
		return w.pods.PatchPodStatus(ctx, namespace, name, patch)
	}
	pod, err := w.direct.PatchPodStatusView(ctx, namespace, name, types.StrategicMergePatchType, patch)
	if err != nil {
		return nil, fmt.Errorf("patch status of pod %s/%s: %w", namespace, name, err)
	}
	return pod, nil
}

// DeletePod deletes a pod with grace period 0 on condition of its UID, as status.ClientsetAdapter
// does.
func (w *NodeWrites) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	if w.link.Down() {
		return w.pods.DeletePod(ctx, namespace, name, uid)
	}
	grace := int64(0)
	err := w.direct.DeletePod(ctx, namespace, name, metav1.DeleteOptions{
		GracePeriodSeconds: &grace,
		Preconditions:      metav1.NewUIDPreconditions(string(uid)),
	})
	if err != nil {
		return fmt.Errorf("delete pod %s/%s: %w", namespace, name, err)
	}
	return nil
}

// Mirror is the node's client for its mirror pods.
func (w *NodeWrites) Mirror() podmanager.MirrorAPI { return mirrorWrites{w} }

// mirrorWrites is podmanager.MirrorAPI on a node's writes: its DeletePod takes delete options,
// where the status manager's takes a UID.
type mirrorWrites struct{ w *NodeWrites }

// CreatePod creates a mirror pod.
func (m mirrorWrites) CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	if m.w.link.Down() {
		return m.w.mirror.CreatePod(ctx, pod)
	}
	return m.w.direct.CreatePod(ctx, pod)
}

// DeletePod deletes a mirror pod.
func (m mirrorWrites) DeletePod(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error {
	if m.w.link.Down() {
		return m.w.mirror.DeletePod(ctx, namespace, name, opts)
	}
	return m.w.direct.DeletePod(ctx, namespace, name, opts)
}

// GetNode reads the node.
func (m mirrorWrites) GetNode(ctx context.Context, name string) (*v1.Node, error) {
	return m.w.GetNode(ctx, name)
}

// GetNode reads a node, as nodestatus.ClientsetClient does. With the link up the node answered
// is a view of the stored one (Direct.GetNodeView), not a copy: its readers (the node status
// updates, which copy it before they set anything, as the kubelet copies its informer's node;
// the lease and the mirror pods, which read its UID; admission, whose getNodeAnyWay reads its
// allocatable, labels and taints for every pod it admits) only read it. The node status updates read
// the node every ten seconds, and a node's copy (its images, its managed fields) was the
// largest part of their allocations.
func (w *NodeWrites) GetNode(ctx context.Context, name string) (*v1.Node, error) {
	if w.link.Down() {
		return w.node.GetNode(ctx, name)
	}
	return w.direct.GetNodeView(ctx, name)
}

// CreateNode creates a node, as nodestatus.ClientsetClient does.
func (w *NodeWrites) CreateNode(ctx context.Context, node *v1.Node) (*v1.Node, error) {
	if w.link.Down() {
		return w.node.CreateNode(ctx, node)
	}
	return w.direct.CreateNode(ctx, node)
}

// PatchNodeStatus sends the node's status patch, as nodestatus.ClientsetClient does.
func (w *NodeWrites) PatchNodeStatus(ctx context.Context, original, node *v1.Node) (*v1.Node, error) {
	if w.link.Down() {
		return w.node.PatchNodeStatus(ctx, original, node)
	}
	return nodestatus.PatchStatus(original, node, func(patch []byte) (*v1.Node, error) {
		return w.direct.PatchNodeStatus(ctx, node.Name, types.StrategicMergePatchType, patch)
	})
}

// GetLease reads a lease.
func (w *NodeWrites) GetLease(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	if w.link.Down() {
		return w.node.GetLease(ctx, namespace, name)
	}
	return w.direct.GetLease(ctx, namespace, name)
}

// CreateLease creates a lease.
func (w *NodeWrites) CreateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	if w.link.Down() {
		return w.node.CreateLease(ctx, lease)
	}
	return w.direct.CreateLease(ctx, lease)
}

// UpdateLease replaces a lease.
func (w *NodeWrites) UpdateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	if w.link.Down() {
		return w.node.UpdateLease(ctx, lease)
	}
	// The lease answered is a view of the stored one (Direct.UpdateLeaseView): the lease
	// controller keeps it to copy at the next renewal, and only reads it.
	return w.direct.UpdateLeaseView(ctx, lease)
}

// CreateToken requests a service account token.
func (w *NodeWrites) CreateToken(ctx context.Context, namespace, serviceAccount string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	if w.link.Down() {
		return w.http.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, serviceAccount, tr, metav1.CreateOptions{})
	}
	return w.direct.CreateToken(ctx, namespace, serviceAccount, tr)
}

// eventSink is the kubelets' event sink: their events reach the API server whatever their link
// (they always have, through the cluster's own client), in process.
type eventSink struct{ direct *fakeapiserver.Direct }

var _ eventrecord.Sink = eventSink{}

func (s eventSink) CreateEvent(ctx context.Context, ev *v1.Event) (*v1.Event, error) {
	return s.direct.CreateEvent(ctx, ev)
}

func (s eventSink) PatchEvent(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*v1.Event, error) {
	return s.direct.PatchEvent(ctx, namespace, name, pt, patch)
}
