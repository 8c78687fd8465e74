package world

import (
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sources"
)

// APIWatch is the api source's reflector over one node's pods, stepped: its first list, then
// every watch event since the resource version it last saw, in the API server's order. It is the
// kubelet's (a restarted kubelet gets a new one); the API server is the world's.
type APIWatch struct {
	server *fakeapiserver.Server
	node   string
	link   *Link // nil: the server always answers
	rv     uint64
	// unlisted: the first list failed (the API server was unreachable).
	unlisted bool
	// router, when not nil, is the fleet's shared watch this one reads its events from; nil reads
	// the server's history directly.
	router *PodRouter
	// queue is the node's queue in router, once the watch's list attached it: asked about at
	// every check of the node's kubelet, it is read here rather than looked up by the node's
	// name in a map that holds every node of the fleet.
	queue *nodeQueue
}

// NewAPIWatch returns the watch of node's pods on server, reached through link (nil: always up).
func NewAPIWatch(server *fakeapiserver.Server, node string, link *Link) *APIWatch {
	return &APIWatch{server: server, node: node, link: link}
}

func (w *APIWatch) down() bool { return w.link != nil && w.link.Down() }

// List gives src the node's pods as the reflector's first list does, and watches from there. An
// unreachable API server leaves the list to the next Pump that reaches it.
func (w *APIWatch) List(src *sources.API) []podconfig.Update {
	if w.down() {
		w.unlisted = true
		return nil
	}
	w.unlisted = false
	return []podconfig.Update{w.relist(src)}
}

// relist replaces src's pods with the node's pods as the server holds them, and resumes the
// watch from there.
func (w *APIWatch) relist(src *sources.API) podconfig.Update {
	if w.router != nil {
		// The shared watch catches up first, so that it has routed every change up to the list
		// and nothing after: the node's queue starts at the list.
		w.queue = w.router.attach(w.node)
	}
	pods, rv := w.server.NodePods(w.node)
	w.rv = rv
	return src.Replace(pods)
}

// Pending reports whether a Pump would deliver anything, or make the list the first one could
// not: whether the kubelet has a watch event to handle now. A routed watch knows exactly; a watch
// of its own knows only that the server's resource version moved (a node or lease write moves it
// too), and says true then: a wasted pass, never a missed event.
func (w *APIWatch) Pending() bool {
	switch {
	case w.down():
		return false
	case w.unlisted:
		return true
	case w.router != nil:
		return w.routed()
	}
	return w.server.ResourceVersion() != w.rv
}

// Pump feeds src every watch event its pods got since it last looked, the way the reflector
// would. A history that has been compacted is a 410 Gone: the source relists, as the reflector
// does. While the API server is unreachable the watch is broken; it resumes from the last
// resource version it saw once the server answers again, or makes the list it could not make.
func (w *APIWatch) Pump(src *sources.API) []podconfig.Update {
	if w.down() {
		return nil
	}
	if w.unlisted {
		return w.List(src)
	}
	if w.router != nil {
		return w.pumpRouted(src)
	}
	if w.server.ResourceVersion() == w.rv {
		return nil
	}
	evs, next, err := w.server.PodEventsSince(w.node, w.rv)
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		return []podconfig.Update{w.relist(src)}
	}
	w.rv = next
	return deliver(src, evs)
}

// pumpRouted is Pump over the fleet's shared watch: the same events, in the same order, from the
// node's queue instead of a read of the whole history.
func (w *APIWatch) pumpRouted(src *sources.API) []podconfig.Update {
	r := w.router
	if !w.routed() {
		return nil
	}
	// The watch has seen every change before its queue's first event (a node that was not
	// settled meanwhile did not move w.rv, but had nothing to see). A watch resumed from a
	// version the history no longer holds gets 410 Gone and relists, as does every watch when
	// the shared watch itself found its cursor compacted.
	q := w.queue
	if q.expired || w.server.PodHistoryExpired(max(w.rv, q.seen)) {
		q.expired = false
		return []podconfig.Update{w.relist(src)}
	}
	evs := q.events
	q.events = evs[:0]
	w.rv = r.rv
	// The queued pods are the server's stored objects, which no write changes, and src keeps
	// what it is given read-only, as the kubelet's store keeps the reflector's decode: both sides
	// only read it, so src gets the stored object itself, where a watch over HTTP would decode a
	// copy (docs/design/008-shared-pods.md).
	if r.onDeliver != nil {
		for _, ev := range evs {
			r.onDeliver(w.node, ev.Pod)
		}
	}
	return deliver(src, evs)
}

// routed catches the shared watch up and reports whether it queued anything for this node. With
// nothing queued the watch has seen every write up to the cursor, as a watch of its own reading
// the history would have, and resumes from there.
func (w *APIWatch) routed() bool {
	r := w.router
	r.advance()
	if q := w.queue; q != nil && (len(q.events) > 0 || q.expired) {
		return true
	}
	w.rv = r.rv
	return false
}

// deliver hands src the watch events as the reflector's adds, updates and deletes.
func deliver(src *sources.API, evs []fakeapiserver.PodEvent) []podconfig.Update {
	out := make([]podconfig.Update, 0, len(evs))
	for _, ev := range evs {
		switch ev.Type {
		case watch.Added:
			out = append(out, src.Add(ev.Pod))
		case watch.Modified:
			out = append(out, src.Update(ev.Pod))
		case watch.Deleted:
			out = append(out, src.Delete(ev.Pod))
		}
	}
	return out
}

// PodRouter is the fleet's shared pod watch in a stepped world: one cursor over the API server's
// pod history, each change queued for the node the pod is bound to, as `run --nodes` shares one
// reflector routed by spec.nodeName (sources.SharedAPIRunner). Each node's APIWatch drains its
// queue. It is read from the engine's goroutine only.
type PodRouter struct {
	server *fakeapiserver.Server
	rv     uint64 // the resource version the cursor has read up to
	// queues holds the queue of each node with a watch, which its watch also holds.
	queues map[string]*nodeQueue
	// reached lists the nodes whose queue went from empty to not since Reached last looked: the
	// nodes a stepping driver must settle, whose watch now has something for their kubelet.
	reached []string
	// onDeliver, when set, is told of every stored pod a watch hands its api source.
	onDeliver func(node string, pod *v1.Pod)
}

// nodeQueue is what the shared watch keeps for one node's watch.
type nodeQueue struct {
	// events are the events routed to the node since its watch last drained them. The pods are
	// the server's stored objects, which no write changes; the api source keeps them as they
	// are, read-only.
	events []fakeapiserver.PodEvent
	// seen is, once the queue has filled since the node's list, the version just before the
	// first event queued when it last went from empty to not: what the watch had seen then.
	seen uint64
	// expired: the queued events were lost to the shared watch's cursor being compacted, and
	// the watch relists.
	expired bool
}

// NewPodRouter returns the shared watch of server's pods, reading from its current version.
func NewPodRouter(server *fakeapiserver.Server) *PodRouter {
	return &PodRouter{server: server, rv: server.ResourceVersion(), queues: map[string]*nodeQueue{}}
}

// Watch returns node's watch over link (nil: always up), fed by r.
func (r *PodRouter) Watch(node string, link *Link) *APIWatch {
	w := NewAPIWatch(r.server, node, link)
	w.router = r
	return w
}

// attach starts node's queue at the server's current version, and returns it.
func (r *PodRouter) attach(node string) *nodeQueue {
	r.advance()
	q := r.queues[node]
	if q == nil {
		q = &nodeQueue{}
		r.queues[node] = q
	}
	q.events, q.seen, q.expired = q.events[:0], 0, false
	return q
}

// Reached catches the shared watch up and returns the nodes it queued a pod change for since the
// last call, each once, in the order their first change came; the slice is r's until the next
// call. A node's queue that was not empty already is not named again: its driver was told.
func (r *PodRouter) Reached() []string {
	r.advance()
	out := r.reached
	r.reached = r.reached[:0]
	return out
}

// advance routes every pod change since the cursor to the queues. A history compacted past the
// cursor is caught up without routing: every watch has lost events it cannot know of, so each is
// marked to relist, and named to its driver.
func (r *PodRouter) advance() {
	if r.server.ResourceVersion() == r.rv {
		return
	}
	want := func(node string) bool { _, ok := r.queues[node]; return ok }
	next, err := r.server.RoutePodEventsSince(r.rv, want, func(node string, ev fakeapiserver.PodEvent) {
		q := r.queues[node]
		if len(q.events) == 0 {
			r.reached = append(r.reached, node)
			q.seen = ev.ResourceVersion - 1
		}
		q.events = append(q.events, ev)
	})
	if err != nil {
		next = r.server.ResourceVersion()
		for _, node := range slices.Sorted(maps.Keys(r.queues)) {
			q := r.queues[node]
			if len(q.events) == 0 && !q.expired {
				r.reached = append(r.reached, node)
			}
			q.events, q.expired = q.events[:0], true
		}
	}
	r.rv = next
}
