package apidefaults

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestQOSClass(t *testing.T) {
	cm := func(cpu, mem string) v1.ResourceList {
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
		{"requests only", v1.ResourceRequirements{Requests: cm("100m", "")}, v1.PodQOSBurstable},
		{"equal requests and limits", v1.ResourceRequirements{Requests: cm("1", "1Gi"), Limits: cm("1", "1Gi")}, v1.PodQOSGuaranteed},
		{"limits above requests", v1.ResourceRequirements{Requests: cm("1", "1Gi"), Limits: cm("2", "1Gi")}, v1.PodQOSBurstable},
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

// TestQOSClassPodLevel checks ComputePodQOS with PodLevelResources on: spec.resources, when set,
// decides alone, and the status's class wins over both (GetPodQOS).
func TestQOSClassPodLevel(t *testing.T) {
	guaranteedContainer := v1.ResourceRequirements{Requests: rl("cpu", "1", "memory", "1Gi"), Limits: rl("cpu", "1", "memory", "1Gi")}
	tests := []struct {
		name      string
		pod       *v1.ResourceRequirements
		container v1.ResourceRequirements
		status    v1.PodQOSClass
		want      v1.PodQOSClass
	}{
		{"pod-level requests equal limits", &v1.ResourceRequirements{Requests: rl("cpu", "2", "memory", "2Gi"), Limits: rl("cpu", "2", "memory", "2Gi")}, v1.ResourceRequirements{}, "", v1.PodQOSGuaranteed},
		{"pod-level requests below limits", &v1.ResourceRequirements{Requests: rl("cpu", "1", "memory", "2Gi"), Limits: rl("cpu", "2", "memory", "2Gi")}, v1.ResourceRequirements{}, "", v1.PodQOSBurstable},
		{"pod-level cpu limit only", &v1.ResourceRequirements{Requests: rl("cpu", "2"), Limits: rl("cpu", "2")}, v1.ResourceRequirements{}, "", v1.PodQOSBurstable},
		{"pod-level requests only", &v1.ResourceRequirements{Requests: rl("cpu", "1")}, guaranteedContainer, "", v1.PodQOSBurstable},
		{"empty pod-level resources ignore the containers", &v1.ResourceRequirements{}, guaranteedContainer, "", v1.PodQOSBestEffort},
		{"containers decide without pod-level resources", nil, guaranteedContainer, "", v1.PodQOSGuaranteed},
		{"the status's class wins", nil, v1.ResourceRequirements{}, v1.PodQOSBurstable, v1.PodQOSBurstable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{Resources: tc.pod, Containers: []v1.Container{{Name: "a", Image: "busybox", Resources: tc.container}}}}
			pod.Status.QOSClass = tc.status
			if got := QOSClass(pod); got != tc.want {
				t.Errorf("QOSClass = %s, want %s", got, tc.want)
			}
		})
	}
}
