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

	waitNode(t, ctx, client, testNode, "allocatable example.com/gpu 4", func(n *v1.Node) bool {
		return quantity(n.Status.Allocatable, "example.com/gpu") == 4 && quantity(n.Status.Capacity, "example.com/gpu") == 4
	})
	log.mustWait(t, ctx, 0, "csi registration", func(e traceEvent) bool { return e.Component == "csi" && e.Event == "registered" })
	waitNode(t, ctx, client, testNode, "node id annotation", func(n *v1.Node) bool {
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
	waitNode(t, ctx, client, testNode, "allocatable example.com/gpu 2", func(n *v1.Node) bool {
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

// TestRunFleetPluginsPerNode: `run --nodes 2 --root-dir R` gives each node its own plugin
// registry and device plugin directory under R/<node>; a device plugin started on one node's
// kubelet.sock shows in that node's allocatable, and the other node's device manager never hears
// of it.
func TestRunFleetPluginsPerNode(t *testing.T) {
	t.Parallel()
	root, err := os.MkdirTemp("", "mk")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(root) }()
	cfg := testConfig("", false)
	cfg.Kubelet.Sources.StaticPodPath = ""
	cfg.Nodes, cfg.NodeNamePrefix = 2, "sim"
	cfg.RootDir = root
	cfg.WriteKubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	log := newTraceLog()
	stop := runInBackground(t, cfg, log)
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	for _, node := range []string{"sim-0", "sim-1"} {
		log.mustWait(t, ctx, 0, "registration of "+node, func(e traceEvent) bool { return e.Component == "node" && e.Event == "register" && e.Pod == node })
	}
	rc, err := restConfigFromKubeconfig(cfg.WriteKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(rc)

	dev, err := sampleplugin.NewDevice(sampleplugin.DeviceOptions{Dir: filepath.Join(root, "sim-1", kubelet.DevicePluginsDir), Resource: "example.com/gpu", Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	pctx, stopPlugin := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = dev.Run(pctx) }()
	defer func() { stopPlugin(); wg.Wait() }()

	waitNode(t, ctx, client, "sim-1", "allocatable example.com/gpu 3", func(n *v1.Node) bool {
		return quantity(n.Status.Allocatable, "example.com/gpu") == 3
	})
	events, _, _ := log.snapshot()
	for _, e := range events {
		if e.Component == "devicemanager" && e.Node != "sim-1" {
			t.Errorf("device manager event of node %q: %+v", e.Node, e)
		}
	}
	other, err := client.CoreV1().Nodes().Get(ctx, "sim-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if q := quantity(other.Status.Allocatable, "example.com/gpu"); q != -1 {
		t.Errorf("sim-0 allocatable example.com/gpu = %d, want none", q)
	}
	for _, dir := range []string{"sim-0/plugins_registry", "sim-1/plugins_registry"} {
		if info, err := os.Stat(filepath.Join(root, dir)); err != nil || !info.IsDir() {
			t.Errorf("%s: %v, want the node's plugin registry", dir, err)
		}
	}
	stopPlugin()
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

// waitNode watches the node until ok holds.
func waitNode(t *testing.T, ctx context.Context, client kubernetes.Interface, node, what string, ok func(*v1.Node) bool) {
	t.Helper()
	sel := fields.OneTermEqualSelector(metav1.ObjectNameField, node).String()
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
