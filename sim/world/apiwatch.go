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
		w.router.attach(w.node)
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
	if r.expired[w.node] || w.server.PodHistoryExpired(max(w.rv, r.seen[w.node])) {
		delete(r.expired, w.node)
		return []podconfig.Update{w.relist(src)}
	}
	evs := r.queues[w.node]
	r.queues[w.node] = evs[:0]
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
	if len(r.queues[w.node]) > 0 || r.expired[w.node] {
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
	// queues holds, for each node with a watch, the events routed to it since its watch last
	// drained them. The pods are the server's stored objects, which no write changes; the api
	// source keeps them as they are, read-only.
	queues map[string][]fakeapiserver.PodEvent
	// reached lists the nodes whose queue went from empty to not since Reached last looked: the
	// nodes a stepping driver must settle, whose watch now has something for their kubelet.
	reached []string
	// seen is, for each node whose queue is not empty, the version just before its first queued
	// event: what its watch had seen when its queue started to fill.
	seen map[string]uint64
	// expired names the nodes whose queued events were lost to the shared watch's cursor being
	// compacted: their watches relist.
	expired map[string]bool
	// onDeliver, when set, is told of every stored pod a watch hands its api source.
	onDeliver func(node string, pod *v1.Pod)
}

// NewPodRouter returns the shared watch of server's pods, reading from its current version.
func NewPodRouter(server *fakeapiserver.Server) *PodRouter {
	return &PodRouter{server: server, rv: server.ResourceVersion(), queues: map[string][]fakeapiserver.PodEvent{},
		seen: map[string]uint64{}, expired: map[string]bool{}}
}

// Watch returns node's watch over link (nil: always up), fed by r.
func (r *PodRouter) Watch(node string, link *Link) *APIWatch {
	w := NewAPIWatch(r.server, node, link)
	w.router = r
	return w
}

// attach starts node's queue at the server's current version.
func (r *PodRouter) attach(node string) {
	r.advance()
	r.queues[node] = r.queues[node][:0]
	delete(r.seen, node)
	delete(r.expired, node)
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
		if len(q) == 0 {
			r.reached = append(r.reached, node)
			r.seen[node] = ev.ResourceVersion - 1
		}
		r.queues[node] = append(q, ev)
	})
	if err != nil {
		next = r.server.ResourceVersion()
		for _, node := range slices.Sorted(maps.Keys(r.queues)) {
			if len(r.queues[node]) == 0 && !r.expired[node] {
				r.reached = append(r.reached, node)
			}
			r.queues[node] = r.queues[node][:0]
			r.expired[node] = true
		}
	}
	r.rv = next
}
