package replay

import (
	"flag"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/sim/trace"
)

var liveHeapProfile = flag.String("live-heap-profile", "", "prefix of the files BenchmarkLiveHeap writes the heap profile of each replay's last sample to (<prefix>.<sub-benchmark>)")

// BenchmarkLiveHeap replays ReplayHourOf100StaticPods's hour and the hour of a fleet of 10 nodes ×
// 30 API pods, and samples the live heap after a GC at every ten virtual minutes, once every pod
// is Running: what the nodes keep of their pods (the copies every component holds), not what they
// allocate on the way. It reports the largest sample, and with -live-heap-profile writes the heap
// profile (go tool pprof -sample_index=inuse_space) taken at the last sample. Run it once:
// -benchtime 1x.
func BenchmarkLiveHeap(b *testing.B) {
	for _, bench := range []struct {
		name     string
		scenario func(testing.TB) *Scenario
	}{
		{"100-static-pods", hourOf100Pods},
		{"fleet-10x30", func(tb testing.TB) *Scenario { return hourOfAFleet(tb, 10, 30) }},
	} {
		b.Run(bench.name, func(b *testing.B) {
			s := bench.scenario(b)
			profile := ""
			if *liveHeapProfile != "" {
				profile = *liveHeapProfile + "." + bench.name
			}
			b.ReportAllocs()
			for b.Loop() {
				sampler := &heapSampler{every: 10 * time.Minute, profile: profile}
				e, err := newEngine(s, RunOptions{Out: sampler, Format: trace.JSON})
				if err != nil {
					b.Fatal(err)
				}
				if err := e.run(b.Context(), 0); err != nil {
					b.Fatal(err)
				}
				if !e.result.Passed() {
					b.Fatalf("expectations failed: %+v", e.result.Outcomes)
				}
				if sampler.err != nil {
					b.Fatal(sampler.err)
				}
				if len(sampler.heap) == 0 {
					b.Fatal("the live heap was never sampled")
				}
				b.ReportMetric(slices.Max(sampler.heap), "live-heap-MiB")
			}
		})
	}
}

// writeHeapProfile writes the heap profile of the last GC to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

var (
	fleetHeapNodes   = flag.Int("fleet-heap-nodes", 100, "nodes of BenchmarkFleetHeap's fleet (30 pods each)")
	fleetHeapProfile = flag.String("fleet-heap-profile", "", "file BenchmarkFleetHeap writes the heap profile of the fleet's end to (go tool pprof -sample_index=inuse_space)")
)

// BenchmarkFleetHeap replays ReplayHourOfAFleet's hour of -fleet-heap-nodes nodes × 30 pods, as
// that benchmark does (no trace written out), and measures the live heap after a GC at its end,
// with the engine, and so every node, still held: what a node of a replay fleet keeps. It reports
// the heap a node (live-KB/node), and with -fleet-heap-profile writes the heap profile taken
// then. Run it once: -benchtime 1x.
func BenchmarkFleetHeap(b *testing.B) {
	s := hourOfAFleet(b, *fleetHeapNodes, 30)
	b.ReportAllocs()
	for b.Loop() {
		e, err := newEngine(s, RunOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := e.run(b.Context(), 0); err != nil {
			b.Fatal(err)
		}
		if !e.result.Passed() {
			b.Fatalf("expectations failed: %+v", e.result.Outcomes)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapAlloc)/1e6, "live-MB")
		b.ReportMetric(float64(ms.HeapAlloc)/1e3/float64(*fleetHeapNodes), "live-KB/node")
		if *fleetHeapProfile != "" {
			if err := writeHeapProfile(*fleetHeapProfile); err != nil {
				b.Fatal(err)
			}
		}
		runtime.KeepAlive(e)
	}
}
