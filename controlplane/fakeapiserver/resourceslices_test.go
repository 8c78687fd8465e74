package fakeapiserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

func slice(node, driver string, devices ...string) *resourcev1.ResourceSlice {
	s := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{GenerateName: node + "-" + driver + "-"},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   driver,
			Pool:     resourcev1.ResourcePool{Name: node, ResourceSliceCount: 1},
			NodeName: ptr.To(node),
		},
	}
	for _, d := range devices {
		s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: d})
	}
	return s
}

// TestResourceSlices is a DRA driver's publishing and the kubelet's wipe: slices are created
// with a generated name and generation 1, a change of the spec counts a generation, and a DELETE
// of the collection selected by spec.nodeName and spec.driver removes that driver's slices of the
// node and nothing else.
func TestResourceSlices(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	api := f.client.ResourceV1().ResourceSlices()
	var names []string
	for _, s := range []*resourcev1.ResourceSlice{
		slice("node-1", "gpu.example.com", "gpu-0", "gpu-1"),
		slice("node-1", "nic.example.com", "nic-0"),
		slice("node-2", "gpu.example.com", "gpu-0"),
	} {
		created, err := api.Create(ctx, s, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("Create(%s) = %v", s.GenerateName, err)
		}
		if !strings.HasPrefix(created.Name, s.GenerateName) || created.Generation != 1 || created.Namespace != "" {
			t.Errorf("Create(%s) = name %q generation %d namespace %q, want a generated name, generation 1, no namespace",
				s.GenerateName, created.Name, created.Generation, created.Namespace)
		}
		names = append(names, created.Name)
	}

	got, err := api.Get(ctx, names[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Spec.Devices = append(got.Spec.Devices, resourcev1.Device{Name: "gpu-2"})
	if got, err = api.Update(ctx, got, metav1.UpdateOptions{}); err != nil || got.Generation != 2 {
		t.Errorf("Update(devices) = generation %d, %v, want 2", got.GetGeneration(), err)
	}
	got.Labels = map[string]string{"a": "b"}
	if got, err = api.Update(ctx, got, metav1.UpdateOptions{}); err != nil || got.Generation != 2 {
		t.Errorf("Update(labels) = generation %d, %v, want 2 kept", got.GetGeneration(), err)
	}
	got.Spec.Driver = "other.example.com"
	if _, err := api.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.driver: Invalid value: \"other.example.com\": field is immutable") {
		t.Errorf("Update(driver) = %v, want spec.driver immutable", err)
	}

	list := func(sel fields.Set) []string {
		t.Helper()
		l, err := api.List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
		if err != nil {
			t.Fatalf("List(%s) = %v", sel, err)
		}
		var out []string
		for _, s := range l.Items {
			out = append(out, s.Name)
		}
		return out
	}
	sel := fields.Set{resourcev1.ResourceSliceSelectorNodeName: "node-1", resourcev1.ResourceSliceSelectorDriver: "gpu.example.com"}
	if diff := cmp.Diff(names[:1], list(sel)); diff != "" {
		t.Errorf("List(node-1, gpu) (-want +got):\n%s", diff)
	}
	if err := api.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: sel.String()}); err != nil {
		t.Fatalf("DeleteCollection(%s) = %v", sel, err)
	}
	if diff := cmp.Diff(names[1:], list(nil)); diff != "" {
		t.Errorf("after the wipe (-want +got):\n%s", diff)
	}
	// A wipe of every driver's slices of the node, as the kubelet makes at start.
	if err := api.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector(resourcev1.ResourceSliceSelectorNodeName, "node-1").String()}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(names[2:], list(nil)); diff != "" {
		t.Errorf("after the wipe of node-1 (-want +got):\n%s", diff)
	}

	_, err = api.List(ctx, metav1.ListOptions{FieldSelector: "spec.pool.name=node-1"})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("List(spec.pool.name) = %v, want BadRequest", err)
	}
}

// TestResourceSliceValidation checks the errors ValidateResourceSlice gives a driver's mistakes.
func TestResourceSliceValidation(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		change func(*resourcev1.ResourceSlice)
		want   []string
	}{
		{"no node choice", func(s *resourcev1.ResourceSlice) { s.Spec.NodeName = nil }, []string{
			"spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"}},
		{"two node choices", func(s *resourcev1.ResourceSlice) { s.Spec.AllNodes = ptr.To(true) }, []string{
			"spec: Invalid value: \"{`nodeName`, `allNodes`}\": exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"}},
		{"driver and pool", func(s *resourcev1.ResourceSlice) {
			s.Spec.Driver = "Not_A_Name"
			s.Spec.Pool = resourcev1.ResourcePool{Name: "a/B", Generation: -1}
		}, []string{
			`spec.driver: Invalid value: "Not_A_Name": a lowercase RFC 1123 subdomain`,
			`spec.pool.name: Invalid value: "B": a lowercase RFC 1123 subdomain`,
			`spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero`,
			`spec.pool.generation: Invalid value: -1: must be greater than or equal to zero`}},
		{"devices", func(s *resourcev1.ResourceSlice) {
			s.Spec.Devices = []resourcev1.Device{{Name: "gpu.0"}, {Name: "gpu-1", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"gpu.example.com/model": {}, "bad-name": {IntValue: ptr.To[int64](1)},
			}}, {Name: "gpu-1"}}
		}, []string{
			`spec.devices[0].name: Invalid value: "gpu.0": must not contain dots`,
			`spec.devices[1].attributes[bad-name]: Invalid value: "bad-name": a valid C identifier`,
			`spec.devices[1].attributes[gpu.example.com/model]: Invalid value: "": exactly one value must be specified`,
			`spec.devices[2]: Duplicate value: "gpu-1"`}},
		{"too many devices", func(s *resourcev1.ResourceSlice) {
			s.Spec.Devices = make([]resourcev1.Device, 129)
		}, []string{"spec.devices: Too many: 129: must have at most 128 items"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := slice("node-1", "gpu.example.com", "gpu-0")
			tc.change(s)
			_, err := f.client.ResourceV1().ResourceSlices().Create(ctx, s, metav1.CreateOptions{})
			if !apierrors.IsInvalid(err) {
				t.Fatalf("Create() = %v, want Invalid", err)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Create() = %v\nwant it to contain %s", err, want)
				}
			}
		})
	}
}
