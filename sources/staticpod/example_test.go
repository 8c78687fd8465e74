package staticpod_test

import (
	"fmt"

	"github.com/minikubelet/minikubelet/sources/staticpod"
)

func ExampleDecodePod() {
	data := []byte(`
apiVersion: v1
kind: Pod
metadata:
  name: etcd
  namespace: kube-system
spec:
  containers:
  - name: etcd
    image: registry.k8s.io/etcd:3.6.0
`)
	pod, parsed, err := staticpod.DecodePod(data, staticpod.Options{
		NodeName: "node-1",
		Source:   "/etc/kubernetes/manifests/etcd.yaml",
		IsFile:   true,
	})
	fmt.Println(parsed, err)
	fmt.Println(pod.Namespace, pod.Name, pod.Spec.NodeName, pod.Status.Phase, len(pod.UID))
	fmt.Println(pod.Spec.Containers[0].ImagePullPolicy, pod.Spec.Tolerations[0].Operator, pod.Spec.Tolerations[0].Effect)
	// Output:
	// true <nil>
	// kube-system etcd-node-1 node-1 Pending 32
	// IfNotPresent Exists NoExecute
}

func ExampleDecodePodList() {
	data := []byte(`{"apiVersion":"v1","kind":"PodList","items":[
	{"metadata":{"name":"web"},"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}},
	{"metadata":{"name":"db","uid":"db-1"},"spec":{"containers":[{"name":"db","image":"postgres:17"}]}}]}`)
	pods, parsed, err := staticpod.DecodePodList(data, staticpod.Options{NodeName: "node-1", Source: "http://example.com/pods"})
	fmt.Println(parsed, err)
	for _, pod := range pods {
		fmt.Println(pod.Namespace, pod.Name, pod.Annotations["kubernetes.io/config.hash"] == string(pod.UID), len(pod.Spec.Tolerations))
	}
	// Output:
	// true <nil>
	// default web-node-1 true 0
	// default db-node-1 true 0
}
