package fakeapiserver

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// PodEvent is one change to a pod as a watch of one node's pods sees it.
type PodEvent struct {
	Type            watch.EventType
	Pod             *v1.Pod
	ResourceVersion uint64
}

// NodePods lists the pods bound to nodeName and returns the resource version of the list: what
// a list with fieldSelector=spec.nodeName=<nodeName> answers, read in-process without a socket.
//
// Replay uses it and PodEventsSince to feed the api source synchronously. Everything a client
// does over HTTP stays available; these two only spare the deterministic engine a goroutine
// per watch.
func (s *Server) NodePods(nodeName string) ([]*v1.Pod, uint64) {
	var pods []*v1.Pod
	var rv uint64
	_ = s.store.locked(func() error {
		rv = s.store.rv
		for _, e := range s.store.list(podResource(), "") {
			if pod := e.obj.(*v1.Pod); pod.Spec.NodeName == nodeName {
				pods = append(pods, pod.DeepCopy())
			}
		}
		return nil
	})
	return pods, rv
}

// PodEventsSince returns, oldest first, every change after resource version rv to the pods bound
// to nodeName, as a watch with fieldSelector=spec.nodeName=<nodeName> started at rv delivers
// them, and the resource version to resume from next time (the newest pod write it looked at,
// matching or not). An rv older than the kept history is the watch's 410 Gone: the caller
// relists.
func (s *Server) PodEventsSince(nodeName string, rv uint64) ([]PodEvent, uint64, error) {
	res := podResource()
	evs, expired, _, _ := s.store.since(res, rv, math.MaxInt32, s.store.currentEpoch())
	if expired {
		return nil, rv, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d", rv))
	}
	next := rv
	if len(evs) > 0 {
		next = evs[len(evs)-1].rv
	}
	match := func(e *entry) bool { return e != nil && e.obj.(*v1.Pod).Spec.NodeName == nodeName }
	var out []PodEvent
	for _, ev := range evs {
		typ, e, ok := selectEvent(ev, match)
		if !ok {
			continue
		}
		out = append(out, PodEvent{Type: typ, Pod: e.obj.(*v1.Pod).DeepCopy(), ResourceVersion: ev.rv})
	}
	return out, next, nil
}

// RoutePodEventsSince hands deliver, oldest first, every change after resource version rv to a
// pod bound to a node that want accepts, as that node's watch with
// fieldSelector=spec.nodeName=<node> would see it, and returns the resource version to resume
// from (the newest pod write it looked at). It reads the history once for every node, where
// PodEventsSince reads it once per node: a fleet's watches share it. The pod handed over is the
// stored object itself, which no write changes: a receiver may keep it, and never changes it. An rv
// older than the kept history is an error that wraps the watch's 410 Gone.
func (s *Server) RoutePodEventsSince(rv uint64, want func(node string) bool, deliver func(node string, ev PodEvent)) (uint64, error) {
	evs, expired, _, _ := s.store.since(podResource(), rv, math.MaxInt32, s.store.currentEpoch())
	if expired {
		return rv, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d", rv))
	}
	next := rv
	if len(evs) > 0 {
		next = evs[len(evs)-1].rv
	}
	nodeOf := func(e *entry) string {
		if e == nil {
			return ""
		}
		return e.obj.(*v1.Pod).Spec.NodeName
	}
	for _, ev := range evs {
		// An event concerns the node the pod is bound to after it and the one before it; a
		// pod's node only changes from none to one, but both are asked, as a selector would.
		cur, prev := nodeOf(ev.cur), nodeOf(ev.prev)
		for i, node := range [2]string{cur, prev} {
			if node == "" || (i == 1 && node == cur) || !want(node) {
				continue
			}
			typ, e, ok := selectEvent(ev, func(e *entry) bool { return nodeOf(e) == node })
			if ok {
				deliver(node, PodEvent{Type: typ, Pod: e.obj.(*v1.Pod), ResourceVersion: ev.rv})
			}
		}
	}
	return next, nil
}

// ExpireNow deletes the objects whose time to live has passed and finalizes the terminating
// namespaces, as every request does before it is served: a reader that answers from a cache of
// its own where it would have listed calls it there, so that expiry happens at the same moments.
func (s *Server) ExpireNow() {
	s.expireNow()
	s.finalizeNow()
}

// PodChangesSince hands deliver, oldest first, every change to any pod after resource version
// rv, bound or not, as a watch of every pod started at rv delivers them (a deletion carries the
// pod's last state), and returns the resource version to resume from (the newest pod write it
// looked at). The pod handed over is the stored object itself, which no write changes: a receiver
// may keep it, and never changes it. An rv older than the kept history is an error that wraps the
// watch's 410 Gone.
func (s *Server) PodChangesSince(rv uint64, deliver func(ev PodEvent)) (uint64, error) {
	return changesSince(s, podResource(), rv, func(typ watch.EventType, obj runtime.Object, rv uint64) {
		deliver(PodEvent{Type: typ, Pod: obj.(*v1.Pod), ResourceVersion: rv})
	})
}

// NodeChangesSince is PodChangesSince for nodes.
func (s *Server) NodeChangesSince(rv uint64, deliver func(typ watch.EventType, node *v1.Node, rv uint64)) (uint64, error) {
	return changesSince(s, nodesTarget, rv, func(typ watch.EventType, obj runtime.Object, rv uint64) {
		deliver(typ, obj.(*v1.Node), rv)
	})
}

// changesSince hands deliver every change to res's objects after rv, oldest first.
func changesSince(s *Server, res *resource, rv uint64, deliver func(typ watch.EventType, obj runtime.Object, rv uint64)) (uint64, error) {
	evs, expired, _, _ := s.store.since(res, rv, math.MaxInt32, s.store.currentEpoch())
	if expired {
		return rv, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d", rv))
	}
	for _, ev := range evs {
		deliver(ev.typ, ev.cur.obj, ev.rv)
		rv = ev.rv
	}
	return rv, nil
}

// PodHistoryExpired reports whether resource version rv is older than the pod history the
// server keeps: a watch resumed from it would get 410 Gone.
func (s *Server) PodHistoryExpired(rv uint64) bool {
	var expired bool
	_ = s.store.locked(func() error {
		expired = rv < s.store.buckets[podResource().name].compacted
		return nil
	})
	return expired
}

// Transport returns an http.RoundTripper that serves each request with the server's handler in
// the calling goroutine, with no socket. A client-go clientset built on it talks to the server
// synchronously, which replay needs; watches must not be made through it, because a watch
// response only ends when the client goes away.
func (s *Server) Transport() http.RoundTripper { return handlerTransport{s.Handler()} }

type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	w := httptest.NewRecorder()
	t.h.ServeHTTP(w, r)
	res := w.Result()
	res.Request = r
	return res, nil
}

// podsResource is the pods row of resources(), looked up once: the in-process watch asks for it
// at every pump, and building the table allocates every row.
var podsResource = func() *resource {
	if res, ok := served[coreV1.String()+"/pods"]; ok {
		return res
	}
	panic("fakeapiserver: no pods resource")
}()

func podResource() *resource { return podsResource }
