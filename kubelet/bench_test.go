package kubelet

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// BenchmarkStaticPodsToRunning measures the whole sync side, from one file source update with n
// static pods to every pod Running in the status manager, on a zero-latency runtime without an API
// server. It reports the time and the live heap per pod at the end, when every pod is running.
func BenchmarkStaticPodsToRunning(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			pods := make([]*v1.Pod, n)
			for i := range pods {
				pods[i] = staticPod(fmt.Sprintf("p%05d", i), types.UID(fmt.Sprintf("uid-%05d", i)), v1.RestartPolicyAlways)
			}
			b.ReportAllocs()
			var heapPerPod float64
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				e := newEnv(b, envOptions{standalone: true, noFileSource: true, discard: true, maxPods: int32(n)})
				b.StartTimer()

				e.handPods(pods...)
				running := 0
				ok := e.run(time.Minute, func() bool {
					for running < n && e.phase(pods[running].UID) == v1.PodRunning {
						running++
					}
					return running == n
				})

				b.StopTimer()
				if !ok {
					b.Fatalf("%d of %d pods Running after %v", running, n, e.now())
				}
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				heapPerPod = float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
				runtime.KeepAlive(e)
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/pod")
			b.ReportMetric(heapPerPod, "heap-B/pod")
		})
	}
}
