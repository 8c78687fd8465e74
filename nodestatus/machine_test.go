package nodestatus

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestMachineResources(t *testing.T) {
	for _, tc := range []struct {
		name            string
		m               Machine
		wantCapacity    map[v1.ResourceName]int64 // cpu in millicores
		wantAllocatable map[v1.ResourceName]int64
	}{
		{
			// The default evictionHard holds back 100Mi of memory and 10% of the disk, the
			// percentage as the kubelet's float32: 10737418400 bytes.
			name:            "defaults",
			wantCapacity:    map[v1.ResourceName]int64{"cpu": 4000, "memory": 8 << 30, "ephemeral-storage": 100 << 30, "pods": 110},
			wantAllocatable: map[v1.ResourceName]int64{"cpu": 4000, "memory": 8<<30 - 100<<20, "ephemeral-storage": 100<<30 - 10737418400, "pods": 110},
		},
		{
			name: "reserved",
			m: Machine{
				Capacity: v1.ResourceList{"cpu": resource.MustParse("8"), "memory": resource.MustParse("16Gi")},
				MaxPods:  250, KubeReserved: v1.ResourceList{"cpu": resource.MustParse("500m"), "memory": resource.MustParse("1Gi")},
				SystemReserved: v1.ResourceList{"cpu": resource.MustParse("250m"), "ephemeral-storage": resource.MustParse("1Gi")},
			},
			wantCapacity: map[v1.ResourceName]int64{"cpu": 8000, "memory": 16 << 30, "ephemeral-storage": 100 << 30, "pods": 250},
			wantAllocatable: map[v1.ResourceName]int64{"cpu": 7250, "memory": 15<<30 - 100<<20,
				"ephemeral-storage": 99<<30 - 10737418400, "pods": 250},
		},
		{
			// Setting evictionHard replaces the defaults: no nodefs.available reservation.
			name:            "evictionHard replaces the defaults",
			m:               Machine{EvictionHard: map[string]string{"memory.available": "500Mi"}},
			wantCapacity:    map[v1.ResourceName]int64{"cpu": 4000, "memory": 8 << 30, "ephemeral-storage": 100 << 30, "pods": 110},
			wantAllocatable: map[v1.ResourceName]int64{"cpu": 4000, "memory": 8<<30 - 500<<20, "ephemeral-storage": 100 << 30, "pods": 110},
		},
		{
			name:            "merged with the defaults",
			m:               Machine{EvictionHard: map[string]string{"memory.available": "10%"}, MergeDefaultEvictionSettings: true},
			wantCapacity:    map[v1.ResourceName]int64{"cpu": 4000, "memory": 8 << 30, "ephemeral-storage": 100 << 30, "pods": 110},
			wantAllocatable: map[v1.ResourceName]int64{"cpu": 4000, "memory": 8<<30 - 858993472, "ephemeral-storage": 100<<30 - 10737418400, "pods": 110},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.m.Validate(); err != nil {
				t.Fatal(err)
			}
			capacity, allocatable := tc.m.Resources()
			for _, c := range []struct {
				got  v1.ResourceList
				want map[v1.ResourceName]int64
			}{{capacity, tc.wantCapacity}, {allocatable, tc.wantAllocatable}} {
				if len(c.got) != len(c.want) {
					t.Errorf("got %v, want %v", c.got, c.want)
				}
				for name, want := range c.want {
					q := c.got[name]
					got := q.Value()
					if name == v1.ResourceCPU {
						got = q.MilliValue()
					}
					if got != want {
						t.Errorf("%s = %d, want %d", name, got, want)
					}
				}
			}
		})
	}
}

func TestMachineValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Machine
		want string
	}{
		{name: "pods capacity", m: Machine{Capacity: v1.ResourceList{"pods": resource.MustParse("3")}}, want: "pods is maxPods"},
		{name: "unknown reservation", m: Machine{KubeReserved: v1.ResourceList{"example.com/gpu": resource.MustParse("1")}}, want: "can be reserved"},
		{name: "unknown signal", m: Machine{EvictionHard: map[string]string{"memory.free": "1Gi"}}, want: "unsupported eviction signal memory.free"},
		{name: "bad threshold", m: Machine{EvictionHard: map[string]string{"memory.available": "lots"}}, want: `evictionHard memory.available="lots"`},
		{name: "more reserved than there is", m: Machine{SystemReserved: v1.ResourceList{"cpu": resource.MustParse("5")}},
			want: `resource "cpu" has a reservation of 5 but capacity of 4`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.m.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
