package controllers

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	coordinationlisters "k8s.io/client-go/listers/coordination/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// recordingDirect is the API server's in-process reads (fakeapiserver.Direct's ListPods,
// ListNodes, ListLeases and GetLeaseView), keeping every object it hands over.
type recordingDirect struct {
	direct *fakeapiserver.Direct
	all    *[]handedObject
	// dropManaged drops the managed fields from each object's struct, as the informers'
	// transform does.
	dropManaged bool
}

func (r recordingDirect) hand(obj runtime.Object) {
	*r.all = append(*r.all, handOver(obj))
	if r.dropManaged {
		mustAccessor(obj).SetManagedFields(nil)
	}
}

func (r recordingDirect) handList(list runtime.Object) {
	items, err := meta.ExtractList(list)
	if err != nil {
		panic(err)
	}
	for _, item := range items {
		r.hand(item)
	}
}

func (r recordingDirect) ListPods(ctx context.Context, namespace string, opts metav1.ListOptions) (*v1.PodList, error) {
	list, err := r.direct.ListPods(ctx, namespace, opts)
	r.handList(list)
	return list, err
}

func (r recordingDirect) ListNodes(ctx context.Context, opts metav1.ListOptions) (*v1.NodeList, error) {
	list, err := r.direct.ListNodes(ctx, opts)
	r.handList(list)
	return list, err
}

func (r recordingDirect) ListLeases(ctx context.Context, namespace string, opts metav1.ListOptions) (*coordinationv1.LeaseList, error) {
	list, err := r.direct.ListLeases(ctx, namespace, opts)
	r.handList(list)
	return list, err
}

func (r recordingDirect) GetLeaseView(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	lease, err := r.direct.GetLeaseView(ctx, namespace, name)
	if err == nil {
		r.hand(lease)
	}
	return lease, err
}

// TestCoresWriteCopiesOfSharedPods drives every controller through each of its pod and node
// writes (the scheduler's binding and Unschedulable condition, the node lifecycle controller's
// NotReady pods, a node's Ready condition and its taints, the taint eviction controller's
// DisruptionTarget and deletion, the pod GC's orphan marked Failed and deleted) with the pods,
// nodes and leases the API server hands over in process, the stored objects themselves under a
// struct of their own, and wants every one of them as it was handed: as replay's controllers
// read them (Client.Direct), and as the informers' caches keep them when the server is in the
// process (RunnerOptions.Pods, Nodes and Leases: their managed fields dropped).
func TestCoresWriteCopiesOfSharedPods(t *testing.T) {
	for _, mode := range []string{"replay's list", "run's informer cache"} {
		t.Run(mode, func(t *testing.T) { testCoresWriteCopies(t, mode == "run's informer cache") })
	}
}

func testCoresWriteCopies(t *testing.T, informer bool) {
	ctx := context.Background()
	clk := vclock.New(vclock.Epoch)
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: srv.Transport(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	var all []handedObject
	direct := recordingDirect{direct: srv.Direct("test"), all: &all, dropManaged: informer}
	cc := Client{Clientset: client, Direct: direct}
	refill := func() {}
	if informer {
		// The cores read from listers, as from the informers' caches: filled before each pass
		// with what the in-process lists hand over.
		index := func() cache.Indexer {
			return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		}
		pods, nodes, leases := index(), index(), index()
		cc = Client{Clientset: client, Pods: corelisters.NewPodLister(pods), Nodes: corelisters.NewNodeLister(nodes),
			Leases: coordinationlisters.NewLeaseLister(leases)}
		fill := func(indexer cache.Indexer, list runtime.Object, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			items, err := meta.ExtractList(list)
			if err != nil {
				t.Fatal(err)
			}
			objs := make([]any, len(items))
			for i := range items {
				objs[i] = items[i]
			}
			if err := indexer.Replace(objs, mustListAccessor(list).GetResourceVersion()); err != nil {
				t.Fatal(err)
			}
		}
		refill = func() {
			t.Helper()
			list, err := direct.ListPods(ctx, metav1.NamespaceAll, metav1.ListOptions{})
			fill(pods, list, err)
			nodeList, err := direct.ListNodes(ctx, metav1.ListOptions{})
			fill(nodes, nodeList, err)
			leaseList, err := direct.ListLeases(ctx, metav1.NamespaceAll, metav1.ListOptions{})
			fill(leases, leaseList, err)
		}
	}
	// Each write a core makes names the pod and the function that made it.
	wrote := map[string]bool{}
	tracer := trace.Func(func(ev trace.Event) {
		if ev.Pod != "" && ev.Func != "" {
			wrote[ev.Pod+" "+ev.Func] = true
		}
	})
	cores, err := New(Options{Names: Names, Clock: clk, Tracer: tracer, Client: cc})
	if err != nil {
		t.Fatal(err)
	}

	ready := v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.NewTime(clk.Now()), LastTransitionTime: metav1.NewTime(clk.Now())}
	// node-1 stops renewing its lease; node-2 renews it before every pass, so that the cluster
	// is not fully disrupted (which stops evictions).
	for _, name := range []string{"node-1", "node-2"} {
		node, err := client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		node.Status = v1.NodeStatus{Conditions: []v1.NodeCondition{ready},
			Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110")}}
		if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-node-lease"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: ptr.To(metav1.NewMicroTime(clk.Now()))}}
		if _, err := client.CoordinationV1().Leases("kube-node-lease").Create(ctx, lease, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	renew := func() {
		t.Helper()
		lease, err := client.CoordinationV1().Leases("kube-node-lease").Get(ctx, "node-2", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		lease.Spec.RenewTime = ptr.To(metav1.NewMicroTime(clk.Now()))
		if _, err := client.CoordinationV1().Leases("kube-node-lease").Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Both NoExecute taints tolerated for no time: evicted as soon as the node is tainted.
	evictAtOnce := []v1.Toleration{
		{Key: v1.TaintNodeNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](0)},
		{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](0)},
	}
	mkPod := func(name, nodeName, cpu string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": name}},
			Spec: v1.PodSpec{NodeName: nodeName, Tolerations: evictAtOnce, Containers: []v1.Container{{Name: "c", Image: "nginx",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}}}}
	}
	running := func(name string) {
		t.Helper()
		pod, err := client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pod.Status.Phase = v1.PodRunning
		pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(clk.Now())}}
		if _, err := client.CoreV1().Pods("default").UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []*v1.Pod{mkPod("bound", "node-1", "100m"), mkPod("pending", "", "100m"), mkPod("later", "node-2", "100m"), mkPod("huge", "", "1000"), mkPod("orphan", "node-gone", "100m")} {
		if _, err := client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	running("bound")
	running("orphan")

	// Two minutes in 5 s passes: the lease is never renewed, so the node goes unknown after the
	// grace period (50 s), its pods NotReady, then tainted and evicted; the orphan's node is
	// missing for longer than the pod GC's quarantine (40 s).
	for range 25 {
		renew()
		refill()
		for _, c := range cores {
			if err := c.Sync(ctx); err != nil {
				t.Logf("pass at %s: %v", clk.Now().Format(time.TimeOnly), err)
			}
		}
		clk.Advance(5 * time.Second)
	}

	for _, h := range all {
		if diff := h.changed(); diff != "" {
			t.Errorf("shared %s was changed (-handed +now):\n%s", h, diff)
		}
	}

	// Every write path was taken.
	for _, w := range []string{
		"default/pending bind", "default/huge handleSchedulingFailure", "default/bound MarkPodsNotReady",
		"default/bound addConditionAndDeletePod", "default/orphan markFailedAndDeletePodWithCondition",
		"node-1 tryUpdateNodeHealth", "node-1 SwapNodeControllerTaint",
	} {
		if !wrote[w] {
			t.Errorf("no write %q; the writes made: %v", w, wrote)
		}
	}
	get := func(name string) (*v1.Pod, error) {
		return client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
	}
	// The evicted pod waits for its kubelet (a graceful deletion); the orphan is gone at once.
	if pod, err := get("bound"); err != nil || pod.DeletionTimestamp == nil {
		t.Errorf("pod bound = %v, %v; want it deleting", pod, err)
	}
	if _, err := get("orphan"); !apierrors.IsNotFound(err) {
		t.Errorf("get pod orphan: %v; want it collected", err)
	}
	if pod, err := get("pending"); err != nil || pod.Spec.NodeName == "" {
		t.Errorf("pod pending = %v, %v; want it bound", pod, err)
	}
	if pod, err := get("huge"); err != nil || !hasCondition(pod, v1.PodScheduled, v1.ConditionFalse, v1.PodReasonUnschedulable) {
		t.Errorf("pod huge = %v, %v; want PodScheduled False Unschedulable", pod, err)
	}
	if pod, err := get("later"); err != nil || pod.DeletionTimestamp != nil {
		t.Errorf("pod later = %v, %v; want it kept on its healthy node", pod, err)
	}
	kinds := map[string]bool{}
	for _, h := range all {
		kinds[fmt.Sprintf("%T", h.obj)] = true
	}
	if want := map[string]bool{"*v1.Pod": true, "*v1.Node": true, "*v1.Lease": true}; !maps.Equal(kinds, want) {
		t.Errorf("kinds handed over = %v, want %v", kinds, want)
	}
}

func hasCondition(pod *v1.Pod, typ v1.PodConditionType, status v1.ConditionStatus, reason string) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == typ {
			return c.Status == status && c.Reason == reason
		}
	}
	return false
}
