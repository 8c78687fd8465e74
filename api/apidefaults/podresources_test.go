package apidefaults

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// rl builds a resource list from name and quantity pairs.
func rl(pairs ...string) v1.ResourceList {
	l := v1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		l[v1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return l
}

// TestPodLevelResourcesDefaulting checks defaultHugePagePodLimits and defaultPodRequests case by
// case against v1.35's pkg/apis/core/v1/defaults.go.
func TestPodLevelResourcesDefaulting(t *testing.T) {
	tests := []struct {
		name       string
		pod        v1.ResourceRequirements
		containers []v1.ResourceRequirements
		init       []v1.ResourceRequirements
		want       *v1.ResourceRequirements
	}{
		{
			name:       "no pod-level resources: nothing",
			containers: []v1.ResourceRequirements{{Limits: rl("cpu", "1")}},
			want:       nil,
		},
		{
			name:       "pod-level limits alone: requests equal them",
			pod:        v1.ResourceRequirements{Limits: rl("cpu", "2", "memory", "1Gi")},
			containers: []v1.ResourceRequirements{{}},
			want:       &v1.ResourceRequirements{Limits: rl("cpu", "2", "memory", "1Gi"), Requests: rl("cpu", "2", "memory", "1Gi")},
		},
		{
			name:       "container requests win over the pod limit",
			pod:        v1.ResourceRequirements{Limits: rl("cpu", "2", "memory", "1Gi")},
			containers: []v1.ResourceRequirements{{Requests: rl("cpu", "500m")}, {Requests: rl("cpu", "250m")}},
			want:       &v1.ResourceRequirements{Limits: rl("cpu", "2", "memory", "1Gi"), Requests: rl("cpu", "750m", "memory", "1Gi")},
		},
		{
			name:       "container limits count as container requests",
			pod:        v1.ResourceRequirements{Limits: rl("cpu", "2")},
			containers: []v1.ResourceRequirements{{Limits: rl("cpu", "1", "memory", "100Mi")}},
			want:       &v1.ResourceRequirements{Limits: rl("cpu", "2"), Requests: rl("cpu", "1", "memory", "100Mi")},
		},
		{
			name:       "the init peak counts",
			pod:        v1.ResourceRequirements{Limits: rl("cpu", "4")},
			containers: []v1.ResourceRequirements{{Requests: rl("cpu", "1")}},
			init:       []v1.ResourceRequirements{{Requests: rl("cpu", "3")}},
			want:       &v1.ResourceRequirements{Limits: rl("cpu", "4"), Requests: rl("cpu", "3")},
		},
		{
			name:       "a pod-level request set stays",
			pod:        v1.ResourceRequirements{Limits: rl("cpu", "2"), Requests: rl("cpu", "1")},
			containers: []v1.ResourceRequirements{{}},
			want:       &v1.ResourceRequirements{Limits: rl("cpu", "2"), Requests: rl("cpu", "1")},
		},
		{
			name:       "requests alone: no defaulting",
			pod:        v1.ResourceRequirements{Requests: rl("cpu", "1")},
			containers: []v1.ResourceRequirements{{Requests: rl("memory", "1Gi")}},
			want:       &v1.ResourceRequirements{Requests: rl("cpu", "1")},
		},
		{
			name:       "hugepages: the container limit becomes the pod's, and its request",
			pod:        v1.ResourceRequirements{Limits: rl("cpu", "1")},
			containers: []v1.ResourceRequirements{{Limits: rl("hugepages-2Mi", "4Mi")}},
			want:       &v1.ResourceRequirements{Limits: rl("cpu", "1", "hugepages-2Mi", "4Mi"), Requests: rl("cpu", "1", "hugepages-2Mi", "4Mi")},
		},
		{
			name:       "extended resources are not pod-level",
			pod:        v1.ResourceRequirements{Limits: rl("cpu", "1")},
			containers: []v1.ResourceRequirements{{Limits: rl("example.com/gpu", "1")}},
			want:       &v1.ResourceRequirements{Limits: rl("cpu", "1"), Requests: rl("cpu", "1")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{}
			if tc.pod.Limits != nil || tc.pod.Requests != nil {
				pod.Spec.Resources = tc.pod.DeepCopy()
			}
			for i, r := range tc.containers {
				pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: "c" + string(rune('0'+i)), Image: "busybox:1.36", Resources: r})
			}
			for i, r := range tc.init {
				pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: "i" + string(rune('0'+i)), Image: "busybox:1.36", Resources: r})
			}
			SetPodDefaults(pod)
			if diff := cmp.Diff(tc.want, pod.Spec.Resources, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("spec.resources (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHTTPGetDefaults checks SetDefaults_HTTPGetAction on every handler that has one: probes
// and lifecycle hooks default path "/" and scheme HTTP, and keep what is set.
func TestHTTPGetDefaults(t *testing.T) {
	const manifest = `
spec:
  containers:
  - name: app
    image: nginx:1.27
    livenessProbe: {httpGet: {port: 80}}
    readinessProbe: {httpGet: {port: 80, path: /ready, scheme: HTTPS}}
    startupProbe: {httpGet: {port: 80}}
    lifecycle:
      postStart: {httpGet: {port: 8080}}
      preStop: {httpGet: {port: 8080, path: /stop}}
  initContainers:
  - name: proxy
    image: envoy:1
    restartPolicy: Always
    readinessProbe: {httpGet: {port: 9901}}
`
	var pod v1.Pod
	if err := yaml.UnmarshalStrict([]byte(manifest), &pod); err != nil {
		t.Fatal(err)
	}
	SetPodDefaults(&pod)
	app, proxy := pod.Spec.Containers[0], pod.Spec.InitContainers[0]
	got := map[string]*v1.HTTPGetAction{
		"liveness": app.LivenessProbe.HTTPGet, "readiness": app.ReadinessProbe.HTTPGet, "startup": app.StartupProbe.HTTPGet,
		"postStart": app.Lifecycle.PostStart.HTTPGet, "preStop": app.Lifecycle.PreStop.HTTPGet, "sidecar readiness": proxy.ReadinessProbe.HTTPGet,
	}
	want := map[string][2]string{
		"liveness": {"/", "HTTP"}, "readiness": {"/ready", "HTTPS"}, "startup": {"/", "HTTP"},
		"postStart": {"/", "HTTP"}, "preStop": {"/stop", "HTTP"}, "sidecar readiness": {"/", "HTTP"},
	}
	for name, h := range got {
		if w := want[name]; h.Path != w[0] || string(h.Scheme) != w[1] {
			t.Errorf("%s httpGet path %q scheme %q, want %q %q", name, h.Path, h.Scheme, w[0], w[1])
		}
	}
}
