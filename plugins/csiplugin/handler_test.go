package csiplugin

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/minikubelet/minikubelet/sim/trace"
)

type fakeDriver struct {
	info NodeInfo
	err  error
}

func (d fakeDriver) NodeGetInfo(context.Context, string) (NodeInfo, error) { return d.info, d.err }

func TestValidateVersions(t *testing.T) {
	h, _ := newHandler(t, fakeDriver{})
	for _, tc := range []struct {
		versions []string
		want     string // the version, or a part of the error
	}{
		{[]string{"1.0.0"}, "1.0.0"},
		{[]string{"0.3.0", "1.2.0", "1.10.0", "2.0.0"}, "1.10.0"},
		{[]string{"v1.5"}, "1.5"},
		{nil, `kubernetes.io/csi: ValidatePlugin for CSI driver "d" failed. Plugin returned an empty list for supported versions`},
		{[]string{"2.0.0"}, `kubernetes.io/csi: ValidatePlugin for CSI driver "d" failed. None of the versions specified ["2.0.0"] are supported.`},
		{[]string{"not-a-version"}, "None of the versions specified"},
	} {
		v, err := h.validateVersions("ValidatePlugin", "d", "/e", tc.versions)
		if err != nil {
			if !errors.Is(err, ErrValidation) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: err = %v, want ErrValidation containing %q", tc.versions, err, tc.want)
			}
			continue
		}
		if v.String() != tc.want {
			t.Errorf("%v: %v, want %s", tc.versions, v, tc.want)
		}
	}
	if err := h.ValidatePlugin("d", "/e", nil); err == nil || !strings.HasPrefix(err.Error(), "validation failed for CSI Driver d at endpoint /e: kubernetes.io/csi: ") {
		t.Errorf("ValidatePlugin() = %v", err)
	}
}

func newHandler(t *testing.T, d NodeInfoGetter) (*Handler, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}})
	h, err := New(Options{Nodes: APINodeInfo{Client: client, NodeName: "node-1"}, Driver: d, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	return h, client
}

func TestRegisterInstallsAndDeRegisterUninstalls(t *testing.T) {
	ctx := context.Background()
	h, client := newHandler(t, fakeDriver{info: NodeInfo{NodeID: "node-1-id", MaxVolumesPerNode: 16, Topology: map[string]string{"topology.example.csi.k8s.io/zone": "z1"}}})
	const name = "example.csi.k8s.io"
	if err := h.ValidatePlugin(name, "/csi/csi.sock", []string{"1.0.0"}); err != nil {
		t.Fatal(err)
	}
	if err := h.RegisterPlugin(name, "/csi/csi.sock", []string{"1.0.0"}, nil); err != nil {
		t.Fatal(err)
	}
	node, err := client.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := node.Annotations[AnnotationKeyNodeID]; got != `{"example.csi.k8s.io":"node-1-id"}` {
		t.Errorf("annotation = %q", got)
	}
	if got := node.Labels["topology.example.csi.k8s.io/zone"]; got != "z1" {
		t.Errorf("topology label = %q", got)
	}
	cn, err := client.StorageV1().CSINodes().Get(ctx, "node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	count := int32(16)
	want := []storagev1.CSINodeDriver{{Name: name, NodeID: "node-1-id", TopologyKeys: []string{"topology.example.csi.k8s.io/zone"}, Allocatable: &storagev1.VolumeNodeResources{Count: &count}}}
	if diff := cmp.Diff(want, cn.Spec.Drivers); diff != "" {
		t.Errorf("CSINode drivers (-want +got):\n%s", diff)
	}
	if len(cn.OwnerReferences) != 1 || cn.OwnerReferences[0].UID != "node-uid" {
		t.Errorf("owner = %v", cn.OwnerReferences)
	}
	// The same version again is refused while the driver is registered.
	if err := h.ValidatePlugin(name, "/csi/csi.sock", []string{"1.0.0"}); !errors.Is(err, ErrValidation) {
		t.Errorf("same version again: err = %v", err)
	}
	if err := h.ValidatePlugin(name, "/csi/csi.sock", []string{"1.1.0"}); err != nil {
		t.Errorf("newer version: %v", err)
	}

	h.DeRegisterPlugin(name, "/csi/csi.sock")
	node, _ = client.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
	if _, ok := node.Annotations[AnnotationKeyNodeID]; ok {
		t.Errorf("annotation left: %v", node.Annotations)
	}
	cn, _ = client.StorageV1().CSINodes().Get(ctx, "node-1", metav1.GetOptions{})
	if len(cn.Spec.Drivers) != 0 {
		t.Errorf("CSINode drivers left: %v", cn.Spec.Drivers)
	}
	if len(h.Drivers()) != 0 {
		t.Errorf("drivers left: %v", h.Drivers())
	}
}

func TestRegisterFailureForgetsDriver(t *testing.T) {
	h, _ := newHandler(t, fakeDriver{err: errors.New("unavailable")})
	err := h.RegisterPlugin("example.csi.k8s.io", "/csi/csi.sock", []string{"1.0.0"}, nil)
	if err == nil || err.Error() != "unavailable" {
		t.Fatalf("err = %v", err)
	}
	if len(h.Drivers()) != 0 {
		t.Errorf("driver kept after a failed registration: %v", h.Drivers())
	}
}

// TestTopologyCollision: a driver that reports another value for a topology label the node has is
// not installed, with v1.35's message, and the label keeps its value.
func TestTopologyCollision(t *testing.T) {
	ctx := context.Background()
	h, client := newHandler(t, fakeDriver{info: NodeInfo{NodeID: "id", Topology: map[string]string{"zone": "b"}}})
	node, err := client.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Labels = map[string]string{"zone": "a"}
	if _, err := client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = h.RegisterPlugin("d", "/csi/csi.sock", []string{"1.0.0"}, nil)
	if err == nil || !strings.HasSuffix(err.Error(), `detected topology value collision: driver reported "zone":"b" but existing label is "zone":"a"`) {
		t.Errorf("RegisterPlugin = %v", err)
	}
	node, _ = client.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
	if node.Labels["zone"] != "a" {
		t.Errorf("zone label = %q", node.Labels["zone"])
	}
}
