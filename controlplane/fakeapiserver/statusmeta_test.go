package fakeapiserver_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// TestNodeStatusWritesMetadata checks the node status strategy: a patch of nodes/status changes
// the labels and annotations it carries with the status (the kubelet's CSI node info writes its
// node id annotation so, through nodeutil.PatchNodeStatus), but never the spec.
func TestNodeStatusWritesMetadata(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	nodes := f.client.CoreV1().Nodes()
	if _, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := `{"metadata":{"annotations":{"csi.volume.kubernetes.io/nodeid":"{\"d\":\"id\"}"},"labels":{"zone":"z1"}},"spec":{"unschedulable":true},"status":{"capacity":{"cpu":"4"}}}`
	got, err := nodes.Patch(ctx, "node-1", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatalf("Patch(nodes/status) = %v", err)
	}
	if got.Annotations["csi.volume.kubernetes.io/nodeid"] != `{"d":"id"}` || got.Labels["zone"] != "z1" {
		t.Errorf("metadata after the status patch = %v %v, want the annotation and label written", got.Annotations, got.Labels)
	}
	if got.Spec.Unschedulable {
		t.Errorf("spec.unschedulable written through nodes/status")
	}
	if cpu := got.Status.Capacity[corev1.ResourceCPU]; cpu.String() != "4" {
		t.Errorf("capacity cpu = %s, want 4", cpu.String())
	}
}
