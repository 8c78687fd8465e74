package podkey_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/api/podkey"
)

func TestOf(t *testing.T) {
	for _, tt := range []struct {
		name string
		pod  *v1.Pod
		want string
	}{
		{"namespaced", &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "etcd-node-1"}}, "kube-system/etcd-node-1"},
		{"no namespace", &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, "/web"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := podkey.Of(tt.pod); got != tt.want {
				t.Errorf("Of(%s) = %q, want %q", tt.name, got, tt.want)
			}
			if got := podkey.Build(tt.pod.Namespace, tt.pod.Name); got != tt.want {
				t.Errorf("Build(%q, %q) = %q, want %q", tt.pod.Namespace, tt.pod.Name, got, tt.want)
			}
		})
	}
}
