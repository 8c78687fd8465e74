package fakeapiserver

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Every active namespace has the ConfigMap kube-root-ca.crt, as kube-controller-manager's root CA
// publisher makes sure (pkg/controller/certificates/rootcacertpublisher): it is created with its
// namespace (and with the system namespaces at start) and again when it is deleted. (The
// publisher also puts back data that a write changed; this server does not.) The projected service account volume
// every pod gets (kube-api-access-*, admission.go) reads its ca.crt, so a pod's volumes can be
// mounted only where it exists. Its ca.crt is the CA PublishRootCA was given, empty until then:
// a replay serves no TLS.

// Names of the root CA publisher (rootcacertpublisher.RootCACertConfigMapName, Description).
const (
	rootCAConfigMap      = "kube-root-ca.crt"
	rootCAKey            = "ca.crt"
	descriptionKey       = "kubernetes.io/description"
	rootCAConfigMapUsage = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

// ensureRootCA is the publisher's syncNamespace for an active namespace: create kube-root-ca.crt
// when it is missing, put its data and description back when they differ. Its UID is derived
// from the namespace's, as the default ServiceAccount's is, so that the server's random source
// (pod UIDs) draws the same as before the publisher was modelled. The caller holds the store
// lock.
func (s *Server) ensureRootCA(namespace string) error {
	nsEntry, ok := s.store.get(s.store.resource("namespaces"), "", namespace)
	if !ok || nsEntry.obj.(*corev1.Namespace).Status.Phase != corev1.NamespaceActive {
		return nil
	}
	res := s.store.resource("configmaps")
	data := map[string]string{rootCAKey: string(s.rootCA)}
	cur, ok := s.store.get(res, namespace, rootCAConfigMap)
	if !ok {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Name: rootCAConfigMap, Namespace: namespace, CreationTimestamp: s.now(),
				UID:         derivedUID(string(nsEntry.meta().GetUID()) + "/configmaps/" + rootCAConfigMap),
				Annotations: map[string]string{descriptionKey: rootCAConfigMapUsage},
			},
			Data: data,
		}
		if _, err := s.store.commit(res, watch.Added, cm, nil); err != nil {
			return fmt.Errorf("create config map %s/%s: %w", namespace, rootCAConfigMap, err)
		}
		return nil
	}
	old := cur.obj.(*corev1.ConfigMap)
	if maps.Equal(old.Data, data) && old.Annotations[descriptionKey] != "" {
		return nil
	}
	cm := old.DeepCopy()
	cm.Data = data
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[descriptionKey] = rootCAConfigMapUsage
	if _, err := s.store.commit(res, watch.Modified, cm, cur); err != nil {
		return fmt.Errorf("update config map %s/%s: %w", namespace, rootCAConfigMap, err)
	}
	return nil
}

// bootstrapRootCA gives every active namespace its kube-root-ca.crt at start: the system
// namespaces, and those of a store written before the publisher was modelled.
func (s *Server) bootstrapRootCA() error {
	return s.store.locked(func() error {
		for _, e := range s.store.list(s.store.resource("namespaces"), "") {
			if err := s.ensureRootCA(e.meta().GetName()); err != nil {
				return err
			}
		}
		return nil
	})
}

// PublishRootCA sets the CA bundle the publisher puts in every namespace's kube-root-ca.crt (the
// controller manager's --root-ca-file), and updates every one of them.
func (s *Server) PublishRootCA(pem []byte) error {
	return s.store.locked(func() error {
		s.rootCA = append([]byte(nil), pem...)
		for _, e := range s.store.list(s.store.resource("namespaces"), "") {
			if err := s.ensureRootCA(e.meta().GetName()); err != nil {
				return err
			}
		}
		return nil
	})
}
