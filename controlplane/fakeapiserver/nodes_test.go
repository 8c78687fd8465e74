package fakeapiserver_test

import (
	"context"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// TestNodeRegistration follows the kubelet's node status manager: register the Node with its
// status, then patch the status, while spec updates leave the status alone.
func TestNodeRegistration(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	nodes := f.client.CoreV1().Nodes()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"kubernetes.io/hostname": "node-1"}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady"},
		}},
	}
	created, err := nodes.Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("Create(node) = %v", err)
	}
	if created.Namespace != "" || len(created.Status.Conditions) != 1 {
		t.Errorf("Create(node) = namespace %q, %d conditions, want cluster-scoped with the status kept", created.Namespace, len(created.Status.Conditions))
	}
	if _, err := nodes.Create(ctx, node, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("Create(node again) = %v, want AlreadyExists", err)
	}
	patch := `{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}]}}`
	patched, err := nodes.Patch(ctx, "node-1", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatalf("Patch(node status) = %v", err)
	}
	if c := patched.Status.Conditions; len(c) != 1 || c[0].Status != corev1.ConditionTrue {
		t.Errorf("Patch(node status) conditions = %v, want Ready True", c)
	}
	patched.Spec.Unschedulable = true
	patched.Status.Conditions = nil
	updated, err := nodes.Update(ctx, patched, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("Update(node) = %v", err)
	}
	if !updated.Spec.Unschedulable || len(updated.Status.Conditions) != 1 {
		t.Errorf("Update(node) = unschedulable %v, %d conditions, want true and the status kept", updated.Spec.Unschedulable, len(updated.Status.Conditions))
	}
	list, err := nodes.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=node-1"})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("List(nodes) = %d items, %v, want 1", len(list.Items), err)
	}
	if err := nodes.Delete(ctx, "node-1", metav1.DeleteOptions{}); err != nil {
		t.Errorf("Delete(node) = %v", err)
	}
	if len(f.trace.Events()) != 0 {
		t.Errorf("node writes traced %v, want no trace events", f.trace.Events())
	}
}

func TestLease(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	leases := f.client.CoordinationV1().Leases("kube-node-lease")
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1"), LeaseDurationSeconds: ptr.To[int32](40)},
	}
	if _, err := leases.Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatalf("Create(lease) = %v", err)
	}
	got, err := leases.Get(ctx, "node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Get(lease) = %v", err)
	}
	renew := metav1.NewMicroTime(start)
	got.Spec.RenewTime = &renew
	updated, err := leases.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("Update(lease) = %v", err)
	}
	if updated.Spec.RenewTime == nil || !updated.Spec.RenewTime.Equal(&renew) {
		t.Errorf("Update(lease) renewTime = %v, want %v", updated.Spec.RenewTime, renew)
	}
	if _, err := leases.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("Update(stale lease) = %v, want Conflict", err)
	}
}
