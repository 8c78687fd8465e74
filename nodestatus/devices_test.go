package nodestatus

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// fakeDevices answers GetCapacity with what the test sets.
type fakeDevices struct {
	capacity, allocatable v1.ResourceList
	removed               []string
}

func (d *fakeDevices) GetCapacity() (v1.ResourceList, v1.ResourceList, []string) {
	return d.capacity, d.allocatable, d.removed
}

func qty(n int64) resource.Quantity { return *resource.NewQuantity(n, resource.DecimalSI) }

// Device plugin resources reach the node at registration and on every status update; a removed
// resource stays in capacity as 0 and in allocatable as 0.
func TestDevicePluginResources(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	client := &fakeClient{clk: clk}
	gpu := v1.ResourceName("example.com/gpu")
	devs := &fakeDevices{capacity: v1.ResourceList{gpu: qty(4)}, allocatable: v1.ResourceList{gpu: qty(3)}}
	s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: &fakeState{}, Jitter: noJitter(), Devices: devs})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string, wantCap, wantAlloc int64) {
		t.Helper()
		c, a := client.node.Status.Capacity[gpu], client.node.Status.Allocatable[gpu]
		if c.Value() != wantCap || a.Value() != wantAlloc {
			t.Errorf("%s: capacity %s allocatable %s, want %d and %d", when, c.String(), a.String(), wantCap, wantAlloc)
		}
		if cpu := client.node.Status.Capacity[v1.ResourceCPU]; cpu.String() != "4" {
			t.Errorf("%s: cpu capacity %s", when, cpu.String())
		}
	}
	drive(t, s, clk, time.Second)
	check("registration", 4, 3)
	devs.capacity, devs.allocatable, devs.removed = v1.ResourceList{}, v1.ResourceList{}, []string{string(gpu)}
	drive(t, s, clk, 11*time.Second)
	check("removed", 0, 0)
}
