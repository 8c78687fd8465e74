package sampleplugin

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

func TestDeviceAnswers(t *testing.T) {
	d, err := NewDevice(DeviceOptions{Dir: "/dp", Resource: "example.com/gpu", Count: 3, PreferredAllocation: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Endpoint() != "/dp/example-com-gpu.sock" {
		t.Errorf("endpoint = %s", d.Endpoint())
	}
	pref, err := d.GetPreferredAllocation(context.Background(), &pluginapi.PreferredAllocationRequest{ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{{
		AvailableDeviceIDs: []string{"gpu-0", "gpu-2", "gpu-1"}, AllocationSize: 2,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"gpu-2", "gpu-1"}, pref.ContainerResponses[0].DeviceIDs); diff != "" {
		t.Errorf("preference (-want +got):\n%s", diff)
	}
	resp, err := d.Allocate(context.Background(), &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"gpu-1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.ContainerResponses[0].Envs["EXAMPLE_COM_GPU"]; got != "gpu-1" {
		t.Errorf("env = %q", got)
	}
	if err := d.SetHealth(false, "gpu-1"); err != nil {
		t.Fatal(err)
	}
	if err := d.SetHealth(false, "nope"); err == nil {
		t.Error("unknown device accepted")
	}
	var health []string
	for _, dev := range d.snapshot() {
		health = append(health, dev.ID+" "+dev.Health)
	}
	if diff := cmp.Diff([]string{"gpu-0 Healthy", "gpu-1 Unhealthy", "gpu-2 Healthy"}, health); diff != "" {
		t.Errorf("devices (-want +got):\n%s", diff)
	}
	if _, err := NewDevice(DeviceOptions{Dir: "/dp", Resource: "example.com/gpu"}); err == nil {
		t.Error("count 0 accepted")
	}
}
