package kubelet

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/syncloop"
	"github.com/minikubelet/minikubelet/test/benchfloor"
)

// BenchmarkStaticPodsToRunning measures the whole sync side, from one file source update with n
// static pods to every pod Running in the status manager, on a zero-latency runtime without an API
// server. It reports the time and the heap per pod at the end, when every pod is running (heap-B/pod,
// with the garbage not yet collected; live-B/pod, after a collection), the Kubernetes events a pod
// (counted, not kept: a real run hands them on to the API server), and the time per pod as a
// multiple of the decode floor (benchfloor; the target is 0.3 at 10,000 pods). The 10,000-pod run
// also reports its time a pod over the 1,000-pod run's, both in the same process one after the
// other, as "x-1000-per-pod": the cost per pod must not grow with the pods (the target is 1.5 at
// most).
func BenchmarkStaticPodsToRunning(b *testing.B) {
	staticPodsToRunning(b, true)
}

// BenchmarkStaticPodsTracedToRunning is BenchmarkStaticPodsToRunning with the trace kept, as a
// replay keeps it (the Recorder stamps every event and remembers it; nothing is rendered): the
// benchmark above discards the trace, so it measures the events' building but not their
// recording, which every replay pays. It also reports the events a pod.
func BenchmarkStaticPodsTracedToRunning(b *testing.B) {
	staticPodsToRunning(b, false)
}

func staticPodsToRunning(b *testing.B, discard bool) {
	// perPod1000 is the time a pod at 1,000 pods, once measured. The linearity metric divides
	// the two sizes' times a pod, not their floor ratios: each size measures its own floor, and
	// on a busy machine two floors taken seconds apart differ by more than the times a pod do
	// (97.6 and 69.9 µs in one run whose times a pod were 38.3 and 38.5 µs), so a quotient of
	// ratios measured the floors' noise. Both sizes run in the same process one after the other,
	// which is as close as the times of two runs get; the floor stays in each size's floor-ratio.
	var perPod1000 time.Duration
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			floor := benchfloor.Floor(b)
			pods := make([]*v1.Pod, n)
			for i := range pods {
				pods[i] = staticPod(fmt.Sprintf("p%05d", i), types.UID(fmt.Sprintf("uid-%05d", i)), v1.RestartPolicyAlways)
			}
			b.ReportAllocs()
			var heapPerPod, livePerPod, eventsPerPod, kubeEventsPerPod float64
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				e := newEnv(b, envOptions{standalone: true, noFileSource: true, discard: discard, maxPods: int32(n), countEvents: true})
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
				if e.rec != nil {
					eventsPerPod = float64(e.rec.Len()) / float64(n)
				}
				kubeEventsPerPod = float64(e.events.n) / float64(n)
				// heap-B/pod above is the heap at the end, garbage not yet collected included;
				// live-B/pod is what a collection leaves, the bytes every later cycle marks.
				runtime.GC()
				runtime.ReadMemStats(&after)
				livePerPod = float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
				runtime.KeepAlive(e)
				b.StartTimer()
			}
			perPod := b.Elapsed() / time.Duration(b.N*n)
			b.ReportMetric(float64(perPod.Nanoseconds()), "ns/pod")
			b.ReportMetric(heapPerPod, "heap-B/pod")
			b.ReportMetric(livePerPod, "live-B/pod")
			b.ReportMetric(kubeEventsPerPod, "k8s-events/pod")
			if !discard {
				b.ReportMetric(eventsPerPod, "events/pod")
			}
			benchfloor.Report(b, perPod, floor)
			switch {
			case n == 1000:
				perPod1000 = perPod
			case perPod1000 > 0:
				b.ReportMetric(float64(perPod)/float64(perPod1000), "x-1000-per-pod")
			}
		})
	}
}

// BenchmarkSteadyNode measures what `run` does for a node of 30 running pods after each sync loop
// pass when nothing changed: the kubelet server's snapshot (a fresh one, as every snapshot was
// taken before status stamps, and one after the previous), the Settled hook that took one (before
// snapshots on demand) and the one that takes none, and the runtime keeper's check (the whole
// checkpoint encoded, as before state versions, and the state version alone), and a housekeeping
// pass. A fleet of 100 nodes did each about twice a second a node (housekeeping every 2s).
func BenchmarkSteadyNode(b *testing.B) {
	const n = 30
	pods := make([]*v1.Pod, n)
	for i := range pods {
		pods[i] = staticPod(fmt.Sprintf("p%02d", i), types.UID(fmt.Sprintf("uid-%02d", i)), v1.RestartPolicyAlways)
	}
	e := newEnv(b, envOptions{standalone: true, noFileSource: true, discard: true})
	e.handPods(pods...)
	running := 0
	if !e.run(time.Minute, func() bool {
		for running < n && e.phase(pods[running].UID) == v1.PodRunning {
			running++
		}
		return running == n
	}) {
		b.Fatalf("%d of %d pods Running after %v", running, n, e.now())
	}
	b.Run("snapshot=fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.k.Snapshot()
		}
	})
	b.Run("snapshot=after", func(b *testing.B) {
		prev := e.k.nextSnapshot(nil)
		b.ReportAllocs()
		for b.Loop() {
			prev = e.k.nextSnapshot(prev)
		}
	})
	// What the sync loop runner's Settled hook costs a pass in `run` with a kubelet server: a
	// snapshot after every pass once the period had passed (before snapshots were taken on
	// demand: a steady node passes about once a second, so nearly every pass took one), and
	// the on-demand hook with no log follower (now: the pass's time for the health check).
	// The floor ratio is the hook's cost per pass.
	floor := benchfloor.Floor(b)
	b.Run("pass=sync-tick", func(b *testing.B) {
		// The pass itself, an idle node's sync tick with no pod due, for scale.
		b.ReportAllocs()
		for b.Loop() {
			if err := e.k.Loop.Step(e.ctx, syncloop.SyncTick{}); err != nil {
				b.Fatal(err)
			}
		}
		benchfloor.Report(b, b.Elapsed()/time.Duration(b.N), floor)
	})
	b.Run("pass=housekeeping", func(b *testing.B) {
		// A housekeeping tick of the steady node: nothing to clean, nothing changed since
		// the last pass (which skips the pass's work), every 2s of every node.
		b.ReportAllocs()
		for b.Loop() {
			if err := e.k.Loop.Step(e.ctx, syncloop.HousekeepingTick{}); err != nil {
				b.Fatal(err)
			}
		}
		benchfloor.Report(b, b.Elapsed()/time.Duration(b.N), floor)
	})
	b.Run("settled=snapshot", func(b *testing.B) {
		prev := e.k.nextSnapshot(nil)
		b.ReportAllocs()
		for b.Loop() {
			prev = e.k.nextSnapshot(prev)
			e.k.Board.Publish(prev)
		}
		benchfloor.Report(b, b.Elapsed()/time.Duration(b.N), floor)
	})
	b.Run("settled=on-demand", func(b *testing.B) {
		s := &snapshots{k: e.k, period: 500 * time.Millisecond}
		b.ReportAllocs()
		for b.Loop() {
			s.settled()
		}
		benchfloor.Report(b, b.Elapsed()/time.Duration(b.N), floor)
	})
	b.Run("runtime=checkpoint", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.k.Runtime.Checkpoint(); err != nil {
				b.Fatal(err)
			}
		}
		benchfloor.Report(b, b.Elapsed()/time.Duration(b.N), floor)
	})
	b.Run("runtime=append-checkpoint", func(b *testing.B) {
		var buf bytes.Buffer
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			if _, err := e.k.Runtime.AppendCheckpoint(&buf); err != nil {
				b.Fatal(err)
			}
		}
		benchfloor.Report(b, b.Elapsed()/time.Duration(b.N), floor)
	})
	b.Run("runtime=version", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.k.Runtime.StateVersion()
		}
	})
}
