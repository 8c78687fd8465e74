package fakeapiserver

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Object returns a copy of the stored object of a resource, named by its plural ("configmaps",
// "secrets"; a resource the server does not store is a programming error, and panics), read
// in-process; false when there is none. Replay's kubelets read the objects
// they watch with it, as their watches would have delivered them (sim/world).
func (s *Server) Object(resource, namespace, name string) (runtime.Object, bool) {
	var out runtime.Object
	_ = s.store.locked(func() error {
		if e, ok := s.store.get(s.store.resource(resource), namespace, name); ok {
			out = e.obj.DeepCopyObject()
		}
		return nil
	})
	return out, out != nil
}

// Services lists every Service with a cluster IP, read in-process: what the kubelet's service
// informer lists (fieldSelector spec.clusterIP!=None).
func (s *Server) Services() []*corev1.Service {
	var out []*corev1.Service
	_ = s.store.locked(func() error {
		for _, e := range s.store.list(s.store.resource("services"), "") {
			if svc := e.obj.(*corev1.Service); svc.Spec.ClusterIP != corev1.ClusterIPNone {
				out = append(out, svc.DeepCopy())
			}
		}
		return nil
	})
	return out
}
