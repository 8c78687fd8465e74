package fakeapiserver

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/registry"
)

// Namespaces behave as kube-apiserver's namespace registry, its NamespaceLifecycle admission
// plugin and the namespace controller make them behave together:
//
//   - the four system namespaces exist from the start, as the apiserver's bootstrap controller
//     creates them;
//   - a namespace is created Active with the "kubernetes" finalizer and the
//     kubernetes.io/metadata.name label (the strategy, registry.Namespaces);
//   - creating an object in a namespace that does not exist is refused with NotFound for the
//     namespace, and in one that is terminating with Forbidden;
//   - deleting a namespace marks it Terminating; its content is then deleted as the namespace
//     controller deletes it (pods gracefully, so the kubelet stops them first), and once nothing
//     is left the finalizer is removed and the namespace goes.

// systemNamespaces are the namespaces kube-apiserver creates at start.
var systemNamespaces = []string{
	metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease,
}

// immortalNamespaces may not be deleted (NamespaceLifecycle's immortal set in kube-apiserver).
var immortalNamespaces = sets.New(metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic)

// bootstrapNamespaces creates the system namespaces a store does not hold yet, as kube-apiserver's
// system namespaces controller does at start. Their UIDs are derived from the name and the start
// time rather than drawn from the store's random source, so that the UIDs a replay draws for its
// pods stay those it drew before namespaces were served.
func (s *Server) bootstrapNamespaces() error {
	res := s.store.resource("namespaces")
	return s.store.locked(func() error {
		for _, name := range systemNamespaces {
			if _, ok := s.store.get(res, "", name); ok {
				continue
			}
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
				Name: name, UID: bootstrapUID(name, s.clock.Now()), CreationTimestamp: s.now(),
			}}
			registry.PrepareNamespaceCreate(ns)
			if _, err := s.store.commit(res, watch.Added, ns, nil); err != nil {
				return fmt.Errorf("create namespace %s: %w", name, err)
			}
		}
		return nil
	})
}

// bootstrapUID is a version 4 style UUID made from a hash of name and at.
func bootstrapUID(name string, at time.Time) types.UID {
	return derivedUID(name + "/" + at.UTC().Format(time.RFC3339Nano))
}

// admitNamespace is NamespaceLifecycle for a create of a namespaced object: the namespace must
// exist and must not be terminating. The caller holds the store lock.
func (s *Server) admitNamespace(t target, obj runtime.Object) error {
	if !t.res.namespaced {
		return nil
	}
	m := mustMeta(obj)
	e, ok := s.store.get(s.store.resource("namespaces"), "", m.GetNamespace())
	if !ok {
		return apierrors.NewNotFound(corev1.Resource("namespaces"), m.GetNamespace())
	}
	if e.obj.(*corev1.Namespace).Status.Phase != corev1.NamespaceTerminating {
		return nil
	}
	err := apierrors.NewForbidden(t.res.groupResource(), m.GetName(),
		fmt.Errorf("unable to create new content in namespace %s because it is being terminated", m.GetNamespace()))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    corev1.NamespaceTerminatingCause,
		Message: fmt.Sprintf("namespace %s is being terminated", m.GetNamespace()),
		Field:   "metadata.namespace",
	})
	return err
}

// deleteNamespace is the namespace registry's Delete: a first delete marks the namespace
// Terminating and starts removing its content; a namespace whose finalizers are gone is removed.
// The caller holds the store lock.
func (s *Server) deleteNamespace(t target, old *entry, dryRun bool) (*entry, bool, error) {
	if immortalNamespaces.Has(t.name) {
		return nil, false, apierrors.NewForbidden(t.res.groupResource(), t.name, fmt.Errorf("this namespace may not be deleted"))
	}
	ns := old.obj.(*corev1.Namespace)
	if ns.DeletionTimestamp == nil {
		next := ns.DeepCopy()
		now := s.now()
		next.DeletionTimestamp = &now
		next.Status.Phase = corev1.NamespaceTerminating
		if dryRun {
			e, err := dryRunEntry(t.res, next)
			return e, false, err
		}
		e, err := s.store.commit(t.res, watch.Modified, next, old)
		if err != nil {
			return nil, false, err
		}
		return e, false, s.deleteNamespaceContent(t.name)
	}
	if len(ns.Spec.Finalizers) > 0 {
		return old, false, nil
	}
	if dryRun {
		return old, true, nil
	}
	e, err := s.store.commit(t.res, watch.Deleted, old.obj.DeepCopyObject(), old)
	return e, true, err
}

// deleteNamespaceContent deletes what namespace holds, as the namespace controller's deletecollection
// of every namespaced resource does: pods gracefully (a pod bound to a node stays until its
// kubelet confirms), everything else at once. The caller holds the store lock.
func (s *Server) deleteNamespaceContent(namespace string) error {
	for _, res := range s.store.resources {
		if !res.namespaced || res.view {
			continue
		}
		for _, e := range s.store.list(res, namespace) {
			t := target{res: res, namespace: namespace, name: e.meta().GetName()}
			var err error
			if res.name == "pods" {
				if e.meta().GetDeletionTimestamp() != nil {
					continue // already going; the kubelet finishes it
				}
				_, _, err = s.deletePod(t, e, metav1.DeleteOptions{}, false)
			} else {
				_, err = s.store.commit(res, watch.Deleted, e.obj.DeepCopyObject(), e)
			}
			if err != nil {
				return fmt.Errorf("delete %s %s/%s of a terminating namespace: %w", res.singular, namespace, t.name, err)
			}
		}
	}
	return nil
}

// resumeNamespaceDeletions finishes the deletions a stop cut short: a namespace is marked
// Terminating and then emptied one write at a time, so a server killed in between leaves a
// terminating namespace that still holds objects, and nothing would delete them. At start, as a
// namespace controller that restarts resyncs every terminating namespace, each one's content is
// deleted (pods gracefully, as at the first delete) and the emptied ones go. In name order, so
// that the writes come out the same every time.
func (s *Server) resumeNamespaceDeletions() error {
	res := s.store.resource("namespaces")
	return s.store.locked(func() error {
		for _, e := range s.store.list(res, "") {
			if e.obj.(*corev1.Namespace).Status.Phase != corev1.NamespaceTerminating {
				continue
			}
			if err := s.deleteNamespaceContent(e.meta().GetName()); err != nil {
				return err
			}
		}
		return s.finalizeNamespaces()
	})
}

// finalizeNamespaces finishes the deletion of every terminating namespace that holds nothing any
// more: the namespace controller removes the "kubernetes" finalizer through the finalize
// subresource and then deletes the namespace, which goes at once. It runs before every request
// and after it, and at each expiry sweep. The caller holds the store lock.
func (s *Server) finalizeNamespaces() error {
	res := s.store.resource("namespaces")
	if !s.anyTerminating(res) {
		s.store.terminating.Store(false)
		return nil
	}
	for _, e := range s.store.list(res, "") { // in name order, so that replays write alike
		ns := e.obj.(*corev1.Namespace)
		if ns.Status.Phase != corev1.NamespaceTerminating || s.namespaceHasContent(ns.Name) {
			continue
		}
		if len(ns.Spec.Finalizers) > 0 {
			next := ns.DeepCopy()
			var kept []corev1.FinalizerName
			for _, f := range next.Spec.Finalizers {
				if f != corev1.FinalizerKubernetes {
					kept = append(kept, f)
				}
			}
			next.Spec.Finalizers = kept
			var err error
			if e, err = s.store.commit(res, watch.Modified, next, e); err != nil {
				return err
			}
			if len(kept) > 0 {
				continue // another finalizer's owner removes its own
			}
		}
		if len(e.meta().GetFinalizers()) > 0 {
			continue
		}
		if _, err := s.store.commit(res, watch.Deleted, e.obj.DeepCopyObject(), e); err != nil {
			return err
		}
	}
	return nil
}

// anyTerminating reports whether a namespace is terminating. The caller holds the store lock.
func (s *Server) anyTerminating(res *resource) bool {
	for _, e := range s.store.buckets[res.name].objects {
		if e.obj.(*corev1.Namespace).Status.Phase == corev1.NamespaceTerminating {
			return true
		}
	}
	return false
}

// finalizeNow finishes the namespaces a request emptied, as the namespace controller would
// shortly after it, so that a client waiting for one to go sees it go.
func (s *Server) finalizeNow() {
	if !s.store.terminating.Load() {
		return // the common case, checked at every request without the lock
	}
	_ = s.store.locked(s.finalizeNamespaces)
}

// namespaceHasContent reports whether any namespaced object is left in namespace. The caller
// holds the store lock.
func (s *Server) namespaceHasContent(namespace string) bool {
	for _, res := range s.store.resources {
		if res.namespaced && !res.view && len(s.store.list(res, namespace)) > 0 {
			return true
		}
	}
	return false
}

// resource returns the store's descriptor of the stored resource named name.
func (st *store) resource(name string) *resource {
	for _, res := range st.resources {
		if res.name == name && !res.view {
			return res
		}
	}
	panic("fakeapiserver: no resource " + name)
}
