package fakeapiserver_test

import (
	"context"
	"strings"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// The CSI node info manager's writes: create the node's CSINode, add a driver, list it.
func TestCSINode(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	api := f.client.StorageV1().CSINodes()
	count := int32(8)
	cn := &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{
			Name: "example.csi.k8s.io", NodeID: "n1", TopologyKeys: []string{"topology.example.csi.k8s.io/zone"},
			Allocatable: &storagev1.VolumeNodeResources{Count: &count},
		}}},
	}
	created, err := api.Create(ctx, cn, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("Create(csinode) = %v", err)
	}
	if created.Namespace != "" || created.UID == "" {
		t.Errorf("Create(csinode) = namespace %q uid %q, want cluster-scoped with a UID", created.Namespace, created.UID)
	}
	created.Spec.Drivers = append(created.Spec.Drivers, storagev1.CSINodeDriver{Name: "other.csi.k8s.io", NodeID: "n1"})
	if _, err := api.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("Update(csinode) = %v", err)
	}
	list, err := api.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || len(list.Items[0].Spec.Drivers) != 2 {
		t.Fatalf("List(csinodes) = %v, %v, want one CSINode with two drivers", list, err)
	}

	bad := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "node-2"}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
		{Name: "a.csi.k8s.io", NodeID: ""}, {Name: "a.csi.k8s.io", NodeID: strings.Repeat("x", 193)},
	}}}
	_, err = api.Create(ctx, bad, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("Create(invalid csinode) = %v, want Invalid", err)
	}
	for _, want := range []string{"spec.drivers[0].nodeID: Required", "spec.drivers[1].name: Duplicate", "spec.drivers[1].nodeID: Invalid"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
