package controllers

import (
	"context"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/api/listwatch"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/test/benchfloor"
)

// benchNodes and benchPodsPerNode are the fleet of BenchmarkPodInformer: 3,000 pods.
const benchNodes, benchPodsPerNode = 100, 30

func benchPod(node, i int) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d-%d", node, i), Namespace: "default",
			Labels: map[string]string{"app": "web", "pod-template-hash": "7d9f8b6c5"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9f8b6c5",
				UID: "9d5b1a4e-0000-4000-8000-000000000001", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: v1.PodSpec{NodeName: fmt.Sprintf("sim-%d", node), Containers: []v1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10",
			Ports:     []v1.ContainerPort{{ContainerPort: 8080, Protocol: v1.ProtocolTCP}},
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("10m"), v1.ResourceMemory: resource.MustParse("16Mi")}}}}},
	}
}

// runningPatch is a kubelet's status patch of a pod that started.
func runningPatch(node int) []byte {
	return fmt.Appendf(nil, `{"status":{"phase":"Running","hostIP":"10.0.0.%d","podIP":"10.244.%d.7","startTime":"2026-01-01T00:00:00Z",`+
		`"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"},`+
		`{"type":"ContainersReady","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"}],`+
		`"containerStatuses":[{"name":"web","ready":true,"restartCount":0,"image":"registry.k8s.io/pause:3.10","imageID":"sha256:abc","containerID":"containerd://0123","started":true,"state":{"running":{"startedAt":"2026-01-01T00:00:01Z"}}}]}}`,
		node%250+1, node%250)
}

// The list-watchers `run` hands the controllers' runner as RunnerOptions.Pods, Nodes and Leases.
func directPodLW(d *fakeapiserver.Direct) listwatch.Interface[*v1.PodList] {
	return listwatch.InNamespace(metav1.NamespaceAll, d.ListPods, d.WatchPods)
}

func directNodeLW(d *fakeapiserver.Direct) listwatch.Interface[*v1.NodeList] {
	return listwatch.Funcs[*v1.NodeList]{ListFunc: d.ListNodes, WatchFunc: d.WatchNodes}
}

func directLeaseLW(d *fakeapiserver.Direct) listwatch.Interface[*coordinationv1.LeaseList] {
	return listwatch.InNamespace(metav1.NamespaceAll, d.ListLeases, d.WatchLeases)
}

// BenchmarkPodInformer is the controllers' pods informer beside the embedded API server over a
// fleet's 3,000 pods: it syncs, then takes one status write of every pod (a pod starting), over
// HTTP in protobuf with its decoded pods interned (wire, as before RunnerOptions.Pods) and in
// process sharing the stored pods (inprocess, `run` now). It reports the time per pod event as
// a ratio to the decode floor, the allocations (the server's writes, the same in both,
// included), and cache-B/pod: the live heap the informer holds once caught up, per pod (what
// stopping it and dropping it frees).
func BenchmarkPodInformer(b *testing.B) {
	benchInformers(b, podInformerRound, 2*benchNodes*benchPodsPerNode, benchNodes*benchPodsPerNode, "cache-B/pod")
}

// benchServer is an API server served over HTTP, an in-process client of it and a client-go
// client speaking protobuf to it, as the controllers' is; closeServer stops the server.
func benchServer(b *testing.B) (direct *fakeapiserver.Direct, client kubernetes.Interface, closeServer func()) {
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: trace.Discard})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	closeServer = func() {
		ts.Close()
		_ = srv.Close()
	}
	client, err = kubernetes.NewForConfig(&rest.Config{Host: ts.URL, QPS: -1,
		ContentConfig: rest.ContentConfig{ContentType: kruntime.ContentTypeProtobuf, AcceptContentTypes: kruntime.ContentTypeProtobuf}})
	if err != nil {
		closeServer()
		b.Fatal(err)
	}
	return srv.Direct("bench"), client, closeServer
}

func podInformerRound(b *testing.B, inProcess bool) (cacheBytes float64, elapsed time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	direct, client, closeServer := benchServer(b)
	defer closeServer()
	for n := range benchNodes {
		for i := range benchPodsPerNode {
			if _, err := direct.CreatePod(ctx, benchPod(n, i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	total := int64(benchNodes * benchPodsPerNode)
	newInformer := func() []cache.SharedIndexInformer {
		if inProcess {
			inf := listWatchInformer[*v1.PodList](directPodLW(direct), &v1.Pod{}, client, 0)
			if err := inf.SetTransform(cacheTransform(false)); err != nil {
				b.Fatal(err)
			}
			return []cache.SharedIndexInformer{inf}
		}
		return []cache.SharedIndexInformer{informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(cacheTransform(true))).Core().V1().Pods().Informer()}
	}
	return informerRound(b, ctx, newInformer, total, total, func() {
		for n := range benchNodes {
			patch := runningPatch(n)
			for i := range benchPodsPerNode {
				if _, err := direct.PatchPodStatus(ctx, "default", fmt.Sprintf("web-%d-%d", n, i), types.StrategicMergePatchType, patch); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// informerRound starts the informers newInformers makes, waits until they have seen adds objects
// added, makes the writes write makes and waits until they have seen updates updates. It returns
// the live heap the informers held once caught up (what stopping them and dropping them frees)
// and the time from their start.
func informerRound(b *testing.B, ctx context.Context, newInformers func() []cache.SharedIndexInformer, adds, updates int64, write func()) (cacheBytes float64, elapsed time.Duration) {
	var added, updated atomic.Int64
	synced, caught := make(chan struct{}), make(chan struct{})
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) {
			if added.Add(1) == adds {
				close(synced)
			}
		},
		UpdateFunc: func(any, any) {
			if updated.Add(1) == updates {
				close(caught)
			}
		},
	}
	runtime.GC()
	b.StartTimer()
	start := time.Now()
	infs := newInformers()
	infCtx, stop := context.WithCancel(ctx)
	var running sync.WaitGroup
	for _, inf := range infs {
		if _, err := inf.AddEventHandler(handler); err != nil {
			b.Fatal(err)
		}
		running.Go(func() { inf.RunWithContext(infCtx) })
	}
	<-synced
	write()
	<-caught
	elapsed = time.Since(start)
	b.StopTimer()
	var with, without runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&with)
	stop()
	running.Wait()
	infs = nil
	runtime.GC()
	runtime.ReadMemStats(&without)
	return float64(with.HeapAlloc) - float64(without.HeapAlloc), elapsed
}

// benchNode is a node as a kubelet registers it and reports its status.
func benchNode(n int) *v1.Node {
	name := fmt.Sprintf("sim-%d", n)
	at := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	resources := v1.ResourceList{v1.ResourceCPU: resource.MustParse("8"), v1.ResourceMemory: resource.MustParse("32Gi"),
		v1.ResourcePods: resource.MustParse("110"), v1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		"hugepages-1Gi": resource.MustParse("0"), "hugepages-2Mi": resource.MustParse("0")}
	condition := func(typ v1.NodeConditionType, status v1.ConditionStatus, reason, msg string) v1.NodeCondition {
		return v1.NodeCondition{Type: typ, Status: status, Reason: reason, Message: msg, LastHeartbeatTime: at, LastTransitionTime: at}
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64"},
			Annotations: map[string]string{"volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
		Status: v1.NodeStatus{Capacity: resources, Allocatable: resources,
			Conditions: []v1.NodeCondition{
				condition(v1.NodeMemoryPressure, v1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				condition(v1.NodeDiskPressure, v1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				condition(v1.NodePIDPressure, v1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
				condition(v1.NodeReady, v1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
			},
			Addresses:       []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: fmt.Sprintf("10.0.%d.%d", n/250, n%250+1)}, {Type: v1.NodeHostName, Address: name}},
			DaemonEndpoints: v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: 10250}},
			NodeInfo: v1.NodeSystemInfo{MachineID: fmt.Sprintf("%032x", n), SystemUUID: fmt.Sprintf("%032x", n), BootID: fmt.Sprintf("%032x", n+1),
				KernelVersion: "6.8.0", OSImage: "minikubelet", ContainerRuntimeVersion: "fake://0.1.0", KubeletVersion: "v1.35.0",
				OperatingSystem: "linux", Architecture: "amd64"},
		},
	}
}

// heartbeatPatch is a kubelet's status update of a node whose conditions did not change: new
// heartbeat times.
func heartbeatPatch() []byte {
	at := "2026-01-01T00:00:10Z"
	var conds []string
	for _, typ := range []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure, v1.NodeReady} {
		conds = append(conds, fmt.Sprintf(`{"type":%q,"lastHeartbeatTime":%q}`, typ, at))
	}
	return []byte(`{"status":{"conditions":[` + strings.Join(conds, ",") + `]}}`)
}

// BenchmarkNodeLeaseInformers is the controllers' nodes and leases informers beside the embedded
// API server over a fleet's 100 nodes: they sync, then take one heartbeat of every node (a
// status update and a lease renewal), over HTTP in protobuf (wire, as before RunnerOptions.Nodes
// and Leases) and in process sharing the stored objects (inprocess, `run` now). It reports the
// time per event as a ratio to the decode floor, the allocations (the server's writes, the same
// in both, included), and cache-B/node: the live heap both informers hold once caught up, per
// node (its node and its lease).
func BenchmarkNodeLeaseInformers(b *testing.B) {
	benchInformers(b, nodeLeaseRound, 4*benchNodes, benchNodes, "cache-B/node")
}

// benchInformers runs round over the wire and in process. It reports the time per event (a
// round makes events of them) as a ratio to the decode floor, and the live heap the informers
// held once caught up, divided by per (the objects they hold), as unit.
func benchInformers(b *testing.B, round func(b *testing.B, inProcess bool) (float64, time.Duration), events, per int, unit string) {
	for _, mode := range []string{"wire", "inprocess"} {
		b.Run(mode, func(b *testing.B) {
			floor := benchfloor.Floor(b)
			b.ReportAllocs()
			var cacheBytes, elapsed float64
			for b.Loop() {
				b.StopTimer()
				cb, d := round(b, mode == "inprocess")
				cacheBytes += cb
				elapsed += float64(d)
				b.StartTimer()
			}
			n := float64(b.N)
			benchfloor.Report(b, time.Duration(elapsed/n/float64(events)), floor)
			b.ReportMetric(cacheBytes/n/float64(per), unit)
		})
	}
}

func nodeLeaseRound(b *testing.B, inProcess bool) (cacheBytes float64, elapsed time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	direct, client, closeServer := benchServer(b)
	defer closeServer()
	for n := range benchNodes {
		node := benchNode(n)
		if _, err := direct.CreateNode(ctx, node); err != nil {
			b.Fatal(err)
		}
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node.Name, Namespace: "kube-node-lease",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: "9d5b1a4e-0000-4000-8000-000000000002"}}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node.Name), LeaseDurationSeconds: ptr.To[int32](40),
				RenewTime: ptr.To(metav1.NewMicroTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))}}
		if _, err := direct.CreateLease(ctx, lease); err != nil {
			b.Fatal(err)
		}
	}
	newInformers := func() []cache.SharedIndexInformer {
		if inProcess {
			nodes := listWatchInformer[*v1.NodeList](directNodeLW(direct), &v1.Node{}, client, 0)
			leases := listWatchInformer[*coordinationv1.LeaseList](directLeaseLW(direct), &coordinationv1.Lease{}, client, 0)
			for _, inf := range []cache.SharedIndexInformer{nodes, leases} {
				if err := inf.SetTransform(cacheTransform(false)); err != nil {
					b.Fatal(err)
				}
			}
			return []cache.SharedIndexInformer{nodes, leases}
		}
		factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(cacheTransform(true)))
		return []cache.SharedIndexInformer{factory.Core().V1().Nodes().Informer(), factory.Coordination().V1().Leases().Informer()}
	}
	patch := heartbeatPatch()
	return informerRound(b, ctx, newInformers, 2*benchNodes, 2*benchNodes, func() {
		for n := range benchNodes {
			name := fmt.Sprintf("sim-%d", n)
			if _, err := direct.PatchNodeStatus(ctx, name, types.StrategicMergePatchType, patch); err != nil {
				b.Fatal(err)
			}
			lease, err := direct.GetLease(ctx, "kube-node-lease", name)
			if err != nil {
				b.Fatal(err)
			}
			lease.Spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)))
			if _, err := direct.UpdateLease(ctx, lease); err != nil {
				b.Fatal(err)
			}
		}
	})
}
