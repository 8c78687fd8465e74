package fakeapiserver

import (
	"crypto/sha256"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// ServiceAccounts are stored objects, and every active namespace has one named "default", as
// kube-controller-manager's service account controller makes sure: it is created with its
// namespace (and with the system namespaces at start), and again if it is deleted while its
// namespace is active. The ServiceAccount admission plugin then requires a pod's service account
// to exist and mounts its token volume (admission.go, tokenvolume.go); serviceaccounts/token
// issues the tokens (tokens.go). The token controller's legacy token Secrets are not modelled.

const defaultServiceAccount = "default"

func serviceAccountResource() *resource {
	return &resource{
		name: "serviceaccounts", singular: "serviceaccount", kind: "ServiceAccount", gv: coreV1, namespaced: true,
		shortNames: []string{"sa"}, verbs: verbsStored,
		subresources: []subresource{{name: "token", kind: "TokenRequest", verbs: verbCreate}},
		newObj:       func() runtime.Object { return &corev1.ServiceAccount{} },
		fieldSet:     metaFields,
		validate:     validateMetaOnly,
		columns:      defaultColumns,
		cells:        defaultCells,
	}
}

// ensureDefaultServiceAccount creates the "default" ServiceAccount of namespace if the namespace
// is active and has none, as the service account controller does soon after. Its UID is derived
// from the namespace's rather than drawn from the store's random source, so that a replay that
// creates a namespace draws the same pod UIDs as it did before ServiceAccounts were served. The
// caller holds the store lock.
func (s *Server) ensureDefaultServiceAccount(namespace string) error {
	nsEntry, ok := s.store.get(s.store.resource("namespaces"), "", namespace)
	if !ok || nsEntry.obj.(*corev1.Namespace).Status.Phase != corev1.NamespaceActive {
		return nil
	}
	res := s.store.resource("serviceaccounts")
	if _, ok := s.store.get(res, namespace, defaultServiceAccount); ok {
		return nil
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
		Name: defaultServiceAccount, Namespace: namespace, CreationTimestamp: s.now(),
		UID: derivedUID(string(nsEntry.meta().GetUID()) + "/serviceaccounts/" + defaultServiceAccount),
	}}
	if _, err := s.store.commit(res, watch.Added, sa, nil); err != nil {
		return fmt.Errorf("create service account %s/%s: %w", namespace, defaultServiceAccount, err)
	}
	return nil
}

// bootstrapServiceAccounts gives every active namespace its default ServiceAccount, at start: the
// system namespaces, and those of a store written before ServiceAccounts were served.
func (s *Server) bootstrapServiceAccounts() error {
	return s.store.locked(func() error {
		for _, e := range s.store.list(s.store.resource("namespaces"), "") {
			if err := s.ensureDefaultServiceAccount(e.meta().GetName()); err != nil {
				return err
			}
		}
		return nil
	})
}

// derivedUID is a version 4 style UUID made from a hash of key.
func derivedUID(key string) types.UID {
	b := sha256.Sum256([]byte(key))
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
}

// afterCommit does, in the same hold of the store lock, what kube-controller-manager's
// controllers would do soon after a write: a new namespace, or a deleted default ServiceAccount,
// gets its default ServiceAccount, and a new namespace, or a deleted kube-root-ca.crt, its root
// CA ConfigMap (rootca.go). The caller holds the store lock.
func (s *Server) afterCommit(res *resource, typ watch.EventType, m metav1.Object) error {
	switch {
	case res.name == "namespaces" && typ == watch.Added:
		if err := s.ensureDefaultServiceAccount(m.GetName()); err != nil {
			return err
		}
		return s.ensureRootCA(m.GetName())
	case res.name == "serviceaccounts" && typ == watch.Deleted && m.GetName() == defaultServiceAccount:
		return s.ensureDefaultServiceAccount(m.GetNamespace())
	case res.name == "configmaps" && typ == watch.Deleted && m.GetName() == rootCAConfigMap:
		return s.ensureRootCA(m.GetNamespace())
	}
	return nil
}

// lookUpServiceAccount is the ServiceAccount admission plugin's lookup of a pod's service
// account, with its error. The caller holds the store lock.
func (s *Server) lookUpServiceAccount(namespace, name string) (*corev1.ServiceAccount, error) {
	e, ok := s.store.get(s.store.resource("serviceaccounts"), namespace, name)
	if !ok {
		return nil, fmt.Errorf("error looking up service account %s/%s: %w", namespace, name,
			apierrors.NewNotFound(corev1.Resource("serviceaccount"), name))
	}
	return e.obj.(*corev1.ServiceAccount), nil
}
