package fakeapiserver_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

func podBody(i int) string {
	return fmt.Sprintf(`{"metadata":{"name":"pod-%d","labels":{"app":"bench"}},"spec":{"nodeName":"node-%d","containers":[{"name":"c","image":"busybox:1.36"}]}}`, i, i%10)
}

// BenchmarkWatchFanOut writes 10,000 pods while 10 HTTP watches stream them; one iteration ends
// when every watcher has read every event.
func BenchmarkWatchFanOut(b *testing.B) {
	watchFanOut(b, "", func(r io.Reader, events int) int {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		n := 0
		for n < events && sc.Scan() {
			n++
		}
		return n
	})
}

// BenchmarkWatchFanOutProtobuf is BenchmarkWatchFanOut with watches in protobuf, as the
// controllers' informers and fleetload watch: each event is a frame, its length first.
func BenchmarkWatchFanOutProtobuf(b *testing.B) {
	watchFanOut(b, kubeletAccept, func(r io.Reader, events int) int {
		br := bufio.NewReaderSize(r, 64<<10)
		var size [4]byte
		n := 0
		for n < events {
			if _, err := io.ReadFull(br, size[:]); err != nil {
				break
			}
			if _, err := br.Discard(int(binary.BigEndian.Uint32(size[:]))); err != nil {
				break
			}
			n++
		}
		return n
	})
}

// watchFanOut runs the fan-out benchmarks: watches that ask for accept (JSON when empty), each
// read by count until it has seen the events it is given.
func watchFanOut(b *testing.B, accept string, count func(r io.Reader, events int) int) {
	const events, watchers = 10000, 10
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		opts := testOptions()
		opts.HistorySize = 2 * events
		srv := newServer(b, opts)
		ts := httptest.NewServer(srv.Handler())
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, watchers)
		for range watchers {
			req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/api/v1/pods?watch=1&resourceVersion=0", nil)
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			go func() {
				defer resp.Body.Close()
				done <- count(resp.Body, events)
			}()
		}
		h := srv.Handler()
		b.StartTimer()
		for i := range events {
			if w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json", podBody(i)); w.Code != http.StatusCreated {
				b.Fatalf("create = %d %s", w.Code, w.Body.String())
			}
		}
		for range watchers {
			if n := <-done; n != events {
				b.Fatalf("a watcher read %d events, want %d", n, events)
			}
		}
		b.StopTimer()
		cancel()
		ts.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events*watchers), "ns/delivered-event")
}

// BenchmarkList10000Pods lists 10,000 pods, whole and filtered to one node as a kubelet does, and
// whole as a Table and in protobuf.
func BenchmarkList10000Pods(b *testing.B) {
	srv := newServer(b, testOptions())
	h := srv.Handler()
	for i := range 10000 {
		if w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json", podBody(i)); w.Code != http.StatusCreated {
			b.Fatalf("create = %d %s", w.Code, w.Body.String())
		}
	}
	for _, bc := range []struct{ name, query string }{
		{"all", ""},
		{"nodeName", "?fieldSelector=spec.nodeName%3Dnode-3"},
		{"table", ""},
		{"protobuf", ""},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			accept := []string{}
			switch bc.name {
			case "table":
				accept = []string{"Accept", tableAccept}
			case "protobuf":
				accept = []string{"Accept", kubeletAccept}
			}
			for range b.N {
				w := do(h, "GET", "/api/v1/pods"+bc.query, "", "", accept...)
				if w.Code != http.StatusOK || !strings.Contains(w.Body.String()[:200], "List") && bc.name != "table" && bc.name != "protobuf" {
					b.Fatalf("list = %d", w.Code)
				}
			}
		})
	}
}

// BenchmarkGetPod measures one GET of a pod through the handler, in process: the fixed cost of a
// request (routing, authentication, the store lock, the /metrics counters).
func BenchmarkGetPod(b *testing.B) {
	srv := newServer(b, testOptions())
	h := srv.Handler()
	if w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json", podJSON); w.Code != http.StatusCreated {
		b.Fatalf("create = %d %s", w.Code, w.Body.String())
	}
	b.ReportAllocs()
	for b.Loop() {
		if w := do(h, "GET", "/api/v1/namespaces/default/pods/p", "", ""); w.Code != http.StatusOK {
			b.Fatalf("get = %d %s", w.Code, w.Body.String())
		}
	}
}

// BenchmarkPodStatusWrite measures the status manager's write, PATCH pods/NAME/status with a
// strategic merge patch that changes a condition's time, made with client-go over the in-process
// handler ("wire", what replay did before Direct) and with Direct: the cost of the write itself
// (the patch, the field manager, the store) and what the wire adds to it; "view" is Direct's
// write answered with a view of the stored pod (PatchPodStatusView, what the kubelet side
// takes) instead of a copy. Each write changes the status, so every one is stored.
func BenchmarkPodStatusWrite(b *testing.B) {
	for _, name := range []string{"wire", "direct", "view"} {
		b.Run(name, func(b *testing.B) {
			srv := newServer(b, testOptions())
			d := srv.Direct(rest.DefaultKubernetesUserAgent())
			var ops directOps = d
			if name == "view" {
				ops = viewOps{d}
			}
			if name == "wire" {
				c, err := kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: srv.Transport(), QPS: -1})
				if err != nil {
					b.Fatal(err)
				}
				ops = wireOps{c}
			}
			ctx := context.Background()
			if _, err := ops.CreatePod(ctx, newPod("default", "p", "node-1")); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				patch := fmt.Sprintf(`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T%02d:%02d:%02dZ"}]}}`,
					i/3600%24, i/60%60, i%60)
				if _, err := ops.PatchPodStatus(ctx, "default", "p", types.StrategicMergePatchType, []byte(patch)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// viewOps is Direct with its status writes answered by PatchPodStatusView.
type viewOps struct{ *fakeapiserver.Direct }

func (v viewOps) PatchPodStatus(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*corev1.Pod, error) {
	return v.PatchPodStatusView(ctx, namespace, name, pt, patch)
}

// BenchmarkPodStatusWriteFieldSets measures a status write that changes which fields are set, as
// a pod's from Pending to Running does (its IPs, start time and running state appear): each
// iteration writes, in process, one of two statuses of different shapes in turn, so that every
// write takes the field manager's comparison of the status rather than its value-only shortcut.
func BenchmarkPodStatusWriteFieldSets(b *testing.B) {
	srv := newServer(b, testOptions())
	d := srv.Direct(rest.DefaultKubernetesUserAgent())
	ctx := context.Background()
	if _, err := d.CreatePod(ctx, newPod("default", "p", "node-1")); err != nil {
		b.Fatal(err)
	}
	pending := `{"status":{"phase":"Pending","podIP":null,"podIPs":null,"startTime":null,"conditions":[{"type":"Ready","status":"False","reason":"ContainersNotReady","lastTransitionTime":"2026-01-01T00:00:%02dZ"}],"containerStatuses":[{"name":"c","image":"busybox:1.36","imageID":"","ready":false,"started":false,"restartCount":0,"containerID":null,"state":{"running":null,"waiting":{"reason":"ContainerCreating"}}}]}}`
	running := `{"status":{"phase":"Running","podIP":"10.1.0.2","podIPs":[{"ip":"10.1.0.2"}],"startTime":"2026-01-01T00:00:00Z","conditions":[{"type":"Ready","status":"True","reason":null,"lastTransitionTime":"2026-01-01T00:00:%02dZ"}],"containerStatuses":[{"name":"c","image":"busybox:1.36","imageID":"docker.io/library/busybox@sha256:0","containerID":"containerd://0","ready":true,"started":true,"restartCount":0,"state":{"waiting":null,"running":{"startedAt":"2026-01-01T00:00:01Z"}}}]}}`
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		patch := pending
		if i%2 == 1 {
			patch = running
		}
		if _, err := d.PatchPodStatus(ctx, "default", "p", types.StrategicMergePatchType, []byte(fmt.Sprintf(patch, i%60))); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLeaseRenewal measures the node lease's renewal in process (Direct.UpdateLease with a
// new renewTime, as the kubelet writes it every ten seconds), and BenchmarkNodeHeartbeat the node
// status heartbeat (PATCH nodes/NAME/status with a strategic merge patch of the conditions whose
// times changed, as the kubelet writes it when its status is due).
func BenchmarkLeaseRenewal(b *testing.B) {
	srv := newServer(b, testOptions())
	d := srv.Direct(rest.DefaultKubernetesUserAgent())
	ctx := context.Background()
	start := time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
	lease, err := d.CreateLease(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: "node-1"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1"), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &metav1.MicroTime{Time: start}}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		lease.Spec.RenewTime = &metav1.MicroTime{Time: start.Add(time.Duration(i) * 10 * time.Second)}
		if lease, err = d.UpdateLease(ctx, lease); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDirectCreate measures the kubelet's two creates in process: a Kubernetes event
// (Direct.CreateEvent, as the event recorder writes it) and a static pod's mirror pod
// (Direct.CreatePod with the mirror annotations and the node as owner).
func BenchmarkDirectCreate(b *testing.B) {
	ctx := context.Background()
	start := time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
	b.Run("event", func(b *testing.B) {
		d := newServer(b, testOptions()).Direct(rest.DefaultKubernetesUserAgent())
		i := 0
		create := func() error {
			i++
			at := metav1.NewTime(start.Add(time.Duration(i) * time.Second))
			ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("web.%x", i)},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web", UID: "uid-web", APIVersion: "v1", ResourceVersion: "7", FieldPath: "spec.containers{app}"},
				Reason:         "Started", Message: "Started container app", FirstTimestamp: at, LastTimestamp: at, Count: 1,
				Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "kubelet", Host: "node-1"}}
			_, err := d.CreateEvent(ctx, ev)
			return err
		}
		// The first write of a kind builds the field manager's schema, once for the process.
		if err := create(); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := create(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mirror-pod", func(b *testing.B) {
		d := newServer(b, testOptions()).Direct(rest.DefaultKubernetesUserAgent())
		node, err := d.CreateNode(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}})
		if err != nil {
			b.Fatal(err)
		}
		truth := true
		i := 0
		create := func() error {
			i++
			pod := newPod("default", fmt.Sprintf("static-%d-node-1", i), "node-1")
			pod.Annotations = map[string]string{"kubernetes.io/config.mirror": "abc", "kubernetes.io/config.hash": "abc",
				"kubernetes.io/config.source": "file", "kubernetes.io/config.seen": "2026-01-01T00:00:00.000000000Z"}
			pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node-1", UID: node.UID, Controller: &truth}}
			_, err := d.CreatePod(ctx, pod)
			return err
		}
		if err := create(); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := create(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkNodeHeartbeat(b *testing.B) {
	srv := newServer(b, testOptions())
	d := srv.Direct(rest.DefaultKubernetesUserAgent())
	ctx := context.Background()
	if _, err := d.CreateNode(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"kubernetes.io/hostname": "node-1"}}}); err != nil {
		b.Fatal(err)
	}
	patch := func(i int) []byte {
		at := time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 10 * time.Second).Format(time.RFC3339)
		var conds []string
		for _, c := range []string{"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"} {
			status, reason := "False", "KubeletHasSufficient"+c
			if c == "Ready" {
				status, reason = "True", "KubeletReady"
			}
			conds = append(conds, fmt.Sprintf(`{"type":%q,"status":%q,"lastHeartbeatTime":%q,"lastTransitionTime":"2026-01-01T00:00:00Z","reason":%q,"message":"ok"}`, c, status, at, reason))
		}
		return []byte(`{"status":{"conditions":[` + strings.Join(conds, ",") + `]}}`)
	}
	if _, err := d.PatchNodeStatus(ctx, "node-1", types.StrategicMergePatchType, patch(0)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if _, err := d.PatchNodeStatus(ctx, "node-1", types.StrategicMergePatchType, patch(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateUnderFleet creates pods as cmd/fleetload does against `run --nodes` (client-go,
// 32 workers, JSON over loopback TCP, no client-side rate limit) while the fleet's kubelets use the
// server as run's do: one watch of every pod over HTTP (run's shared pod watch), and for each pod
// that watch delivers, the two status writes its kubelet makes in process (Direct) to take it to
// Running. One iteration creates 2,000 pods on 100 nodes and ends when every pod's last status
// write is stored; pods/s is the creates' rate.
// Its sub-benchmarks differ in the shared pod watch: wire is client-go's over HTTP (run's with
// --kubeconfig), in-process is Direct.WatchPods (run's with the embedded server).
func BenchmarkCreateUnderFleet(b *testing.B) {
	b.Run("wire", func(b *testing.B) {
		benchmarkCreateUnderFleet(b, func(ctx context.Context, _ *fakeapiserver.Server, client kubernetes.Interface, opts metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().Pods("").Watch(ctx, opts)
		})
	})
	b.Run("in-process", func(b *testing.B) {
		benchmarkCreateUnderFleet(b, func(ctx context.Context, srv *fakeapiserver.Server, _ kubernetes.Interface, opts metav1.ListOptions) (watch.Interface, error) {
			return srv.Direct("kubelet/v1.35.4 (linux/amd64) kubernetes/fake").WatchPods(ctx, "", opts)
		})
	})
}

func benchmarkCreateUnderFleet(b *testing.B, watchPods func(context.Context, *fakeapiserver.Server, kubernetes.Interface, metav1.ListOptions) (watch.Interface, error)) {
	const nodes, perNode, workers, kubelets = 100, 20, 32, 4
	const pods = nodes * perNode
	b.ReportAllocs()
	var created time.Duration
	for range b.N {
		b.StopTimer()
		srv := newServer(b, testOptions())
		ts := httptest.NewServer(srv.Handler())
		client, err := kubernetes.NewForConfig(&rest.Config{Host: ts.URL, QPS: -1})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		w, err := watchPods(ctx, srv, client, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			b.Fatal(err)
		}
		direct := srv.Direct("kubelet/v1.35.4 (linux/amd64) kubernetes/fake")
		added := make(chan *corev1.Pod, pods)
		var running sync.WaitGroup
		running.Add(pods)
		go func() {
			for ev := range w.ResultChan() {
				if pod, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Added {
					added <- pod
				}
			}
		}()
		var kubeletsDone sync.WaitGroup
		for range kubelets {
			kubeletsDone.Go(func() {
				for pod := range added {
					for _, patch := range []string{
						`{"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"},{"type":"Ready","status":"False","reason":"ContainersNotReady","lastTransitionTime":"2026-01-01T00:00:00Z"}],"hostIP":"10.0.0.1","startTime":"2026-01-01T00:00:00Z","containerStatuses":[{"name":"main","image":"busybox:1.36","imageID":"","ready":false,"restartCount":0,"state":{"waiting":{"reason":"ContainerCreating"}}}]}}`,
						`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"}],"podIP":"10.1.0.2","podIPs":[{"ip":"10.1.0.2"}],"containerStatuses":[{"name":"main","image":"busybox:1.36","imageID":"docker.io/library/busybox@sha256:0","containerID":"containerd://0","ready":true,"started":true,"restartCount":0,"state":{"running":{"startedAt":"2026-01-01T00:00:01Z"}}}]}}`,
					} {
						if _, err := direct.PatchPodStatus(ctx, pod.Namespace, pod.Name, types.StrategicMergePatchType, []byte(patch)); err != nil {
							b.Error(err)
						}
					}
					running.Done()
				}
			})
		}
		var next atomic.Int64
		var creators sync.WaitGroup
		b.StartTimer()
		start := time.Now()
		for range workers {
			creators.Go(func() {
				for {
					i := int(next.Add(1) - 1)
					if i >= pods {
						return
					}
					pod := &corev1.Pod{
						ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("load-%d", i), Namespace: "default"},
						Spec:       corev1.PodSpec{NodeName: fmt.Sprintf("sim-%02d", i%nodes), Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36"}}},
					}
					if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
						b.Error(err)
					}
				}
			})
		}
		creators.Wait()
		created += time.Since(start)
		running.Wait()
		b.StopTimer()
		close(added)
		kubeletsDone.Wait()
		w.Stop()
		cancel()
		ts.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.N*pods)/created.Seconds(), "pods/s")
}

// BenchmarkStoredEvents measures what the store keeps for a kubelet's event: an iteration creates
// 10,000 events in process (Direct.CreateEvent, as a fleet's kubelets write theirs: a pod's
// Started, its involved object, source and managed fields) and reports the live heap they add
// after a collection (heap-B/event), beside the write's own cost.
func BenchmarkStoredEvents(b *testing.B) {
	const events = 10000
	b.ReportAllocs()
	var held int64
	for range b.N {
		held += heapKept(b, func(ctx context.Context, d *fakeapiserver.Direct) {
			at := metav1.NewTime(time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC))
			for i := range events {
				ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("load-%d.%x", i, i*7919)},
					InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: fmt.Sprintf("load-%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i)),
						APIVersion: "v1", ResourceVersion: "12", FieldPath: "spec.containers{main}"},
					Reason: "Started", Message: "Started container main", Source: corev1.EventSource{Component: "kubelet", Host: fmt.Sprintf("sim-%03d", i%1000)},
					FirstTimestamp: at, LastTimestamp: at, Count: 1, Type: corev1.EventTypeNormal}
				if _, err := d.CreateEvent(ctx, ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.ReportMetric(float64(held)/float64(b.N*events), "heap-B/event")
}

// BenchmarkStoredPods measures what the store keeps for a fleet's pods: an iteration creates
// 3,000 pods of one template on 100 nodes in process and writes each one's two kubelet status
// patches (the conditions of a pod starting, then Running with its IP and container status), as
// a fleet's nodes do, and reports the live heap they add after a collection (heap-B/pod): the
// current versions and the watch history's older ones (9,000 events, within its bounds).
func BenchmarkStoredPods(b *testing.B) {
	const pods = 3000
	b.ReportAllocs()
	var held int64
	for range b.N {
		held += heapKept(b, func(ctx context.Context, d *fakeapiserver.Direct) {
			for i := range pods {
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("web-%d", i), Labels: map[string]string{"app": "web"}},
					Spec: corev1.PodSpec{NodeName: fmt.Sprintf("sim-%03d", i%100), Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10.1"}}}}
				if _, err := d.CreatePod(ctx, pod); err != nil {
					b.Fatal(err)
				}
			}
			for i := range pods {
				name := fmt.Sprintf("web-%d", i)
				for _, patch := range []string{
					`{"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"},{"type":"Ready","status":"False","reason":"ContainersNotReady","lastTransitionTime":"2026-01-01T00:00:00Z"}],"hostIP":"10.0.0.1","hostIPs":[{"ip":"10.0.0.1"}],"startTime":"2026-01-01T00:00:00Z"}}`,
					fmt.Sprintf(`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:03Z"}],"podIP":"10.1.%d.%d","podIPs":[{"ip":"10.1.%d.%d"}],"containerStatuses":[{"name":"main","image":"registry.k8s.io/pause:3.10.1","imageID":"registry.k8s.io/pause@sha256:ee6521f2","containerID":"containerd://%d","ready":true,"started":true,"restartCount":0,"state":{"running":{"startedAt":"2026-01-01T00:00:03Z"}}}]}}`,
						i/250, i%250, i/250, i%250, i),
				} {
					if _, err := d.PatchPodStatus(ctx, "default", name, types.StrategicMergePatchType, []byte(patch)); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
	b.ReportMetric(float64(held)/float64(b.N*pods), "heap-B/pod")
}

// heapKept runs fill, timed, against the in-process client of a new server and returns the live
// heap the server holds after it: HeapAlloc after a collection, less HeapAlloc after a collection
// before fill, measured untimed.
func heapKept(b *testing.B, fill func(ctx context.Context, d *fakeapiserver.Direct)) int64 {
	b.Helper()
	b.StopTimer()
	srv := newServer(b, testOptions())
	d := srv.Direct("kubelet/v1.35.4 (linux/amd64) kubernetes/fake")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.StartTimer()
	fill(context.Background(), d)
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(srv)
	b.StartTimer()
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}
