package world

import (
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
	pods, rv := w.server.NodePods(w.node)
	w.rv = rv
	return []podconfig.Update{src.Replace(pods)}
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
	if w.server.ResourceVersion() == w.rv {
		return nil
	}
	evs, next, err := w.server.PodEventsSince(w.node, w.rv)
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		pods, rv := w.server.NodePods(w.node)
		w.rv = rv
		return []podconfig.Update{src.Replace(pods)}
	}
	w.rv = next
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
