package apidefaults

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestImagePullPolicyDefault(t *testing.T) {
	for _, tc := range []struct {
		image string
		want  v1.PullPolicy
	}{
		{"nginx", v1.PullAlways},
		{"nginx:latest", v1.PullAlways},
		{"nginx:1.27", v1.PullIfNotPresent},
		{"bar:bartag", v1.PullIfNotPresent},
		{"registry.k8s.io/pause:3.10", v1.PullIfNotPresent},
		{"localhost:5000/app", v1.PullAlways},
		{"localhost:5000/app:latest", v1.PullAlways},
		{"nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", v1.PullIfNotPresent},
		{"Nginx", v1.PullIfNotPresent}, // does not parse
	} {
		t.Run(strings.NewReplacer("/", "_").Replace(tc.image), func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: tc.image}}}}
			SetPodDefaults(pod)
			if got := pod.Spec.Containers[0].ImagePullPolicy; got != tc.want {
				t.Errorf("SetPodDefaults(image %q) imagePullPolicy = %q, want %q", tc.image, got, tc.want)
			}
		})
	}
}
