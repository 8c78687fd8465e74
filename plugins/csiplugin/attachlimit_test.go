package csiplugin

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestAttachLimitKey checks volumeutil.GetCSIAttachLimitKey's names, short and hashed.
func TestAttachLimitKey(t *testing.T) {
	if got := AttachLimitKey("example.csi.k8s.io"); got != "attachable-volumes-csi-example.csi.k8s.io" {
		t.Errorf("short name: %s", got)
	}
	long := "a-rather-long-driver-name.storage.example.com"
	got := string(AttachLimitKey(long))
	if !strings.HasPrefix(got, "attachable-volumes-csi-a-rather-long-driver-") || len(got) != len("attachable-volumes-csi-")+23+16 {
		t.Errorf("long name: %s (%d characters)", got, len(got))
	}
}

// TestInstallAndUninstallRemoveAttachLimit checks v1.35's removeMaxAttachLimit: the node resource
// an older kubelet published for the driver leaves capacity and allocatable at install, and a
// leftover one again at uninstall; other resources stay.
func TestInstallAndUninstallRemoveAttachLimit(t *testing.T) {
	ctx := context.Background()
	const name = "example.csi.k8s.io"
	key := AttachLimitKey(name)
	withLimit := func(n *v1.Node) {
		n.Status.Capacity = v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), key: resource.MustParse("16")}
		n.Status.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), key: resource.MustParse("16")}
	}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}}
	withLimit(node)
	client := fake.NewClientset(node)
	h, err := New(Options{Nodes: APINodeInfo{Client: client, NodeName: "node-1"}, Driver: fakeDriver{info: NodeInfo{NodeID: "id-1", MaxVolumesPerNode: 16}}, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		n, err := client.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := n.Status.Capacity[key]; ok {
			t.Errorf("%s: capacity still has %s", when, key)
		}
		if _, ok := n.Status.Allocatable[key]; ok {
			t.Errorf("%s: allocatable still has %s", when, key)
		}
		if cpu := n.Status.Capacity[v1.ResourceCPU]; cpu.String() != "4" {
			t.Errorf("%s: cpu capacity = %s, want 4 kept", when, cpu.String())
		}
	}
	if err := h.RegisterPlugin(name, "/csi/csi.sock", []string{"1.0.0"}, nil); err != nil {
		t.Fatal(err)
	}
	check("after install")
	n, _ := client.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
	withLimit(n)
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.DeRegisterPlugin(name, "/csi/csi.sock")
	check("after uninstall")
}
