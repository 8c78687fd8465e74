package staticpod

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestDecodePodValidation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*v1.Pod)
		want   string
	}{
		{"containerNameUpper", func(p *v1.Pod) { p.Spec.Containers[0].Name = "Web" },
			`spec.containers[0].name: Invalid value: "Web": a lowercase RFC 1123 label must consist of`},
		{"containerNameEmpty", func(p *v1.Pod) { p.Spec.Containers[0].Name = "" }, `spec.containers[0].name: Required value`},
		{"duplicateContainer", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "image", Image: "i"}}
		}, `spec.initContainers[0].name: Duplicate value: "image"`},
		{"noContainers", func(p *v1.Pod) { p.Spec.Containers = nil }, `spec.containers: Required value`},
		{"noImage", func(p *v1.Pod) { p.Spec.Containers[0].Image = "" }, `spec.containers[0].image: Required value`},
		{"restartPolicy", func(p *v1.Pod) { p.Spec.RestartPolicy = "Sometimes" },
			`spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"`},
		{"dnsPolicy", func(p *v1.Pod) { p.Spec.DNSPolicy = "Cluster" }, `spec.dnsPolicy: Unsupported value: "Cluster"`},
		{"dnsNoneWithoutConfig", func(p *v1.Pod) { p.Spec.DNSPolicy = v1.DNSNone }, "spec.dnsConfig: Required value"},
		{"port", func(p *v1.Pod) { p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 70000}} },
			`spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive`},
		{"negativeQuantity", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceCPU: resource.MustParse("-1")}
		}, `spec.containers[0].resources.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0`},
		{"requestOverLimit", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}
			p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceMemory: resource.MustParse("2Gi")}
		}, `spec.containers[0].resources.requests[memory]: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi`},
		{"ephemeral", func(p *v1.Pod) {
			p.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug", Image: "busybox"}}}
		}, "spec.ephemeralContainers: Forbidden: cannot be set on create"},
		{"namespace", func(p *v1.Pod) { p.Namespace = "Kube_System" }, `metadata.namespace: Invalid value: "Kube_System"`},
		{"invalidVolumeName", func(p *v1.Pod) {
			p.Spec.Volumes = []v1.Volume{{Name: "_INVALID_", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
		}, `spec.volumes[0].name: Invalid value: "_INVALID_"`},
		{"duplicateVolumeNames", func(p *v1.Pod) {
			ed := v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}
			p.Spec.Volumes = []v1.Volume{{Name: "repeated", VolumeSource: ed}, {Name: "repeated", VolumeSource: ed}}
		}, `spec.volumes[1].name: Duplicate value: "repeated"`},
		{"mountWithoutVolume", func(p *v1.Pod) {
			p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/data"}}
		}, `spec.containers[0].volumeMounts[0].name: Not found: "data"`},
		{"labels", func(p *v1.Pod) { p.Labels = map[string]string{"a b": "c"} }, `metadata.labels: Invalid value: "a b"`},
		{"initProbe", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "init", Image: "i", LivenessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{}}}}}
		}, "spec.initContainers[0].livenessProbe: Forbidden"},
		{"activeDeadline", func(p *v1.Pod) { d := int64(0); p.Spec.ActiveDeadlineSeconds = &d }, "spec.activeDeadlineSeconds: Invalid value: 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := fullySpecifiedPod()
			tc.mutate(pod)
			got, parsed, err := DecodePod(mustJSON(t, pod), Options{NodeName: "node1", Source: "f", IsFile: true})
			if !parsed || got != nil || !errors.Is(err, ErrInvalidPod) {
				t.Fatalf("DecodePod() = %v, parsed %v, err %v, want nil, parsed, ErrInvalidPod", got, parsed, err)
			}
			if !strings.HasPrefix(err.Error(), "invalid pod: [") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("DecodePod() error = %q, want it to start with %q and contain %q", err, "invalid pod: [", tc.want)
			}
		})
	}
}

func TestDecodePodNotParsed(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"empty", "", "Object 'Kind' is missing"},
		{"garbage", "\x01\x02\x03", "yaml: control characters are not allowed"},
		{"noVersion", `{"kind":"Pod","metadata":{"name":"a"}}`, "Object 'apiVersion' is missing"},
		{"noKind", `{"apiVersion":"v1","metadata":{"name":"a"}}`, "Object 'Kind' is missing"},
		{"invalidVersion", `{"apiVersion":"v1betta2","kind":"Pod","metadata":{"name":"a"}}`, "v1betta2"},
		{"podList", `{"apiVersion":"v1","kind":"PodList","items":[]}`, "invalid pod: decoded a PodList"},
		{"service", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"a"}}`, "invalid pod: decoded a Service"},
		{"yamlList", "- a\n- b\n", "cannot unmarshal array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod, parsed, err := DecodePod([]byte(tc.data), Options{NodeName: "n", Source: "f"})
			if parsed || pod != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("DecodePod(%q) = %v, parsed %v, err %v, want not parsed with an error containing %q", tc.data, pod, parsed, err, tc.want)
			}
		})
	}
}

func TestDecodePodNameRequired(t *testing.T) {
	_, parsed, err := DecodePod(mustJSON(t, simplePod("", "nginx")), Options{NodeName: "n", Source: "f"})
	if !parsed || err == nil || err.Error() != "invalid pod: name is needed for the pod" {
		t.Errorf("DecodePod(no name) = parsed %v, err %v, want parsed, %q", parsed, err, "invalid pod: name is needed for the pod")
	}
}
