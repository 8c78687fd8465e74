package fakeapiserver_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// BenchmarkCreateBesideBusyNodes creates pods in process, 32 at a time as cmd/fleetload does
// and as its administrator (exempt from the API's priority and fairness), while 1,000 nodes keep
// writing as a fleet's kubelets do when they have a backlog, each as its node's user: each node's
// goroutine GETs one of its pods and patches its status, and another renews its lease, again and
// again, so that every node keeps about two writes in the store lock's queue. One iteration
// creates 2,000 pods; pods/s is the creates' rate, node-writes/s the nodes' meanwhile. The creates
// of a 1,000-node fleet stalled behind such a queue (docs/benchmarks.md, issue 22).
//
// It leaves out two things of that fleet's queue: the kubelets' event creates, the largest group
// waiting for the store lock there, and the trace recorder (testOptions writes to trace.Discard),
// whose lock a pod status write's trace took under the store lock. What it measures is the
// creates' share of a queue of status writes and lease renewals only.
func BenchmarkCreateBesideBusyNodes(b *testing.B) {
	const nodes, pods, workers = 1000, 2000, 32
	ctx := context.Background()
	b.ReportAllocs()
	var created time.Duration
	var during int64 // the nodes' writes while the pods were created
	for range b.N {
		b.StopTimer()
		srv := newServer(b, testOptions())
		// The creates are an administrator's (fleetload's token is a system:masters user's),
		// exempt from the API's priority and fairness; each node's writes are its kubelet's.
		// One field manager for all, as in the benchmark's earlier runs, so that their bytes
		// compare.
		const ua = "kubelet/v1.35.4 (linux/amd64) kubernetes/fake"
		d := srv.Direct(ua)
		kubelets := make([]*fakeapiserver.Direct, nodes)
		leaseRV := make([]string, nodes)
		for n := range nodes {
			kubelets[n] = srv.DirectAs(ua, authenticationv1.UserInfo{
				Username: fmt.Sprintf("system:node:sim-%03d", n), Groups: []string{"system:nodes", "system:authenticated"}})
			if _, err := d.CreatePod(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("busy-%d", n), Namespace: "default"},
				Spec: corev1.PodSpec{NodeName: fmt.Sprintf("sim-%03d", n), Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36"}}}}); err != nil {
				b.Fatal(err)
			}
			lease, err := kubelets[n].CreateLease(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sim-%03d", n), Namespace: "kube-node-lease"},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(fmt.Sprintf("sim-%03d", n))}})
			if err != nil {
				b.Fatal(err)
			}
			leaseRV[n] = lease.ResourceVersion
		}
		stop := make(chan struct{})
		var nodeWrites atomic.Int64
		var busy sync.WaitGroup
		for n := range nodes {
			d := kubelets[n]
			busy.Go(func() {
				name := fmt.Sprintf("busy-%d", n)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := d.GetPodView(ctx, "default", name); err != nil {
						b.Error(err)
						return
					}
					patch := fmt.Sprintf(`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:%02dZ"}]}}`, i%60)
					if _, err := d.PatchPodStatusView(ctx, "default", name, types.StrategicMergePatchType, []byte(patch)); err != nil {
						b.Error(err)
						return
					}
					nodeWrites.Add(1)
				}
			})
			busy.Go(func() {
				name, rv := fmt.Sprintf("sim-%03d", n), leaseRV[n]
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					at := metav1.NewMicroTime(time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second))
					// The kubelet's lease controller updates the lease it last read or wrote: its
					// resourceVersion goes with the update, and the store checks it.
					got, err := d.UpdateLease(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-node-lease", ResourceVersion: rv},
						Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), RenewTime: &at}})
					if err != nil {
						b.Error(err)
						return
					}
					rv = got.ResourceVersion
					nodeWrites.Add(1)
				}
			})
		}
		var next atomic.Int64
		var creators sync.WaitGroup
		writesBefore := nodeWrites.Load()
		b.StartTimer()
		start := time.Now()
		for range workers {
			creators.Go(func() {
				for {
					i := int(next.Add(1) - 1)
					if i >= pods {
						return
					}
					pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("load-%d", i), Namespace: "default"},
						Spec: corev1.PodSpec{NodeName: fmt.Sprintf("sim-%03d", i%nodes), Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36"}}}}
					if _, err := d.CreatePod(ctx, pod); err != nil {
						b.Error(err)
					}
				}
			})
		}
		creators.Wait()
		created += time.Since(start)
		during += nodeWrites.Load() - writesBefore
		b.StopTimer()
		close(stop)
		busy.Wait()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.N*pods)/created.Seconds(), "pods/s")
	b.ReportMetric(float64(during)/created.Seconds(), "node-writes/s")
}
