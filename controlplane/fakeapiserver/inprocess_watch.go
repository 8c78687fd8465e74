package fakeapiserver

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
)

// The lists and watches in process of the kinds that the controllers and the nodes' shared pod
// watch read (pods, nodes, leases): what a reflector over the server's typed client of the kind
// gets over HTTP, as Go objects, without encoding the answer or decoding it. They run the same
// code as the HTTP list and watch (listPage, stream): the same options and their checks, the
// same resource versions, initial events, bookmarks, timeouts and errors (410 Gone for a
// compacted history, Too large resource version), and each is counted in the request metrics as
// its HTTP request is, once it is answered (a watch when it ends). What differs is only what the
// wire does:
//
//   - an object handed over is the stored object, shared and read-only
//     (docs/design/008-shared-pods.md): no write changes a stored object, and the receiver never
//     changes it. It is a shallow copy (view), sharing everything beneath it, without apiVersion
//     and kind, which a typed client's decode of a watch event or of a protobuf list's items
//     leaves empty. Over HTTP each is a decoded copy;
//   - a watch's events are not batched into 64 KiB writes: each is handed over as soon as the
//     receiver takes it, and a receiver that stops reading holds its watch (in process there is
//     no write timeout to drop it on), until it calls Stop;
//   - there is no authentication, and the answers carry no warnings.

var listParams = runtime.NewParameterCodec(scheme)

// collection is the target of a list or watch of res's objects in namespace ("" for every
// namespace, and for a kind without namespaces).
func (d *Direct) collection(res *resource, namespace string) target {
	return target{res: res, namespace: namespace, manager: d.manager}
}

// parseOptions reads opts as the HTTP handler reads the query they encode to.
func parseOptions(t target, opts metav1.ListOptions) (listOptions, error) {
	// ListOptions encode to the same query in every group version.
	q, err := listParams.EncodeParameters(&opts, corev1.SchemeGroupVersion)
	if err != nil {
		return listOptions{}, apierrors.NewBadRequest(err.Error())
	}
	return parseListOptions(&http.Request{Method: http.MethodGet, URL: &url.URL{RawQuery: q.Encode()}}, t)
}

// ListPods lists the pods of namespace ("" for every namespace) as the typed client's List does.
func (d *Direct) ListPods(ctx context.Context, namespace string, opts metav1.ListOptions) (*corev1.PodList, error) {
	items, lm, err := listIn[corev1.Pod](ctx, d, d.collection(podsTarget, namespace), opts)
	return &corev1.PodList{ListMeta: lm, Items: items}, err
}

// ListNodes lists the nodes as the typed client's List does.
func (d *Direct) ListNodes(ctx context.Context, opts metav1.ListOptions) (*corev1.NodeList, error) {
	items, lm, err := listIn[corev1.Node](ctx, d, d.collection(nodesTarget, ""), opts)
	return &corev1.NodeList{ListMeta: lm, Items: items}, err
}

// ListLeases lists the leases of namespace ("" for every namespace) as the typed client's List
// does.
func (d *Direct) ListLeases(ctx context.Context, namespace string, opts metav1.ListOptions) (*coordinationv1.LeaseList, error) {
	items, lm, err := listIn[coordinationv1.Lease](ctx, d, d.collection(leasesTarget, namespace), opts)
	return &coordinationv1.LeaseList{ListMeta: lm, Items: items}, err
}

// listIn lists t's objects, of Go type T, as a typed client decodes the answer: the items and
// the list's metadata, or the error and nothing (a failed call answers an empty list).
func listIn[T any, PT interface {
	*T
	runtime.Object
}](ctx context.Context, d *Direct, t target, opts metav1.ListOptions) (items []T, lm metav1.ListMeta, err error) {
	t.class = requestClass(d.user, verbList, t)
	// A panic is a bug in this package: a 500, as serveHTTP and Direct.do recover it.
	defer func() {
		if p := recover(); p != nil {
			items, lm, err = nil, metav1.ListMeta{}, clientError(internalError(p))
		}
	}()
	s := d.s
	// As serveHTTP and instrument around a list request (Direct.do's route check refuses a
	// path across namespaces, which only lists and watches have).
	s.expireNow()
	defer s.finalizeNow()
	start := s.clock.Now()
	page, err := d.listPage(ctx, t, opts)
	if err != nil {
		s.count("LIST", "", t, verbList, int(failureStatus(err).Code), start)
		return nil, metav1.ListMeta{}, directError(t, http.MethodGet, err)
	}
	s.count("LIST", "", t, verbList, http.StatusOK, start)
	if len(page.items) > 0 {
		// An empty list decodes from protobuf without items: nil, not an empty slice.
		items = make([]T, len(page.items))
	}
	for i, e := range page.items {
		// A list's items carry no kind or apiVersion in protobuf, the kubelet's wire. Copied
		// into the slice as view copies, without a struct of their own in between.
		items[i] = *e.obj.(PT)
		PT(&items[i]).GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	}
	return items, metav1.ListMeta{ResourceVersion: formatRV(page.rv), Continue: page.cont, RemainingItemCount: page.remaining}, nil
}

// listPage is the page of t's objects that opts ask for, as the HTTP list reads it.
func (d *Direct) listPage(ctx context.Context, t target, opts metav1.ListOptions) (listPage, error) {
	o, err := parseOptions(t, opts)
	if err != nil {
		return listPage{}, err
	}
	if err := validateListOptions(o, false); err != nil {
		return listPage{}, err
	}
	var page listPage
	err = d.s.store.lockedAs(ctx, t.class, func() error {
		page, err = d.s.listPage(t, o)
		return err
	})
	return page, err
}

// WatchPods watches the pods of namespace ("" for every namespace) as the typed client's Watch
// does. The watch runs in a goroutine of its own until ctx is done, Stop is called, the server
// stops or the watch's timeout passes; its result channel closes then.
func (d *Direct) WatchPods(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	return watchIn[corev1.Pod](ctx, d, d.collection(podsTarget, namespace), opts)
}

// WatchNodes watches the nodes as WatchPods watches pods.
func (d *Direct) WatchNodes(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return watchIn[corev1.Node](ctx, d, d.collection(nodesTarget, ""), opts)
}

// WatchLeases watches the leases of namespace ("" for every namespace) as WatchPods watches
// pods.
func (d *Direct) WatchLeases(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	return watchIn[coordinationv1.Lease](ctx, d, d.collection(leasesTarget, namespace), opts)
}

// watchIn watches t's objects, of Go type T, as the typed client's Watch does: each event
// carries a view of the stored object, as a typed client decodes the event.
func watchIn[T any, PT interface {
	*T
	runtime.Object
}](ctx context.Context, d *Direct, t target, opts metav1.ListOptions) (watch.Interface, error) {
	t.watch = true
	t.class = requestClass(d.user, verbWatch, t)
	s := d.s
	// As serveHTTP and instrument around a watch request: expired objects swept first,
	// namespaces finalized once it ends, and the request counted once it ends, with the code its
	// answer started with: an error of the request's own checks, or 200.
	s.expireNow()
	start := s.clock.Now()
	o, err := parseOptions(t, opts)
	if err == nil {
		defaultWatchList(&o)
		err = validateListOptions(o, true)
	}
	if err != nil {
		s.count("WATCH", "", t, verbWatch, int(failureStatus(err).Code), start)
		s.finalizeNow()
		return nil, clientError(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &localWatch{res: t.res, typed: func(e *entry) runtime.Object { return view[T, PT](e) }, ctx: ctx, cancel: cancel, ch: make(chan watch.Event), begun: make(chan struct{})}
	ended := make(chan struct{})
	go func() {
		defer close(w.ch)
		defer close(ended)
		// A panic is a bug in this package: it ends this watch, as serveHTTP's recovery ends
		// the request, and the receiver watches again; it does not take the process down.
		defer func() {
			if p := recover(); p != nil {
				klog.ErrorS(internalError(p), "In-process watch ended by a panic", "resource", t.res.name)
			}
		}()
		_ = s.stream(ctx, t, o, w)
		s.count("WATCH", "", t, verbWatch, http.StatusOK, start)
		s.finalizeNow()
	}()
	// Watch returns once the watch has taken the version it starts from, as client-go's returns
	// once the response's headers came, which the handler writes after that: a write made after
	// Watch returned is an event of the watch, never part of its initial state.
	select {
	case <-w.begun:
	case <-ended:
	}
	return w, nil
}

// errWatchStopped ends a local watch whose receiver went away.
var errWatchStopped = errors.New("watch stopped")

// localWatch is a watch in process: a watchSink that hands each event to its receiver on ch.
type localWatch struct {
	res *resource
	// typed is the object a typed client decodes from an event carrying a stored entry.
	typed   func(*entry) runtime.Object
	ctx     context.Context
	cancel  context.CancelFunc
	stop    sync.Once
	ch      chan watch.Event
	pending []watch.Event
	// begun is closed once the watch has taken the version it starts from.
	begun chan struct{}
}

var _ watch.Interface = (*localWatch)(nil)

// Stop ends the watch; its channel closes once the watch's goroutine has returned.
func (w *localWatch) Stop() { w.stop.Do(w.cancel) }

// ResultChan is the watch's events.
func (w *localWatch) ResultChan() <-chan watch.Event { return w.ch }

func (w *localWatch) begin() { close(w.begun) }

func (w *localWatch) event(typ watch.EventType, e *entry) {
	w.pending = append(w.pending, watch.Event{Type: typ, Object: w.typed(e)})
}

// bookmark is the object a typed client decodes from the HTTP watch's bookmark (watcher.bookmark).
func (w *localWatch) bookmark(rv uint64, initialEnd bool) {
	obj := w.res.newObj()
	m := mustMeta(obj)
	m.SetResourceVersion(formatRV(rv))
	if initialEnd {
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	w.pending = append(w.pending, watch.Event{Type: watch.Bookmark, Object: obj})
}

// fail hands over err's Status as the watch's last event, as the typed client decodes it.
func (w *localWatch) fail(err error) error {
	st := err.(apierrors.APIStatus).Status()
	w.pending = append(w.pending, watch.Event{Type: watch.Error, Object: &st})
	_ = w.flush()
	return nil
}

// spill hands every event over at once: there is no write to batch them for.
func (w *localWatch) spill() error { return w.flush() }

func (w *localWatch) flush() error {
	for i, ev := range w.pending {
		select {
		case w.ch <- ev:
		case <-w.ctx.Done():
			clear(w.pending)
			w.pending = w.pending[:0]
			return errWatchStopped
		}
		w.pending[i] = watch.Event{}
	}
	w.pending = w.pending[:0]
	return nil
}

// end ends a watch whose receiver went away: nothing is left to tell.
func (w *localWatch) end(error) error { return nil }
