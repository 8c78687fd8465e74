package podmanager_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podmanager"
	"github.com/minikubelet/minikubelet/sim/trace"
)

func Example() {
	static := &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		UID: "3f1c", Name: "etcd-node-1", Namespace: "kube-system",
		Annotations: map[string]string{
			kubecontainer.ConfigSourceAnnotationKey: "file",
			kubecontainer.ConfigHashAnnotationKey:   "3f1c",
		},
	}}
	mirror := &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		UID: "9a7e", Name: "etcd-node-1", Namespace: "kube-system",
		Annotations: map[string]string{
			kubecontainer.ConfigSourceAnnotationKey: "api",
			kubecontainer.ConfigMirrorAnnotationKey: "3f1c",
		},
	}}
	m, err := podmanager.New(podmanager.Options{Tracer: trace.Discard})
	if err != nil {
		fmt.Println(err)
		return
	}
	m.AddPod(static)
	m.AddPod(mirror)

	pod, mirrorPod, wasMirror := m.GetPodAndMirrorPod(mirror)
	fmt.Println(pod.UID, mirrorPod.UID, wasMirror)
	fmt.Println(m.TranslatePodUID("9a7e"), podmanager.IsMirrorPodOf(mirrorPod, pod))

	m.RemovePod(static)
	_, _, orphaned := m.GetPodsAndMirrorPods()
	fmt.Println(orphaned)
	// Output:
	// 3f1c 9a7e true
	// 3f1c true
	// [etcd-node-1_kube-system]
}
