package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/api/listwatch"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/nodestatus"
	"github.com/minikubelet/minikubelet/podmanager"
	"github.com/minikubelet/minikubelet/sources"
	"github.com/minikubelet/minikubelet/status"
	"github.com/minikubelet/minikubelet/volumemanager"
)

// wire is what a node's client-go client does to a request before the embedded API server
// sees it, kept for the requests that skip client-go and HTTP (directWrites): its client-side
// rate limiter, its timeout, and --api-latency, in client-go's order (the limiter first, then
// the timeout, then the transport's latency), with the errors client-go gives.
type wire struct {
	// limiter is the client's token bucket, the very one its clientset throttles its other
	// requests with; nil for the heartbeat client, which has none.
	limiter flowcontrol.RateLimiter
	// timeout is the client's timeout (the heartbeat client's); 0 for none.
	timeout time.Duration
	clock   clock.Clock
	latency time.Duration
	// base is the API server's URL, which the errors of a cancelled request name.
	base *url.URL
}

// longThrottle is client-go's threshold above which a wait for the rate limiter is logged.
const longThrottle = 50 * time.Millisecond

// send waits as client-go's request and the latency transport wait before the request of method
// to path leaves, and returns the context the request runs under (with the client's timeout)
// and its cancel function, or the error client-go would answer with.
func (w *wire) send(ctx context.Context, method, path string) (context.Context, context.CancelFunc, error) {
	u := *w.base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	if w.timeout > 0 {
		u.RawQuery = url.Values{"timeout": {w.timeout.String()}}.Encode()
	}
	if w.limiter != nil {
		start := w.clock.Now()
		if err := w.limiter.Wait(ctx); err != nil {
			return nil, nil, fmt.Errorf("client rate limiter Wait returned an error: %w", err)
		}
		if waited := w.clock.Since(start); waited > longThrottle {
			klog.FromContext(ctx).V(3).Info("Waited before sending request", "delay", waited,
				"reason", "client-side throttling, not priority and fairness", "verb", method, "URL", u.String())
		}
	}
	cancel := context.CancelFunc(func() {})
	if w.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, w.timeout)
	}
	if err := ctx.Err(); err != nil {
		cancel()
		return nil, nil, err
	}
	if w.latency > 0 {
		timer := w.clock.NewTimer(w.latency)
		defer timer.Stop()
		select {
		case <-timer.C():
		case <-ctx.Done():
			cancel()
			// What http.Client.Do makes of the latency transport's error.
			op := method[:1] + strings.ToLower(method[1:])
			return nil, nil, &url.Error{Op: op, URL: u.String(), Err: fmt.Errorf("%s %s: %w", method, path, ctx.Err())}
		}
	}
	return ctx, cancel, nil
}

// directWrites is a node's client of the embedded API server for the kubelet's hottest requests
// (kubelet.Writes): each goes to the server in process (fakeapiserver.Direct), after waiting as
// the client-go client it stands for waits (wire), and answers and fails as the client-go
// adapter over that client does.
type directWrites struct {
	direct *fakeapiserver.Direct
	wire   *wire
}

var (
	_ status.PodStatusClient    = directWrites{}
	_ nodestatus.Client         = directWrites{}
	_ volumemanager.TokenClient = directWrites{}
	_ podmanager.MirrorAPI      = directMirror{}
	_ record.EventSink          = directEvents{}
)

// newDirectWrites is the kubelet.Writes of a node whose API client waits as api does and whose
// heartbeat client waits as heartbeat does, and the sink of its events, through api. fallback is
// the event sink over the API client, for the updates the broadcaster never sends.
func newDirectWrites(direct *fakeapiserver.Direct, api, heartbeat *wire, fallback record.EventSink) (*kubelet.Writes, record.EventSink) {
	w := directWrites{direct: direct, wire: api}
	return &kubelet.Writes{
		PodStatus: w,
		Mirror:    directMirror{w},
		Node:      w,
		Heartbeat: directWrites{direct: direct, wire: heartbeat},
		Tokens:    w,
	}, directEvents{w: w, fallback: fallback}
}

func podPath(namespace, name string) string {
	return "/api/v1/namespaces/" + namespace + "/pods/" + name
}

func leasePath(namespace, name string) string {
	return "/apis/coordination.k8s.io/v1/namespaces/" + namespace + "/leases/" + name
}

// GetPod reads a pod, as status.ClientsetAdapter does. It answers a view of the stored pod
// (Direct.GetPodView), not a copy, as PatchPodStatus does, under the same contract.
func (w directWrites) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	ctx, cancel, err := w.wire.send(ctx, http.MethodGet, podPath(namespace, name))
	if err == nil {
		defer cancel()
		var pod *v1.Pod
		if pod, err = w.direct.GetPodView(ctx, namespace, name); err == nil {
			return pod, nil
		}
	}
	return nil, fmt.Errorf("get pod %s/%s: %w", namespace, name, err)
}

// PatchPodStatus patches a pod's status, as status.ClientsetAdapter does. It answers a view of
// the stored pod (Direct.PatchPodStatusView), not a copy: the status manager's writer, its one
// caller, only reads the pod it gets back (status.PodStatusClient's contract), and the stored
// pod is never changed, so reading it beside the server's goroutines is safe.
func (w directWrites) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	ctx, cancel, err := w.wire.send(ctx, http.MethodPatch, podPath(namespace, name)+"/status")
	if err == nil {
		defer cancel()
		var pod *v1.Pod
		if pod, err = w.direct.PatchPodStatusView(ctx, namespace, name, types.StrategicMergePatchType, patch); err == nil {
			return pod, nil
		}
	}
	return nil, fmt.Errorf("patch status of pod %s/%s: %w", namespace, name, err)
}

// DeletePod deletes a pod with grace period 0 on condition of its UID, as
// status.ClientsetAdapter does.
func (w directWrites) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	grace := int64(0)
	err := directMirror{w}.DeletePod(ctx, namespace, name, metav1.DeleteOptions{
		GracePeriodSeconds: &grace,
		Preconditions:      metav1.NewUIDPreconditions(string(uid)),
	})
	if err != nil {
		return fmt.Errorf("delete pod %s/%s: %w", namespace, name, err)
	}
	return nil
}

// directMirror is podmanager.MirrorAPI on a node's writes: its DeletePod takes delete options,
// where the status manager's takes a UID.
type directMirror struct{ w directWrites }

// CreatePod creates a mirror pod.
func (m directMirror) CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	ctx, cancel, err := m.w.wire.send(ctx, http.MethodPost, "/api/v1/namespaces/"+pod.Namespace+"/pods")
	if err != nil {
		return &v1.Pod{}, err
	}
	defer cancel()
	return m.w.direct.CreatePod(ctx, pod)
}

// DeletePod deletes a mirror pod.
func (m directMirror) DeletePod(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error {
	ctx, cancel, err := m.w.wire.send(ctx, http.MethodDelete, podPath(namespace, name))
	if err != nil {
		return err
	}
	defer cancel()
	return m.w.direct.DeletePod(ctx, namespace, name, opts)
}

// GetNode reads the node.
func (m directMirror) GetNode(ctx context.Context, name string) (*v1.Node, error) {
	return m.w.GetNode(ctx, name)
}

// GetNode reads a node, as nodestatus.ClientsetClient does.
func (w directWrites) GetNode(ctx context.Context, name string) (*v1.Node, error) {
	ctx, cancel, err := w.wire.send(ctx, http.MethodGet, "/api/v1/nodes/"+name)
	if err != nil {
		return &v1.Node{}, err
	}
	defer cancel()
	return w.direct.GetNode(ctx, name)
}

// CreateNode creates a node, as nodestatus.ClientsetClient does.
func (w directWrites) CreateNode(ctx context.Context, node *v1.Node) (*v1.Node, error) {
	ctx, cancel, err := w.wire.send(ctx, http.MethodPost, "/api/v1/nodes")
	if err != nil {
		return &v1.Node{}, err
	}
	defer cancel()
	return w.direct.CreateNode(ctx, node)
}

// PatchNodeStatus sends the node's status patch, as nodestatus.ClientsetClient does.
func (w directWrites) PatchNodeStatus(ctx context.Context, original, node *v1.Node) (*v1.Node, error) {
	return nodestatus.PatchStatus(original, node, func(patch []byte) (*v1.Node, error) {
		ctx, cancel, err := w.wire.send(ctx, http.MethodPatch, "/api/v1/nodes/"+node.Name+"/status")
		if err != nil {
			return nil, err
		}
		defer cancel()
		return w.direct.PatchNodeStatus(ctx, node.Name, types.StrategicMergePatchType, patch)
	})
}

// GetLease reads a lease.
func (w directWrites) GetLease(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	ctx, cancel, err := w.wire.send(ctx, http.MethodGet, leasePath(namespace, name))
	if err != nil {
		return &coordinationv1.Lease{}, err
	}
	defer cancel()
	return w.direct.GetLease(ctx, namespace, name)
}

// CreateLease creates a lease.
func (w directWrites) CreateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	ctx, cancel, err := w.wire.send(ctx, http.MethodPost, "/apis/coordination.k8s.io/v1/namespaces/"+lease.Namespace+"/leases")
	if err != nil {
		return &coordinationv1.Lease{}, err
	}
	defer cancel()
	return w.direct.CreateLease(ctx, lease)
}

// UpdateLease replaces a lease.
func (w directWrites) UpdateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	ctx, cancel, err := w.wire.send(ctx, http.MethodPut, leasePath(lease.Namespace, lease.Name))
	if err != nil {
		return &coordinationv1.Lease{}, err
	}
	defer cancel()
	return w.direct.UpdateLease(ctx, lease)
}

// CreateToken requests a service account token.
func (w directWrites) CreateToken(ctx context.Context, namespace, serviceAccount string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	ctx, cancel, err := w.wire.send(ctx, http.MethodPost, "/api/v1/namespaces/"+namespace+"/serviceaccounts/"+serviceAccount+"/token")
	if err != nil {
		return &authenticationv1.TokenRequest{}, err
	}
	defer cancel()
	return w.direct.CreateToken(ctx, namespace, serviceAccount, tr)
}

// directEvents is the sink of a node's event broadcaster: what typedcorev1.EventSinkImpl does over
// the API client, in process. The broadcaster (its correlator, its retries) is client-go's as
// before; only the requests skip the wire. Update, which the broadcaster does not send, stays on
// the API client.
type directEvents struct {
	w        directWrites
	fallback record.EventSink
}

// Create posts an event in its namespace, as the typed client's CreateWithEventNamespace.
func (e directEvents) Create(ev *v1.Event) (*v1.Event, error) {
	ctx, cancel, err := e.w.wire.send(context.TODO(), http.MethodPost, "/api/v1/namespaces/"+ev.Namespace+"/events")
	if err != nil {
		return &v1.Event{}, err
	}
	defer cancel()
	return e.w.direct.CreateEvent(ctx, ev)
}

// Update replaces an event, over the API client.
func (e directEvents) Update(ev *v1.Event) (*v1.Event, error) { return e.fallback.Update(ev) }

// Patch patches an event with a strategic merge patch, as the typed client's
// PatchWithEventNamespace.
func (e directEvents) Patch(ev *v1.Event, data []byte) (*v1.Event, error) {
	ctx, cancel, err := e.w.wire.send(context.TODO(), http.MethodPatch, "/api/v1/namespaces/"+ev.Namespace+"/events/"+ev.Name)
	if err != nil {
		return &v1.Event{}, err
	}
	defer cancel()
	return e.w.direct.PatchEvent(ctx, ev.Namespace, ev.Name, types.StrategicMergePatchType, data)
}

// directList is the list and watch of every object of one kind (L its list type) in process
// (fakeapiserver.Direct's ListPods and WatchPods, ListNodes and WatchNodes, ...), after waiting as
// the client-go client it stands for waits (its rate limiter, --api-latency). The objects it
// hands over are the API server's stored objects, shared read-only
// (docs/design/008-shared-pods.md), where the HTTP watch decodes a copy of each.
type directList[L any, PL interface {
	*L
	runtime.Object
}] struct {
	wire *wire
	// path is the URL path of the list and the watch over HTTP, which client-go's errors name.
	path string
	in   listwatch.Interface[PL]
}

// The in-process lists and watches of every pod (a fleet's shared pod watch's and the
// controllers'), node and lease (the controllers').
type (
	directPods   = directList[v1.PodList, *v1.PodList]
	directNodes  = directList[v1.NodeList, *v1.NodeList]
	directLeases = directList[coordinationv1.LeaseList, *coordinationv1.LeaseList]
)

var (
	_ sources.PodListWatcher                         = directPods{}
	_ listwatch.Interface[*v1.PodList]               = directPods{}
	_ listwatch.Interface[*v1.NodeList]              = directNodes{}
	_ listwatch.Interface[*coordinationv1.LeaseList] = directLeases{}
)

func newDirectPods(direct *fakeapiserver.Direct, w *wire) directPods {
	return directPods{wire: w, path: "/api/v1/pods", in: listwatch.InNamespace(metav1.NamespaceAll, direct.ListPods, direct.WatchPods)}
}

func newDirectNodes(direct *fakeapiserver.Direct, w *wire) directNodes {
	return directNodes{wire: w, path: "/api/v1/nodes", in: listwatch.Funcs[*v1.NodeList]{ListFunc: direct.ListNodes, WatchFunc: direct.WatchNodes}}
}

func newDirectLeases(direct *fakeapiserver.Direct, w *wire) directLeases {
	return directLeases{wire: w, path: "/apis/coordination.k8s.io/v1/leases",
		in: listwatch.InNamespace(metav1.NamespaceAll, direct.ListLeases, direct.WatchLeases)}
}

// List lists every object, as the typed client's List.
func (p directList[L, PL]) List(ctx context.Context, opts metav1.ListOptions) (PL, error) {
	ctx, cancel, err := p.wire.send(ctx, http.MethodGet, p.path)
	if err != nil {
		return PL(new(L)), err
	}
	defer cancel()
	return p.in.List(ctx, opts)
}

// Watch watches every object, as the typed client's Watch. The client's timeout, which the
// watch client has none of, would not bound a watch: the watch runs under ctx.
func (p directList[L, PL]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	// client-go's Request.Watch does not wait for the rate limiter: only the latency.
	w := *p.wire
	w.limiter = nil
	_, cancel, err := w.send(ctx, http.MethodGet, p.path)
	if err != nil {
		return nil, err
	}
	cancel()
	return p.in.Watch(ctx, opts)
}
