package fakeapiserver_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// TestNamespaceLifecycle follows a namespace through client-go: the system namespaces exist at
// start; a new one is Active with the kubernetes finalizer and the name label; a pod in a
// missing namespace is refused with NotFound for the namespace; deleting the namespace makes it
// Terminating, deletes its pods gracefully, and removes it once its last pod is gone, which a
// watch sees in the namespace controller's order.
func TestNamespaceLifecycle(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	nss := f.client.CoreV1().Namespaces()
	list, err := nss.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ns := range list.Items {
		names = append(names, ns.Name)
	}
	if diff := cmp.Diff([]string{"default", "kube-node-lease", "kube-public", "kube-system"}, names); diff != "" {
		t.Errorf("namespaces at start (-want +got):\n%s", diff)
	}

	_, err = f.client.CoreV1().Pods("team").Create(ctx, newPod("team", "web", ""), metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `namespaces "team" not found` {
		t.Errorf("create a pod in a missing namespace = %v, want namespaces \"team\" not found", err)
	}

	ns, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Status.Phase != corev1.NamespaceActive || ns.Labels[corev1.LabelMetadataName] != "team" ||
		len(ns.Spec.Finalizers) != 1 || ns.Spec.Finalizers[0] != corev1.FinalizerKubernetes {
		t.Errorf("created namespace = %+v, want Active, labelled, with the kubernetes finalizer", ns)
	}
	if _, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "Not_A_Label"}}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("create namespace Not_A_Label = %v, want Invalid", err)
	}
	f.createPod(t, newPod("team", "bound", "node-1"))
	f.createPod(t, newPod("team", "unbound", ""))

	w, err := nss.Watch(ctx, metav1.ListOptions{ResourceVersion: ns.ResourceVersion, FieldSelector: "metadata.name=team"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := nss.Delete(ctx, "team", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pods, err := f.client.CoreV1().Pods("team").List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != 1 || pods.Items[0].Name != "bound" || pods.Items[0].DeletionTimestamp == nil {
		t.Fatalf("pods of the terminating namespace = %v, %v, want only bound, being deleted", pods, err)
	}
	if err := nss.Delete(ctx, "team", metav1.DeleteOptions{}); err != nil {
		t.Errorf("delete the terminating namespace again = %v, want it answered with the namespace", err)
	}
	if _, err := nss.Get(ctx, "team", metav1.GetOptions{}); err != nil {
		t.Errorf("terminating namespace went before its pod: %v", err)
	}
	if err := f.client.CoreV1().Pods("team").Delete(ctx, "bound", *metav1.NewDeleteOptions(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := nss.Get(ctx, "team", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get namespace after its last pod went = %v, want NotFound", err)
	}

	type nsEvent struct {
		Type       watch.EventType
		Phase      corev1.NamespacePhase
		Finalizers int
	}
	var got []nsEvent
	for range 3 {
		ev := next(t, w)
		ns := ev.Object.(*corev1.Namespace)
		got = append(got, nsEvent{ev.Type, ns.Status.Phase, len(ns.Spec.Finalizers)})
	}
	want := []nsEvent{
		{watch.Modified, corev1.NamespaceTerminating, 1},
		{watch.Modified, corev1.NamespaceTerminating, 0},
		{watch.Deleted, corev1.NamespaceTerminating, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("watch of the namespace (-want +got):\n%s", diff)
	}
}
