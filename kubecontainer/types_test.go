package kubecontainer

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParsePodFullName(t *testing.T) {
	tests := []struct {
		in       string
		name, ns string
		wantErr  bool
	}{
		{in: "etcd-n1_kube-system", name: "etcd-n1", ns: "kube-system"},
		{in: "a_b_c", wantErr: true},
		{in: "_ns", wantErr: true},
		{in: "name_", wantErr: true},
		{in: "plain", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			name, ns, err := ParsePodFullName(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrBadFullName) {
					t.Errorf("ParsePodFullName(%q) error = %v, want ErrBadFullName", tt.in, err)
				}
				return
			}
			if err != nil || name != tt.name || ns != tt.ns {
				t.Errorf("ParsePodFullName(%q) = %q, %q, %v, want %q, %q, nil", tt.in, name, ns, err, tt.name, tt.ns)
			}
			if got := BuildPodFullName(name, ns); got != tt.in {
				t.Errorf("BuildPodFullName(%q, %q) = %q, want %q", name, ns, got, tt.in)
			}
		})
	}
}

func TestStaticAndMirror(t *testing.T) {
	pod := func(ann map[string]string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}
	}
	tests := []struct {
		name           string
		pod            *v1.Pod
		static, mirror bool
	}{
		{name: "file", pod: pod(map[string]string{ConfigSourceAnnotationKey: "file"}), static: true},
		{name: "http", pod: pod(map[string]string{ConfigSourceAnnotationKey: "http"}), static: true},
		{name: "api", pod: pod(map[string]string{ConfigSourceAnnotationKey: "api"})},
		{name: "no annotations", pod: pod(nil)},
		{name: "mirror", pod: pod(map[string]string{ConfigSourceAnnotationKey: "api", ConfigMirrorAnnotationKey: "h"}), mirror: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsStaticPod(tt.pod); got != tt.static {
				t.Errorf("IsStaticPod() = %v, want %v", got, tt.static)
			}
			if got := IsMirrorPod(tt.pod); got != tt.mirror {
				t.Errorf("IsMirrorPod() = %v, want %v", got, tt.mirror)
			}
		})
	}
}

func TestFindContainerStatusByNameReturnsNewest(t *testing.T) {
	s := &PodStatus{ContainerStatuses: []ContainerStatus{
		{ID: "2", Name: "app", RestartCount: 1},
		{ID: "1", Name: "app"},
	}}
	if got := s.FindContainerStatusByName("app"); got == nil || got.ID != "2" {
		t.Errorf("FindContainerStatusByName(app) = %+v, want the instance with ID 2", got)
	}
	if got := s.FindContainerStatusByName("missing"); got != nil {
		t.Errorf("FindContainerStatusByName(missing) = %+v, want nil", got)
	}
	var nilStatus *PodStatus
	if got := nilStatus.FindContainerStatusByName("app"); got != nil {
		t.Errorf("nil.FindContainerStatusByName(app) = %+v, want nil", got)
	}
}
