package replay

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/test/benchfloor"
)

// hourOf100Pods builds the replay benchmark's scenario: 100 static pods written at 0s, then an
// hour of kubelet time (sync ticks, relists, housekeeping, resyncs, node heartbeats).
func hourOf100Pods(tb testing.TB) *Scenario {
	tb.Helper()
	var b strings.Builder
	b.WriteString("name: bench-100-static-pods-1h\nsources: [file, api]\nsteps:\n")
	for i := range 100 {
		fmt.Fprintf(&b, `- at: 0s
  writeManifest:
    name: pod-%03d.yaml
    content: |
      apiVersion: v1
      kind: Pod
      metadata: {name: pod-%03d}
      spec: {containers: [{name: app, image: busybox:1.36}]}
`, i, i)
	}
	b.WriteString("- at: 1h\n  expect: {pod: default/pod-099-node-1, phase: Running, mirror: present}\n")
	s, err := Parse("bench.yaml", []byte(b.String()), LoadOptions{})
	if err != nil {
		tb.Fatalf("Parse() error = %v", err)
	}
	return s
}

// BenchmarkReplayHourOf100StaticPods measures replay speed in virtual seconds per wall second, and
// the time of an hour as a multiple of the decode floor (the target is 3,750 at most).
func BenchmarkReplayHourOf100StaticPods(b *testing.B) {
	benchReplayHour(b, hourOf100Pods(b))
}

// benchReplayHour replays s, an hour of virtual time, and reports the virtual seconds replayed
// per wall second and the floor ratio of an hour, which it returns.
func benchReplayHour(b *testing.B, s *Scenario) float64 {
	floor := benchfloor.Floor(b)
	b.ReportAllocs()
	var gc gcCounts
	for b.Loop() {
		if !gc.read {
			// The first iteration's: the floor's own collections are not the replay's.
			gc = readGCCounts()
		}
		res, err := Run(context.Background(), s, RunOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if !res.Passed() {
			b.Fatalf("expectations failed: %+v", res.Outcomes)
		}
	}
	gc.report(b)
	perRun := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(time.Hour.Seconds()/perRun.Seconds(), "virtual-s/s")
	benchfloor.Report(b, perRun, floor)
	return benchfloor.Ratio(perRun, floor)
}

// hourOfAFleet builds the fleet replay benchmark's scenario: nodes nodes against one API server,
// perNode API pods bound to each, created at 0s, then an hour of every node's kubelet time.
func hourOfAFleet(tb testing.TB, nodes, perNode int) *Scenario {
	tb.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "name: bench-fleet-%dx%d-1h\nnodes: %d\nsources: [api]\nsteps:\n", nodes, perNode, nodes)
	for n := range nodes {
		for i := range perNode {
			fmt.Fprintf(&b, `- at: 0s
  apiCreatePod:
    pod:
      metadata: {name: pod-%d-%d, namespace: default}
      spec: {nodeName: node-%d, containers: [{name: app, image: busybox:1.36}]}
`, n+1, i, n+1)
		}
	}
	fmt.Fprintf(&b, "- at: 1h\n  expect: {pod: default/pod-%d-%d, phase: Running}\n", nodes, perNode-1)
	s, err := Parse("bench.yaml", []byte(b.String()), LoadOptions{})
	if err != nil {
		tb.Fatalf("Parse() error = %v", err)
	}
	return s
}

var (
	fleet1000  = flag.Bool("fleet-1000", false, "also run BenchmarkReplayHourOfAFleet/1000x30, a 1,000-node hour")
	fleetNodes = flag.String("fleet-nodes", "", "BenchmarkReplayHourOfAFleet's fleets, as a comma-separated list of node counts (30 pods each) in place of 10 and 100 (and not with -fleet-1000), e.g. 100,500")
)

// BenchmarkReplayHourOfAFleet measures a fleet's replay: 100 nodes × 30 pods for an hour (the
// target is 15 s of wall time at most). A run whose fleet is ten times the one measured before it
// also reports its floor ratio over that run's, as "x-10-nodes" (100 nodes over 10) and
// "x-100-nodes" (1,000 over 100): ten times the nodes must cost ten times the time at most. The
// 1,000-node hour takes a quarter of an hour on a busy machine, beyond go test's default
// timeout, so it runs only with -fleet-1000 (with -benchtime 1x and a -timeout to match, e.g.
// -bench 'ReplayHourOfAFleet/(100|1000)x30$' -fleet-1000 -timeout 60m). -fleet-nodes measures
// other fleets in place of those, and so refuses -fleet-1000 beside it (-fleet-nodes 100,500: a
// 500-node hour when 1,000 nodes take too long on a loaded machine), each after the first also as
// "x-a-node": a node's share of its floor ratio over a node's share in the first.
func BenchmarkReplayHourOfAFleet(b *testing.B) {
	ratios := map[int]float64{} // the floor ratio of each fleet measured, by its nodes
	type size struct{ nodes, perNode int }
	sizes := []size{{10, 30}, {100, 30}}
	if *fleet1000 {
		sizes = append(sizes, size{1000, 30})
	}
	if *fleetNodes != "" {
		if *fleet1000 {
			// -fleet-nodes lists every fleet measured: -fleet-1000 beside it would be dropped.
			b.Fatalf("-fleet-1000 and -fleet-nodes %q: give one (-fleet-nodes 100,1000 for both sizes)", *fleetNodes)
		}
		sizes = sizes[:0]
		for _, f := range strings.Split(*fleetNodes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("-fleet-nodes %q: %q is not a node count", *fleetNodes, f)
			}
			sizes = append(sizes, size{n, 30})
		}
	}
	first := 0 // the nodes of the first fleet measured
	for _, size := range sizes {
		b.Run(fmt.Sprintf("%dx%d", size.nodes, size.perNode), func(b *testing.B) {
			ratio := benchReplayHour(b, hourOfAFleet(b, size.nodes, size.perNode))
			if tenth, ok := ratios[size.nodes/10]; ok && size.nodes%10 == 0 {
				b.ReportMetric(ratio/tenth, fmt.Sprintf("x-%d-nodes", size.nodes/10))
			}
			// A node's share of the hour against a node's share in the first fleet measured:
			// 1 when the time grows as the nodes do (the floors of the two runs move it too).
			if base, ok := ratios[first]; ok && size.nodes != first {
				b.ReportMetric((ratio/float64(size.nodes))/(base/float64(first)), "x-a-node")
			}
			if first == 0 {
				first = size.nodes
			}
			ratios[size.nodes] = ratio
		})
	}
}

var fleetControllers300 = flag.Bool("fleet-controllers-300", false, "also run BenchmarkReplayHourOfAFleetWithControllers/300x30, a 300-node hour")

// BenchmarkReplayHourOfAFleetWithControllers is BenchmarkReplayHourOfAFleet's 100 × 30 fleet with
// the controllers running beside its API server (node lifecycle, taint eviction, pod GC,
// scheduler). With -fleet-controllers-300 it also replays 300 nodes × 30 pods and reports that
// run's floor ratio over the 100-node one's as "x-100-nodes": how the controllers' passes grow
// with the fleet, which a pass that looks at every node makes grow faster than the fleet. The
// 300-node hour takes minutes on a busy machine: run it with -benchtime 1x and a -timeout to
// match.
func BenchmarkReplayHourOfAFleetWithControllers(b *testing.B) {
	ratios := map[int]float64{}
	sizes := []int{100}
	if *fleetControllers300 {
		sizes = append(sizes, 300)
	}
	for _, nodes := range sizes {
		b.Run(fmt.Sprintf("%dx30", nodes), func(b *testing.B) {
			s := hourOfAFleet(b, nodes, 30)
			s.Controllers = []string{"nodelifecycle", "podgc", "scheduler"}
			ratio := benchReplayHour(b, s)
			if base, ok := ratios[100]; ok && nodes != 100 {
				b.ReportMetric(ratio/base, "x-100-nodes")
			}
			ratios[nodes] = ratio
		})
	}
}

// BenchmarkReplayHourOfASmallFleetWithControllers is BenchmarkReplayHourOfAFleetWithControllers
// at 30 nodes: the same controllers over a fleet small enough to compare trees run by run.
func BenchmarkReplayHourOfASmallFleetWithControllers(b *testing.B) {
	s := hourOfAFleet(b, 30, 30)
	s.Controllers = []string{"nodelifecycle", "podgc", "scheduler"}
	benchReplayHour(b, s)
}

// gcCounts is the garbage collector's share of a benchmark, from runtime/metrics: a fleet's
// heap grows with its nodes, and each collection marks all of it, so a benchmark of the fleet's
// scaling reports how much of its CPU the collector took, how many cycles it ran and how much
// it found live.
type gcCounts struct {
	read           bool
	gcCPU, userCPU float64 // seconds, the collector's and the program's own
	cycles         uint64
}

var gcMetrics = []string{"/cpu/classes/gc/total:cpu-seconds", "/cpu/classes/user:cpu-seconds", "/gc/cycles/total:gc-cycles", "/gc/heap/live:bytes"}

// readGCCounts reads the counts so far. The CPU classes are estimates the runtime brings up to
// date at each collection, which is all a share of the whole run needs.
func readGCCounts() gcCounts {
	samples := gcSamples()
	return gcCounts{read: true, gcCPU: samples[0].Value.Float64(), userCPU: samples[1].Value.Float64(), cycles: samples[2].Value.Uint64()}
}

func gcSamples() []metrics.Sample {
	samples := make([]metrics.Sample, len(gcMetrics))
	for i, name := range gcMetrics {
		samples[i].Name = name
	}
	metrics.Read(samples)
	return samples
}

// report reports, since c was read: the collector's share of the CPU the program and the
// collector used (gc-%), its cycles an iteration, and the heap the last cycle found live
// (live-MB; the last iteration's, near its end). It reads the live heap before it collects
// once more, so that the CPU counts take in the last cycles' work; that forced cycle's own full
// mark counts into gc-% too (about one cycle's share: 1/24 of the collector's CPU in the
// 100-node hour's 24 cycles), where gc-cycles/op leaves it out.
func (c gcCounts) report(b *testing.B) {
	live := gcSamples()[3].Value.Uint64()
	runtime.GC()
	end := readGCCounts()
	gcCPU, userCPU := end.gcCPU-c.gcCPU, end.userCPU-c.userCPU
	if gcCPU+userCPU > 0 {
		b.ReportMetric(100*gcCPU/(gcCPU+userCPU), "gc-%")
	}
	// The collection just forced is not the replay's.
	b.ReportMetric(float64(end.cycles-c.cycles-1)/float64(b.N), "gc-cycles/op")
	b.ReportMetric(float64(live)/1e6, "live-MB")
}
