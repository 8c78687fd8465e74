package controllers

import (
	"context"
	"slices"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	coordinationlisters "k8s.io/client-go/listers/coordination/v1"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/controlplane/controllers/scheduler"
)

// Client is what the controllers read and write through: client-go's typed clientset, with reads
// served from informer listers when they are set. Objects a lister returns are shared with its
// cache; the cores copy before they change anything. Errors are the API's, so that apierrors
// predicates work on them.
type Client struct {
	// Clientset writes, and reads whatever has no lister. Required.
	Clientset kubernetes.Interface
	// Nodes, Pods and Leases, when set, serve the lists and gets from an informer's cache.
	Nodes  corelisters.NodeLister
	Pods   corelisters.PodLister
	Leases coordinationlisters.LeaseLister
	// Direct, when set, serves the reads that have no lister in Clientset's stead: the API
	// server's list and get in process (fakeapiserver.Direct's ListPods, ListNodes and
	// GetLeaseView, replay's), the same requests, whose answers share the stored objects,
	// read-only (docs/design/008-shared-pods.md), where an answer over the wire decodes a copy.
	Direct DirectReader
	// Index, when set, serves the reads of one node's pods and of the pods bound to none, which
	// otherwise filter ListPods: an index kept by the caller from the pods' watch events, as
	// the real controllers' informers index pods by node and the scheduler queues the pods not
	// yet bound, so that a pass reads the pods that concern it rather than every pod.
	Index PodIndex
	// Changes, when set, gives each core that reacts to updates feeds of what changed since its
	// last pass (ChangeFeeds), as the real controllers' informers' event handlers queue the name
	// of each node added, updated or deleted: node lifecycle and taint eviction then look at the
	// changed nodes only between their periodic passes, and the scheduler keeps what the bound
	// pods use from the nodes whose pods changed. Without it they look at every node and pod,
	// which decides the same.
	Changes ChangeFeeds
}

// ChangeFeeds makes feeds of changes, each for one reader.
type ChangeFeeds interface {
	NodeFeed() NodeFeed
	PodNodeFeed() PodNodeFeed
}

// PodNodeFeed names the nodes whose bound pods changed since its previous call: a pod bound to a
// node was added, updated or deleted, or moved off it.
type PodNodeFeed interface {
	// ChangedPodNodes returns the node names in name order, or all when it cannot tell (its
	// first call, and after it listed the pods again).
	ChangedPodNodes(ctx context.Context) (nodes []string, all bool, err error)
}

// NodeFeed names the nodes added, updated or deleted since its previous call, the node informer's
// event handlers of one controller.
type NodeFeed interface {
	// ChangedNodes returns the names in name order, or all when it cannot tell which changed
	// (its first call, and after it listed the nodes again): then every node may have. The
	// names are the caller's until the next call, which may reuse their array.
	ChangedNodes(ctx context.Context) (names []string, all bool, err error)
}

// PodIndex serves the pods of one node and the pods bound to none, each in the order of their
// namespace/name keys (podkey.Of), as the store holds them now. The pods are shared read-only,
// as a lister's.
type PodIndex interface {
	PodsOnNode(node string) ([]*v1.Pod, error)
	UnboundPods() ([]*v1.Pod, error)
}

// DirectReader reads as the typed clients' List of pods and nodes and Get of a lease do, in
// process, handing over objects to be read and never changed.
type DirectReader interface {
	ListPods(ctx context.Context, namespace string, opts metav1.ListOptions) (*v1.PodList, error)
	ListNodes(ctx context.Context, opts metav1.ListOptions) (*v1.NodeList, error)
	GetLeaseView(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error)
}

// ListNodes returns every node.
func (c Client) ListNodes(ctx context.Context) ([]*v1.Node, error) {
	if c.Nodes != nil {
		return c.Nodes.List(labels.Everything())
	}
	var list *v1.NodeList
	var err error
	if c.Direct != nil {
		list, err = c.Direct.ListNodes(ctx, metav1.ListOptions{})
	} else {
		list, err = c.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	}
	if err != nil {
		return nil, err
	}
	return pointers(list.Items), nil
}

// GetNode reads one node.
func (c Client) GetNode(ctx context.Context, name string) (*v1.Node, error) {
	if c.Nodes != nil {
		return c.Nodes.Get(name)
	}
	return c.Clientset.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}

// nodeFeed is a new feed of Changes, or nil without them.
func (c Client) nodeFeed() NodeFeed {
	if c.Changes == nil {
		return nil
	}
	return c.Changes.NodeFeed()
}

// schedulerChanges are the scheduler's feeds of Changes, or nil without them.
func (c Client) schedulerChanges() scheduler.Changes {
	if c.Changes == nil {
		return nil
	}
	return struct {
		NodeFeed
		PodNodeFeed
	}{c.Changes.NodeFeed(), c.Changes.PodNodeFeed()}
}

// ListPods returns every pod in every namespace.
func (c Client) ListPods(ctx context.Context) ([]*v1.Pod, error) {
	if c.Pods != nil {
		return c.Pods.List(labels.Everything())
	}
	var list *v1.PodList
	var err error
	if c.Direct != nil {
		list, err = c.Direct.ListPods(ctx, metav1.NamespaceAll, metav1.ListOptions{})
	} else {
		list, err = c.Clientset.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	}
	if err != nil {
		return nil, err
	}
	return pointers(list.Items), nil
}

// GetPod reads one pod.
func (c Client) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	if c.Pods != nil {
		return c.Pods.Pods(namespace).Get(name)
	}
	return c.Clientset.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
}

// ListPodsOnNode returns the pods bound to node, in the order of their namespace/name keys.
func (c Client) ListPodsOnNode(ctx context.Context, node string) ([]*v1.Pod, error) {
	if c.Index != nil {
		return c.Index.PodsOnNode(node)
	}
	return c.listPodsWhere(ctx, func(p *v1.Pod) bool { return p.Spec.NodeName == node })
}

// ListUnboundPods returns the pods bound to no node, in the order of their namespace/name keys.
func (c Client) ListUnboundPods(ctx context.Context) ([]*v1.Pod, error) {
	if c.Index != nil {
		return c.Index.UnboundPods()
	}
	return c.listPodsWhere(ctx, func(p *v1.Pod) bool { return p.Spec.NodeName == "" })
}

// listPodsWhere is ListPods' pods that keep holds for, in the order of their namespace/name keys.
func (c Client) listPodsWhere(ctx context.Context, keep func(*v1.Pod) bool) ([]*v1.Pod, error) {
	pods, err := c.ListPods(ctx)
	if err != nil {
		return nil, err
	}
	pods = slices.DeleteFunc(pods, func(p *v1.Pod) bool { return !keep(p) })
	slices.SortFunc(pods, func(a, b *v1.Pod) int { return strings.Compare(podkey.Of(a), podkey.Of(b)) })
	return pods, nil
}

// pointers points at each of a list's items.
func pointers[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// GetLease reads one lease.
func (c Client) GetLease(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	if c.Leases != nil {
		return c.Leases.Leases(namespace).Get(name)
	}
	if c.Direct != nil {
		return c.Direct.GetLeaseView(ctx, namespace, name)
	}
	return c.Clientset.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
}

// UpdateNode replaces the node (its spec and metadata).
func (c Client) UpdateNode(ctx context.Context, node *v1.Node) (*v1.Node, error) {
	return c.Clientset.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
}

// UpdateNodeStatus replaces the node's status.
func (c Client) UpdateNodeStatus(ctx context.Context, node *v1.Node) (*v1.Node, error) {
	return c.Clientset.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
}

// UpdatePodStatus replaces the pod's status.
func (c Client) UpdatePodStatus(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	return c.Clientset.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
}

// DeletePod deletes the pod with opts.
func (c Client) DeletePod(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error {
	return c.Clientset.CoreV1().Pods(namespace).Delete(ctx, name, opts)
}

// FetchPod gets one pod from the API server, whatever lister is set: the read of a controller
// that asks the server rather than its cache (taint eviction's deletePodHandler).
func (c Client) FetchPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	return c.Clientset.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
}

// Bind assigns a pod to a node through the pods/binding subresource.
func (c Client) Bind(ctx context.Context, b *v1.Binding) error {
	return c.Clientset.CoreV1().Pods(b.Namespace).Bind(ctx, b, metav1.CreateOptions{})
}
