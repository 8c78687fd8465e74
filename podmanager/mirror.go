package podmanager

import (
	"context"
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// ErrNodeUIDUnset is wrapped by CreateMirrorPod when the node object has no UID, which the owner
// reference of a mirror pod needs.
var ErrNodeUIDUnset = errors.New("node UID unset")

// NodeGetter returns the Node object with the given name. The kubelet reads it from its node
// informer's lister.
type NodeGetter interface {
	GetNode(ctx context.Context, name string) (*v1.Node, error)
}

// NodeGetterFunc adapts a function to a NodeGetter.
type NodeGetterFunc func(ctx context.Context, name string) (*v1.Node, error)

// GetNode calls f(ctx, name).
func (f NodeGetterFunc) GetNode(ctx context.Context, name string) (*v1.Node, error) {
	return f(ctx, name)
}

// MirrorAPI is the part of the API the mirror client calls, with client-go's typed clients'
// answers and errors: ClientsetMirrorAPI over HTTP, or an API server in the same process.
type MirrorAPI interface {
	// CreatePod creates a pod; with an error it answers an empty pod, as client-go does.
	CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error)
	// DeletePod deletes a pod.
	DeletePod(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error
	// GetNode reads a node.
	GetNode(ctx context.Context, name string) (*v1.Node, error)
}

// ClientsetMirrorAPI is MirrorAPI over a client-go clientset.
type ClientsetMirrorAPI struct {
	// Client is the clientset; it must not be nil.
	Client kubernetes.Interface
}

var _ MirrorAPI = ClientsetMirrorAPI{}

// CreatePod creates a pod.
func (a ClientsetMirrorAPI) CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	return a.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
}

// DeletePod deletes a pod.
func (a ClientsetMirrorAPI) DeletePod(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error {
	return a.Client.CoreV1().Pods(namespace).Delete(ctx, name, opts)
}

// GetNode reads a node.
func (a ClientsetMirrorAPI) GetNode(ctx context.Context, name string) (*v1.Node, error) {
	return a.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}

// MirrorClientOptions configures NewMirrorClient.
type MirrorClientOptions struct {
	// Client writes mirror pods. Nil (and API nil) means a standalone kubelet: both methods do
	// nothing.
	Client kubernetes.Interface
	// API, when set, is what the mirror pods are written through instead of Client: an API
	// server in the same process.
	API MirrorAPI
	// NodeName is this node; mirror pods are owned by it.
	NodeName string
	// Nodes returns this node's object, for its UID. Nil means a GET through Client.
	Nodes NodeGetter
	// Tracer receives one event per API write. Required; pass trace.Discard for none.
	Tracer trace.Tracer
}

// validate reports the missing required options, wrapping ErrMissingOption. NodeName is required
// only with a Client: a standalone mirror client writes nothing.
func (o MirrorClientOptions) validate() error {
	var missing []string
	if (o.Client != nil || o.API != nil) && o.NodeName == "" {
		missing = append(missing, "NodeName")
	}
	if o.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	if len(missing) > 0 {
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	return nil
}

// MirrorClient creates and deletes the mirror pods of static pods in the API server: the
// kubelet's basicMirrorClient. It is safe for concurrent use if Client and Nodes are.
type MirrorClient struct {
	client   MirrorAPI
	nodeName string
	nodes    NodeGetter
	tracer   trace.Tracer
}

// NewMirrorClient returns a mirror client for opts. A missing required option is an error wrapping
// ErrMissingOption.
func NewMirrorClient(opts MirrorClientOptions) (*MirrorClient, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new mirror client: %w", err)
	}
	c := &MirrorClient{client: opts.API, nodeName: opts.NodeName, nodes: opts.Nodes, tracer: opts.Tracer}
	if c.client == nil && opts.Client != nil {
		c.client = ClientsetMirrorAPI{Client: opts.Client}
	}
	if c.nodes == nil && c.client != nil {
		c.nodes = c.client
	}
	return c, nil
}

// CreateMirrorPod creates the mirror pod of staticPod: a shallow copy with its own annotations
// map holding the static pod's annotations plus kubernetes.io/config.mirror set to the static
// pod's config.hash, and a single owner reference to this node. staticPod is not modified.
//
// If the API server answers AlreadyExists with a mirror pod of the same hash, that is success.
// The real client returns an empty object with that error, so in practice AlreadyExists is
// returned, as in the kubelet, whose callers only log it.
//
// The trace event carries the static pod's UID; Reason is the API error's reason on failure.
func (c *MirrorClient) CreateMirrorPod(ctx context.Context, staticPod *v1.Pod) error {
	if c.client == nil {
		return nil
	}
	hash := staticPod.Annotations[kubecontainer.ConfigHashAnnotationKey]
	mirror := *staticPod
	mirror.Annotations = make(map[string]string, len(staticPod.Annotations)+1)
	for k, v := range staticPod.Annotations {
		mirror.Annotations[k] = v
	}
	mirror.Annotations[kubecontainer.ConfigMirrorAnnotationKey] = hash

	ev := trace.Event{
		Component: trace.Mirror,
		Event:     trace.KindCreate,
		Pod:       podkey.Of(staticPod),
		UID:       string(staticPod.UID),
		Func:      "CreateMirrorPod",
	}
	nodeUID, err := c.nodeUID(ctx)
	if err != nil {
		err = fmt.Errorf("failed to get node UID: %w", err)
		ev.Reason, ev.Message = "NodeUID", err.Error()
		c.tracer.Emit(ev)
		return err
	}
	controller := true
	mirror.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: v1.SchemeGroupVersion.String(),
		Kind:       "Node",
		Name:       c.nodeName,
		UID:        nodeUID,
		Controller: &controller,
	}}

	created, err := c.client.CreatePod(ctx, &mirror)
	if err != nil && apierrors.IsAlreadyExists(err) && created != nil {
		if h, ok := created.Annotations[kubecontainer.ConfigMirrorAnnotationKey]; ok && h == hash {
			err = nil
			ev.Reason = string(metav1.StatusReasonAlreadyExists)
		}
	}
	if err != nil {
		ev.Reason, ev.Message = apiReason(err), err.Error()
	}
	c.tracer.Emit(ev)
	return err
}

// nodeUID returns this node's UID, or an error if the node cannot be read or has none.
func (c *MirrorClient) nodeUID(ctx context.Context) (types.UID, error) {
	node, err := c.nodes.GetNode(ctx, c.nodeName)
	if err != nil {
		return "", err
	}
	if node == nil || node.UID == "" {
		return "", fmt.Errorf("node %q: %w", c.nodeName, ErrNodeUIDUnset)
	}
	return node.UID, nil
}

// DeleteMirrorPod deletes the mirror pod with the given full name ("<name>_<namespace>") with a
// grace period of 0 and, if uid is not nil, a UID precondition. It reports whether the pod was
// deleted. The only error is an unparsable full name: an API failure gives (false, nil), and is
// logged unless it is NotFound or Conflict (a failed precondition), as in the kubelet.
//
// The trace event carries the precondition UID, if any; Reason is the API error's reason.
func (c *MirrorClient) DeleteMirrorPod(ctx context.Context, podFullName string, uid *types.UID) (bool, error) {
	if c.client == nil {
		return false, nil
	}
	name, namespace, err := kubecontainer.ParsePodFullName(podFullName)
	if err != nil {
		return false, err
	}
	logger := klog.FromContext(ctx)
	var uidValue types.UID
	if uid != nil {
		uidValue = *uid
	}
	logger.V(2).Info("Deleting a mirror pod", "pod", klog.KRef(namespace, name), "podUID", uidValue)

	ev := trace.Event{
		Component: trace.Mirror,
		Event:     trace.KindDelete,
		Pod:       podkey.Build(namespace, name),
		UID:       string(uidValue),
		Func:      "DeleteMirrorPod",
	}
	var grace int64
	err = c.client.DeletePod(ctx, namespace, name, metav1.DeleteOptions{
		GracePeriodSeconds: &grace,
		Preconditions:      &metav1.Preconditions{UID: uid},
	})
	if err != nil {
		ev.Reason, ev.Message = apiReason(err), err.Error()
		c.tracer.Emit(ev)
		if !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			logger.Error(err, "Failed deleting a mirror pod", "pod", klog.KRef(namespace, name))
		}
		return false, nil
	}
	c.tracer.Emit(ev)
	return true, nil
}

// apiReason names an API error's class for the trace, or "Error" for other errors.
func apiReason(err error) string {
	if r := apierrors.ReasonForError(err); r != metav1.StatusReasonUnknown {
		return string(r)
	}
	return "Error"
}
