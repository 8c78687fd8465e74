package podtest_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sources/staticpod"
	"github.com/minikubelet/minikubelet/test/podtest"
)

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  *v1.Pod
		want *v1.Pod
	}{
		{
			name: "defaults",
			got:  podtest.New("web"),
			want: &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
				Spec: v1.PodSpec{
					RestartPolicy: v1.RestartPolicyAlways,
					Containers:    []v1.Container{{Name: "app", Image: "busybox:1.36"}},
				},
			},
		},
		{
			name: "options apply in order",
			got: podtest.New("db", podtest.Namespace("team"), podtest.UID("1"), podtest.Node("node-1"),
				podtest.RestartPolicy(v1.RestartPolicyNever), podtest.Static("h1"), podtest.Phase(v1.PodRunning),
				podtest.Requests(map[v1.ResourceName]string{v1.ResourceCPU: "500m"}), podtest.Image("db:2")),
			want: &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "team", UID: "1", Annotations: map[string]string{
					kubecontainer.ConfigSourceAnnotationKey: "file",
					kubecontainer.ConfigHashAnnotationKey:   "h1",
				}},
				Spec: v1.PodSpec{
					NodeName:      "node-1",
					RestartPolicy: v1.RestartPolicyNever,
					Containers: []v1.Container{{Name: "app", Image: "db:2", Resources: v1.ResourceRequirements{
						Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")},
					}}},
				},
				Status: v1.PodStatus{Phase: v1.PodRunning},
			},
		},
		{
			name: "containers replace the default one",
			got:  podtest.New("two", podtest.Containers(podtest.Container("a", "a:1"), podtest.Container("b", "b:1"))),
			want: &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "two", Namespace: "default", UID: "uid-two"},
				Spec: v1.PodSpec{
					RestartPolicy: v1.RestartPolicyAlways,
					Containers:    []v1.Container{{Name: "a", Image: "a:1"}, {Name: "b", Image: "b:1"}},
				},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("pod (-want +got):\n%s", diff)
			}
		})
	}
}

// TestManifestDecodes checks that a manifest is what the file source accepts: the static pod
// decoder reads it back to the same spec.
func TestManifestDecodes(t *testing.T) {
	p := podtest.New("web", podtest.Namespace("kube-system"))
	data := podtest.Manifest(t, p)
	got, parsed, err := staticpod.DecodePod(data, staticpod.Options{NodeName: "node-1", Source: "/etc/kubernetes/manifests/web.yaml", IsFile: true})
	if !parsed || err != nil {
		t.Fatalf("DecodePod(%s) = parsed %v, %v", data, parsed, err)
	}
	if got.Name != "web-node-1" || got.Namespace != "kube-system" || got.Spec.Containers[0].Image != podtest.DefaultImage {
		t.Errorf("DecodePod(%s) = %s/%s with image %s", data, got.Namespace, got.Name, got.Spec.Containers[0].Image)
	}
}
