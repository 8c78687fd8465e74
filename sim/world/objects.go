package world

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/volumemanager/objects"
)

// Objects is a kubelet's watches of the ConfigMaps and Secrets its pods reference, and its
// service informer, stepped: on the virtual clock nothing delays a watch, so what a watch holds
// is what the API server holds, read in-process whenever the API server is reachable. While the
// link is down each watch keeps what it last saw, as a broken watch does; a watch that never
// read is not synced. It is the kubelet's (a restarted kubelet gets a new one).
type Objects struct {
	server *fakeapiserver.Server
	link   *Link // nil: the server always answers
	// seen holds each watched object as last read (nil: it did not exist); a watch with no
	// entry has not listed yet.
	seen    map[objects.Key]runtime.Object
	watched map[objects.Key]bool
	// services are the Services last listed; servicesListed once a list was made.
	services       []*v1.Service
	servicesListed bool
}

// NewObjects returns the watches of a kubelet reaching server through link (nil: always up).
func NewObjects(server *fakeapiserver.Server, link *Link) *Objects {
	o := &Objects{server: server, link: link, seen: map[objects.Key]runtime.Object{}, watched: map[objects.Key]bool{}}
	// The kubelet's service informer starts with the process and lists at once: a kubelet
	// (re)started while its API server is reachable has the Services read, whether or not a
	// container asks for them before the server goes away.
	o.List()
	return o
}

func (o *Objects) down() bool { return o.link != nil && o.link.Down() }

// Watch starts watching k.
func (o *Objects) Watch(k objects.Key) { o.watched[k] = true }

// Stop stops watching k and forgets what it held.
func (o *Objects) Stop(k objects.Key) {
	delete(o.watched, k)
	delete(o.seen, k)
}

// Get returns k's object as its watch holds it.
func (o *Objects) Get(k objects.Key) (runtime.Object, bool) {
	if !o.watched[k] {
		return nil, false
	}
	if !o.down() {
		obj, ok := o.server.Object(k.Kind.String(), k.Namespace, k.Name)
		if !ok {
			obj = nil
		}
		o.seen[k] = obj
	}
	obj, listed := o.seen[k]
	return obj, listed
}

// List returns the Services as the informer holds them.
func (o *Objects) List() ([]*v1.Service, bool) {
	if !o.down() {
		o.services, o.servicesListed = o.server.Services(), true
	}
	return o.services, o.servicesListed
}

// The interfaces a kubelet reads it through.
var (
	_ objects.Source   = (*Objects)(nil)
	_ objects.Services = (*Objects)(nil)
)
