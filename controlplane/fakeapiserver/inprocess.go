package fakeapiserver

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// podResource is the pods row of the resource table. It is built once: the stepping engine's
// watches ask for it at every pump, and building the whole table each time cost more than the
// pump itself.
var podResource = sync.OnceValue(func() *resource {
	for _, res := range resources() {
		if res.name == "pods" {
			return res
		}
	}
	panic("fakeapiserver: no pods resource")
})
