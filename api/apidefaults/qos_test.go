package apidefaults

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestQOSClass(t *testing.T) {
	rl := func(cpu, mem string) v1.ResourceList {
		l := v1.ResourceList{}
		if cpu != "" {
			l[v1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			l[v1.ResourceMemory] = resource.MustParse(mem)
		}
		return l
	}
	tests := []struct {
		name string
		res  v1.ResourceRequirements
		want v1.PodQOSClass
	}{
		{"none", v1.ResourceRequirements{}, v1.PodQOSBestEffort},
		{"requests only", v1.ResourceRequirements{Requests: rl("100m", "")}, v1.PodQOSBurstable},
		{"equal requests and limits", v1.ResourceRequirements{Requests: rl("1", "1Gi"), Limits: rl("1", "1Gi")}, v1.PodQOSGuaranteed},
		{"limits above requests", v1.ResourceRequirements{Requests: rl("1", "1Gi"), Limits: rl("2", "1Gi")}, v1.PodQOSBurstable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a", Image: "busybox", Resources: tc.res}}}}
			if got := QOSClass(pod); got != tc.want {
				t.Errorf("QOSClass(%v) = %s, want %s", tc.res, got, tc.want)
			}
		})
	}
}
