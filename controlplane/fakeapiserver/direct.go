package fakeapiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Direct is a client of the server in the same process: the requests a kubelet makes most (its
// pods' status, mirror pods, its node's status and lease, events, service account tokens) as calls
// on typed objects, without an HTTP request, a handler or a JSON answer to decode. Each call runs
// the same operation as the HTTP handler of its request (createObject, updateObject,
// patchObject, deleteObject, createTokenObject): the same admission, defaulting, validation,
// managed fields (under the manager the User-Agent names), resource versions, watch events and
// trace events, and the API server's request metrics count it with the labels the HTTP request
// gets. What differs is only what the wire does:
//
//   - an object sent (a create, an update) is stored exactly as it would be from the wire
//     (times to the second or microsecond in the local zone, empty lists and maps of omitempty
//     fields dropped): a deep copy with what the round trip changes changed field by field
//     (wireCopy), or, for what that cannot tell, encoded and decoded once, as the handler
//     decodes the body;
//   - an object answered is a deep copy of the stored one with its apiVersion and kind cleared,
//     which is what client-go's typed clients decode from the answer, except where a caller
//     that only reads asks for the stored object itself: GetNodeView, GetLeaseView, UpdateLeaseView,
//     GetPodView and PatchPodStatusView answer a shallow copy sharing everything beneath it, and the
//     lists and watches of pods, nodes and leases (ListPods, WatchPods, ListNodes, ...,
//     inprocess_watch.go) hand over the stored objects shared and read-only
//     (docs/design/008-shared-pods.md). No write changes a stored object (a write stores a new
//     one), so such a reader sees one version whole;
//   - a failed call answers an empty object beside the error, as client-go's typed clients do;
//   - an error is the *apierrors.StatusError client-go makes of the Status the handler would
//     answer with (its code, reason, message and details), without the Status' apiVersion and
//     kind, which client-go's typed decoder drops;
//   - there is no authentication (the caller is in the process) and no request body limit
//     (objects the kubelet builds are small);
//   - the answer's warnings are dropped: none of these requests gets one (no deprecated kind, no
//     unknown field in a typed object).
//
// Its methods are safe for concurrent use, as the server's handler is.
type Direct struct {
	s *Server
	// manager is the field manager of the writes: what the HTTP path reads off the User-Agent.
	manager string
	// user is who the requests come from, for the order of the store lock's turns
	// (priority.go); nil for exempt requests.
	user *authenticationv1.UserInfo
}

// Direct returns an in-process client whose writes are recorded in managed fields under the
// manager the HTTP path would name after userAgent: for the same manager as a client-go client,
// pass the User-Agent it sends (rest.DefaultKubernetesUserAgent() when its config names none).
// Its requests are exempt from the API's priority and fairness, as the server's own work is.
func (s *Server) Direct(userAgent string) *Direct {
	return &Direct{s: s, manager: managerOfUserAgent(userAgent)}
}

// DirectAs is Direct for requests of user, which wait for the store lock in the turn of the
// priority level and flow v1.35's default flow schemas give user's requests: a kubelet's are
// system:node:NAME's in the group system:nodes (its lease and node writes node-high, its pod
// status writes and events system), a controller manager's system:kube-controller-manager's
// (workload-high). No authentication checks it: the caller is in the process.
func (s *Server) DirectAs(userAgent string, user authenticationv1.UserInfo) *Direct {
	user.Groups = slices.Clone(user.Groups)
	return &Direct{s: s, manager: managerOfUserAgent(userAgent), user: &user}
}

// The targets of the requests Direct makes.
var (
	podsTarget           = mustServed("v1", "pods")
	nodesTarget          = mustServed("v1", "nodes")
	eventsTarget         = mustServed("v1", "events")
	serviceAccountTarget = mustServed("v1", "serviceaccounts")
	leasesTarget         = mustServed("coordination.k8s.io/v1", "leases")
)

func mustServed(gv, name string) *resource {
	res, ok := served[gv+"/"+name]
	if !ok {
		panic(fmt.Sprintf("fakeapiserver: no %s/%s resource", gv, name))
	}
	return res
}

func (d *Direct) target(res *resource, namespace, name, subresource string) target {
	return target{res: res, namespace: namespace, name: name, subresource: subresource, manager: d.manager}
}

// do runs op as the handler runs a request: expired objects are swept first and namespaces
// finalized after, as serveHTTP does around every request, and the request is counted in the
// metrics with the code its answer would carry (okCode, or the error's). A panic in op is a bug
// in this package: it becomes a 500, as serveHTTP recovers it, and like there it is not counted.
func (d *Direct) do(t target, verb verbs, reported string, okCode int, op func() error) (err error) {
	s := d.s
	defer func() {
		if p := recover(); p != nil {
			err = clientError(internalError(p))
		}
	}()
	if !t.allows(verb) || (t.res.namespaced && t.namespace == "") {
		// The handler's route check: a verb the resource does not serve, or a namespaced
		// object's without a namespace (a path across namespaces, where only lists and watches
		// are routed), is 405, and not counted.
		return clientError(apierrors.NewMethodNotSupported(t.res.groupResource(), reported))
	}
	s.expireNow()
	start := s.clock.Now()
	code := okCode
	if err = op(); err != nil {
		code = int(failureStatus(err).Code)
		err = directError(t, reported, err)
	}
	s.count(reported, "", t, verb, code, start)
	s.finalizeNow()
	return err
}

// directError is the error an in-process call that failed with err returns: the context's error
// as client-go returns it if the request's context ended while it waited for the store lock
// (queueCancelledError), else the answer's Status (clientError).
func directError(t target, method string, err error) error {
	if qc := (*queueCancelledError)(nil); errors.As(err, &qc) {
		return queueCancelledClientError(method, t, qc.err)
	}
	return clientError(err)
}

// clientError is the error client-go returns for an answer that failed with err: the Status the
// handler writes, as the typed client decodes it.
func clientError(err error) error {
	st := failureStatus(err)
	st.TypeMeta = metav1.TypeMeta{}
	return &apierrors.StatusError{ErrStatus: st}
}

// wireObject is obj as the handler decodes it from a request body: wireCopy's copy where it can
// tell, else the round trip itself.
func wireObject(res *resource, obj runtime.Object) (runtime.Object, error) {
	if wireCopies {
		if out, ok := wireCopy(res, obj); ok {
			return out, nil
		}
	}
	return wireRoundTrip(res, obj)
}

// wireRoundTrip is obj encoded as a client encodes a request body and decoded as the handler
// decodes it.
func wireRoundTrip(res *resource, obj runtime.Object) (runtime.Object, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("encode %s: %v", res.kind, err))
	}
	out, _, err := decode(res, body{data: data}, validationWarn)
	return out, err
}

// wireCopies lets wireObject take wireCopy; a test turns it off to compare with the round trip.
var wireCopies = true

// answer is the object a typed client decodes from an answer carrying e: a copy of the stored
// object without its apiVersion and kind.
func answer[T runtime.Object](e *entry) T {
	out := e.obj.DeepCopyObject()
	out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return out.(T)
}

func (d *Direct) get(ctx context.Context, t target) (*entry, error) {
	t.class = requestClass(d.user, verbGet, t)
	var out *entry
	err := d.do(t, verbGet, http.MethodGet, http.StatusOK, func() error {
		return d.s.store.lockedAs(ctx, t.class, func() error {
			var ok bool
			if out, ok = d.s.store.get(t.res, t.namespace, t.name); !ok {
				return apierrors.NewNotFound(t.res.groupResource(), t.name)
			}
			return nil
		})
	})
	return out, err
}

func (d *Direct) create(ctx context.Context, t target, obj runtime.Object) (*entry, error) {
	t.class = requestClass(d.user, verbCreate, t)
	var out *entry
	err := d.do(t, verbCreate, http.MethodPost, http.StatusCreated, func() error {
		in, err := wireObject(t.res, obj)
		if err != nil {
			return err
		}
		out, err = d.s.createObject(ctx, t, in, false)
		return err
	})
	return out, err
}

func (d *Direct) update(ctx context.Context, t target, obj runtime.Object) (*entry, error) {
	t.class = requestClass(d.user, verbUpdate, t)
	var out *entry
	err := d.do(t, verbUpdate, http.MethodPut, http.StatusOK, func() error {
		in, err := wireObject(t.res, obj)
		if err != nil {
			return err
		}
		out, err = d.s.updateOwned(ctx, t, in, false, func() (runtime.Object, error) {
			return wireObject(t.res, obj)
		})
		return err
	})
	return out, err
}

func (d *Direct) patch(ctx context.Context, t target, pt types.PatchType, data []byte) (*entry, error) {
	t.class = requestClass(d.user, verbPatch, t)
	switch pt {
	case types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType:
	default:
		// Server-side apply stays on the HTTP path.
		return nil, clientError(unsupportedMediaType(string(pt), patchMediaTypes))
	}
	var out *entry
	err := d.do(t, verbPatch, http.MethodPatch, http.StatusOK, func() error {
		var err error
		out, _, err = d.s.patchObject(ctx, t, pt, data, validationWarn, false)
		return err
	})
	return out, err
}

func (d *Direct) delete(ctx context.Context, t target, opts metav1.DeleteOptions) error {
	t.class = requestClass(d.user, verbDelete, t)
	return d.do(t, verbDelete, http.MethodDelete, http.StatusOK, func() error {
		_, _, err := d.s.deleteObject(ctx, t, opts, len(opts.DryRun) > 0)
		return err
	})
}

// GetPod is GET pods/NAME.
func (d *Direct) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	e, err := d.get(ctx, d.target(podsTarget, namespace, name, ""))
	if err != nil {
		return &corev1.Pod{}, err
	}
	return answer[*corev1.Pod](e), nil
}

// GetPodView is GET pods/NAME answered with a view of the stored pod instead of a copy, as
// GetNodeView answers the node: the same answer and the same request, for a caller that only
// reads the pod it gets. The kubelet's status manager is one: before each status write it reads
// the API pod's UID, status (merged into the status it writes, and the old side of the patch)
// and deletion timestamp, and keeps nothing of it.
func (d *Direct) GetPodView(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	return getView[corev1.Pod](ctx, d, d.target(podsTarget, namespace, name, ""))
}

// CreatePod is POST pods.
func (d *Direct) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	e, err := d.create(ctx, d.target(podsTarget, pod.Namespace, "", ""), pod)
	if err != nil {
		return &corev1.Pod{}, err
	}
	return answer[*corev1.Pod](e), nil
}

// PatchPodStatus is PATCH pods/NAME/status with a patch of type pt.
func (d *Direct) PatchPodStatus(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*corev1.Pod, error) {
	e, err := d.patch(ctx, d.target(podsTarget, namespace, name, "status"), pt, patch)
	if err != nil {
		return &corev1.Pod{}, err
	}
	return answer[*corev1.Pod](e), nil
}

// PatchPodStatusView is PatchPodStatus answered with a view of the stored pod instead of a copy,
// as GetNodeView answers the node: the same answer, the same write and the same request, for a
// caller that only reads the pod it gets back. The kubelet's status manager is one: it reads the
// patched pod's UID, name, phase, deletion timestamp, mirror annotation and container states
// (the trace, canBeDeleted, the startup tracker) and keeps nothing of it. A change to the view
// would change the stored pod under the server, without a write, a resource version or a watch
// event.
func (d *Direct) PatchPodStatusView(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*corev1.Pod, error) {
	e, err := d.patch(ctx, d.target(podsTarget, namespace, name, "status"), pt, patch)
	if err != nil {
		return &corev1.Pod{}, err
	}
	return view[corev1.Pod](e), nil
}

// DeletePod is DELETE pods/NAME with opts.
func (d *Direct) DeletePod(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error {
	return d.delete(ctx, d.target(podsTarget, namespace, name, ""), opts)
}

// GetNode is GET nodes/NAME.
func (d *Direct) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	e, err := d.get(ctx, d.target(nodesTarget, "", name, ""))
	if err != nil {
		return &corev1.Node{}, err
	}
	return answer[*corev1.Node](e), nil
}

// GetNodeView is GET nodes/NAME answered with a view of the stored node instead of a copy: a
// node whose fields (but its apiVersion and kind, cleared as in an answer) are the stored
// object's, which no write changes (a write stores a new object). It equals GetNode's answer
// and counts as the same request. The caller only reads it, as a kubelet reads its node
// informer's cache: a change to it would change the stored node under the server, without a
// write, a resource version or a watch event.
func (d *Direct) GetNodeView(ctx context.Context, name string) (*corev1.Node, error) {
	return getView[corev1.Node](ctx, d, d.target(nodesTarget, "", name, ""))
}

// getView is GET of t answered with a view of the stored object (view), of Go type T; a failed
// call answers an empty object beside the error.
func getView[T any, PT interface {
	*T
	runtime.Object
}](ctx context.Context, d *Direct, t target) (PT, error) {
	e, err := d.get(ctx, t)
	if err != nil {
		return PT(new(T)), err
	}
	return view[T, PT](e), nil
}

// view is the object a typed client decodes from an answer carrying e, as a view of the stored
// object: a shallow copy with apiVersion and kind cleared, sharing everything else with the
// stored object, which no write changes. Its receiver only reads it (GetNodeView, GetLeaseView,
// UpdateLeaseView, GetPodView, PatchPodStatusView, the in-process lists and watches).
func view[T any, PT interface {
	*T
	runtime.Object
}](e *entry) PT {
	out := PT(new(T))
	*out = *e.obj.(PT)
	out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return out
}

// CreateNode is POST nodes.
func (d *Direct) CreateNode(ctx context.Context, node *corev1.Node) (*corev1.Node, error) {
	e, err := d.create(ctx, d.target(nodesTarget, "", "", ""), node)
	if err != nil {
		return &corev1.Node{}, err
	}
	return answer[*corev1.Node](e), nil
}

// PatchNodeStatus is PATCH nodes/NAME/status with a patch of type pt.
func (d *Direct) PatchNodeStatus(ctx context.Context, name string, pt types.PatchType, patch []byte) (*corev1.Node, error) {
	e, err := d.patch(ctx, d.target(nodesTarget, "", name, "status"), pt, patch)
	if err != nil {
		return &corev1.Node{}, err
	}
	return answer[*corev1.Node](e), nil
}

// GetLease is GET leases/NAME.
func (d *Direct) GetLease(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	e, err := d.get(ctx, d.target(leasesTarget, namespace, name, ""))
	if err != nil {
		return &coordinationv1.Lease{}, err
	}
	return answer[*coordinationv1.Lease](e), nil
}

// GetLeaseView is GET leases/NAME answered with a view of the stored lease instead of a copy, as
// GetNodeView answers the node: the same answer and the same request, for a caller that only
// reads the lease it gets (the node lifecycle controller, which keeps a copy of its renew time).
func (d *Direct) GetLeaseView(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	return getView[coordinationv1.Lease](ctx, d, d.target(leasesTarget, namespace, name, ""))
}

// CreateLease is POST leases.
func (d *Direct) CreateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	e, err := d.create(ctx, d.target(leasesTarget, lease.Namespace, "", ""), lease)
	if err != nil {
		return &coordinationv1.Lease{}, err
	}
	return answer[*coordinationv1.Lease](e), nil
}

// UpdateLease is PUT leases/NAME.
func (d *Direct) UpdateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	e, err := d.update(ctx, d.target(leasesTarget, lease.Namespace, lease.Name, ""), lease)
	if err != nil {
		return &coordinationv1.Lease{}, err
	}
	return answer[*coordinationv1.Lease](e), nil
}

// UpdateLeaseView is UpdateLease answered with a view of the stored lease instead of a copy,
// as GetNodeView answers the node: the same answer and the same request, for a caller that only
// reads the lease it gets back (the kubelet's lease controller, which copies the lease it last
// wrote before it renews it).
func (d *Direct) UpdateLeaseView(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	e, err := d.update(ctx, d.target(leasesTarget, lease.Namespace, lease.Name, ""), lease)
	if err != nil {
		return &coordinationv1.Lease{}, err
	}
	return view[coordinationv1.Lease](e), nil
}

// CreateEvent is POST events (core/v1).
func (d *Direct) CreateEvent(ctx context.Context, ev *corev1.Event) (*corev1.Event, error) {
	e, err := d.create(ctx, d.target(eventsTarget, ev.Namespace, "", ""), ev)
	if err != nil {
		return &corev1.Event{}, err
	}
	return answer[*corev1.Event](e), nil
}

// PatchEvent is PATCH events/NAME (core/v1) with a patch of type pt.
func (d *Direct) PatchEvent(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*corev1.Event, error) {
	e, err := d.patch(ctx, d.target(eventsTarget, namespace, name, ""), pt, patch)
	if err != nil {
		return &corev1.Event{}, err
	}
	return answer[*corev1.Event](e), nil
}

// CreateToken is POST serviceaccounts/NAME/token.
func (d *Direct) CreateToken(ctx context.Context, namespace, serviceAccount string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	t := d.target(serviceAccountTarget, namespace, serviceAccount, "token")
	t.class = requestClass(d.user, verbCreate, t)
	var out *authenticationv1.TokenRequest
	err := d.do(t, verbCreate, http.MethodPost, http.StatusCreated, func() error {
		in, err := wireObject(tokenRequestResource, tr)
		if err != nil {
			return err
		}
		issued, err := d.s.createTokenObject(ctx, t, in.(*authenticationv1.TokenRequest))
		if err != nil {
			return err
		}
		// The answer is stored nowhere, so nothing cut its times to what the wire carries (the
		// expiry keeps the clock's fraction of a second): it goes through the wire's encoding.
		answered, err := wireObject(tokenRequestResource, issued)
		if err != nil {
			return err
		}
		out = answered.(*authenticationv1.TokenRequest)
		out.TypeMeta = metav1.TypeMeta{}
		return nil
	})
	if err != nil {
		return &authenticationv1.TokenRequest{}, err
	}
	return out, nil
}
