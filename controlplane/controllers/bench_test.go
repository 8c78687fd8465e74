package controllers

import (
	"context"
	"fmt"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

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

// directPodLW is what `run` hands the controllers' runner as RunnerOptions.Pods.
type directPodLW struct{ d *fakeapiserver.Direct }

func (p directPodLW) List(ctx context.Context, opts metav1.ListOptions) (*v1.PodList, error) {
	return p.d.ListPods(ctx, metav1.NamespaceAll, opts)
}

func (p directPodLW) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return p.d.WatchPods(ctx, metav1.NamespaceAll, opts)
}

// BenchmarkPodInformer is the controllers' pods informer beside the embedded API server over a
// fleet's 3,000 pods: it syncs, then takes one status write of every pod (a pod starting), over
// HTTP in protobuf with its decoded pods interned (wire, as before RunnerOptions.Pods) and in
// process sharing the stored pods (inprocess, `run` now). It reports the time per pod event as
// a ratio to the decode floor, the allocations (the server's writes, the same in both,
// included), and cache-B/pod: the live heap the informer holds once caught up, per pod (what
// stopping it and dropping it frees).
func BenchmarkPodInformer(b *testing.B) {
	for _, mode := range []string{"wire", "inprocess"} {
		b.Run(mode, func(b *testing.B) {
			floor := benchfloor.Floor(b)
			b.ReportAllocs()
			var cacheBytes, elapsed float64
			for b.Loop() {
				b.StopTimer()
				cb, d := podInformerRound(b, mode == "inprocess")
				cacheBytes += cb
				elapsed += float64(d)
				b.StartTimer()
			}
			n := float64(b.N)
			events := 2 * benchNodes * benchPodsPerNode
			benchfloor.Report(b, time.Duration(elapsed/n/float64(events)), floor)
			b.ReportMetric(cacheBytes/n/float64(benchNodes*benchPodsPerNode), "cache-B/pod")
		})
	}
}

func podInformerRound(b *testing.B, inProcess bool) (cacheBytes float64, elapsed time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: trace.Discard})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: ts.URL, QPS: -1,
		ContentConfig: rest.ContentConfig{ContentType: kruntime.ContentTypeProtobuf, AcceptContentTypes: kruntime.ContentTypeProtobuf}})
	if err != nil {
		b.Fatal(err)
	}
	direct := srv.Direct("bench")
	for n := range benchNodes {
		for i := range benchPodsPerNode {
			if _, err := direct.CreatePod(ctx, benchPod(n, i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	total := int64(benchNodes * benchPodsPerNode)
	var adds, updates atomic.Int64
	synced, caught := make(chan struct{}), make(chan struct{})
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) {
			if adds.Add(1) == total {
				close(synced)
			}
		},
		UpdateFunc: func(any, any) {
			if updates.Add(1) == total {
				close(caught)
			}
		},
	}
	runtime.GC()
	b.StartTimer()
	start := time.Now()
	var inf cache.SharedIndexInformer
	if inProcess {
		inf = podInformer(directPodLW{direct}, client, 0)
		if err := inf.SetTransform(cacheTransform(false)); err != nil {
			b.Fatal(err)
		}
	} else {
		inf = informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(cacheTransform(true))).Core().V1().Pods().Informer()
	}
	if _, err := inf.AddEventHandler(handler); err != nil {
		b.Fatal(err)
	}
	infCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(infCtx)
	}()
	<-synced
	for n := range benchNodes {
		patch := runningPatch(n)
		for i := range benchPodsPerNode {
			if _, err := direct.PatchPodStatus(ctx, "default", fmt.Sprintf("web-%d-%d", n, i), types.StrategicMergePatchType, patch); err != nil {
				b.Fatal(err)
			}
		}
	}
	<-caught
	elapsed = time.Since(start)
	b.StopTimer()
	var with, without runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&with)
	stop()
	<-done
	inf = nil
	runtime.GC()
	runtime.ReadMemStats(&without)
	return float64(with.HeapAlloc) - float64(without.HeapAlloc), elapsed
}
