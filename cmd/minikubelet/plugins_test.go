package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/sim/sampleplugin"
)

// The sample plugins register with `run` through the real gRPC APIs: the device plugin's
// resource reaches the node's capacity and allocatable and a pod requesting it runs; unhealthy
// devices lower allocatable; the CSI registrar puts the driver in the CSINode and the node
// annotation, and removing its socket takes it out again.
func TestRunRegistersSamplePlugins(t *testing.T) {
	t.Parallel()
	root, err := os.MkdirTemp("", "mk")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(root) }()
	cfg := testConfig(t.TempDir(), false)
	cfg.RootDir = root
	cfg.WriteKubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	log := newTraceLog()
	stop := runInBackground(t, cfg, log)
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	log.mustWait(t, ctx, 0, "node registration", func(e traceEvent) bool { return e.Component == "node" && e.Event == "register" })
	rc, err := restConfigFromKubeconfig(cfg.WriteKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(rc)

	var wg sync.WaitGroup
	defer wg.Wait()
	pctx, stopPlugins := context.WithCancel(ctx)
	defer stopPlugins()
	dev, err := sampleplugin.NewDevice(sampleplugin.DeviceOptions{Dir: filepath.Join(root, kubelet.DevicePluginsDir), Resource: "example.com/gpu", Count: 4})
	if err != nil {
		t.Fatal(err)
	}
	csiCtx, stopCSI := context.WithCancel(pctx)
	defer stopCSI()
	drv, err := sampleplugin.NewCSI(sampleplugin.CSIOptions{RootDir: root, Driver: "example.csi.k8s.io", NodeID: "n1", MaxVolumesPerNode: 8})
	if err != nil {
		t.Fatal(err)
	}
	wg.Add(2)
	go func() { defer wg.Done(); _ = dev.Run(pctx) }()
	go func() { defer wg.Done(); _ = drv.Run(csiCtx) }()

	waitNode(t, ctx, client, "allocatable example.com/gpu 4", func(n *v1.Node) bool {
		return quantity(n.Status.Allocatable, "example.com/gpu") == 4 && quantity(n.Status.Capacity, "example.com/gpu") == 4
	})
	log.mustWait(t, ctx, 0, "csi registration", func(e traceEvent) bool { return e.Component == "csi" && e.Event == "registered" })
	waitNode(t, ctx, client, "node id annotation", func(n *v1.Node) bool {
		return n.Annotations["csi.volume.kubernetes.io/nodeid"] == `{"example.csi.k8s.io":"n1"}`
	})
	cn, err := client.StorageV1().CSINodes().Get(ctx, testNode, metav1.GetOptions{})
	if err != nil || len(cn.Spec.Drivers) != 1 || cn.Spec.Drivers[0].NodeID != "n1" || *cn.Spec.Drivers[0].Allocatable.Count != 8 {
		t.Fatalf("CSINode = %+v, %v", cn, err)
	}

	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gpu"}, Spec: v1.PodSpec{
		NodeName: testNode,
		Containers: []v1.Container{{Name: "main", Image: "busybox:1.36", Resources: v1.ResourceRequirements{
			Limits: v1.ResourceList{"example.com/gpu": resource.MustParse("2")},
		}}},
	}}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	log.mustWait(t, ctx, 0, "allocation", func(e traceEvent) bool { return e.Component == "devicemanager" && e.Event == "allocate" })
	log.mustWait(t, ctx, 0, "Running status of default/gpu", func(e traceEvent) bool { return isRunning(e, "default/gpu") })

	if err := dev.SetHealth(false, "gpu-0", "gpu-1"); err != nil {
		t.Fatal(err)
	}
	waitNode(t, ctx, client, "allocatable example.com/gpu 2", func(n *v1.Node) bool {
		return quantity(n.Status.Allocatable, "example.com/gpu") == 2 && quantity(n.Status.Capacity, "example.com/gpu") == 4
	})

	stopCSI()
	log.mustWait(t, ctx, 0, "csi deregistration", func(e traceEvent) bool { return e.Component == "csi" && e.Event == "unregistered" })
	if cn, err := client.StorageV1().CSINodes().Get(ctx, testNode, metav1.GetOptions{}); err != nil || len(cn.Spec.Drivers) != 0 {
		t.Fatalf("CSINode after removal = %+v, %v", cn, err)
	}
	stopPlugins()
	wg.Wait()
	if err := stop(); err != nil {
		t.Errorf("run() = %v, want nil", err)
	}
}

func quantity(l v1.ResourceList, name v1.ResourceName) int64 {
	q, ok := l[name]
	if !ok {
		return -1
	}
	return q.Value()
}

// waitNode watches the test node until ok holds.
func waitNode(t *testing.T, ctx context.Context, client kubernetes.Interface, what string, ok func(*v1.Node) bool) {
	t.Helper()
	sel := fields.OneTermEqualSelector(metav1.ObjectNameField, testNode).String()
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) == 1 && ok(&list.Items[0]) {
		return
	}
	w, err := client.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if n, isNode := ev.Object.(*v1.Node); isNode && ok(n) {
			return
		}
	}
	t.Fatalf("no node with %s: %s", what, strings.TrimSpace(ctx.Err().Error()))
}
