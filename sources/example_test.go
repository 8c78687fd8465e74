package sources_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/minikubelet/minikubelet/sources"
	"github.com/minikubelet/minikubelet/trace"
	"github.com/minikubelet/minikubelet/vclock"
)

func ExampleDecodePod() {
	manifest := []byte(`
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
	pod, parsed, err := sources.DecodePod(manifest, sources.DecodeOptions{
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

func ExampleFile_Relist() {
	dir, err := os.MkdirTemp("", "manifests")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	web := "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: web, image: nginx}]\n"
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(web), 0o644); err != nil {
		panic(err)
	}
	src, err := sources.NewFile(sources.FileOptions{Path: dir, NodeName: "node-1", Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		panic(err)
	}
	update, err := src.Relist()
	fmt.Println(update.Op, update.Source, len(update.Pods), update.Pods[0].Name, err)
	next, _ := src.NextWake()
	fmt.Println(next.Sub(vclock.Epoch))
	// Output:
	// SET file 1 web-node-1 <nil>
	// 20s
}
