package realcluster

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

var (
	benchNodes       = flag.Int("nodes", 10, "side-by-side benchmark: simulated nodes")
	benchPodsPerNode = flag.Int("pods-per-node", 30, "side-by-side benchmark: pods per node (the Deployment has nodes × pods-per-node replicas)")
	benchTools       = flag.String("tools", "minikubelet,minikubelet-instant,minikubelet-noevents,kwok,kubemark", "side-by-side benchmark: the simulators to run, in order "+
		"(minikubelet-instant is minikubelet with --runtime-latencies=0: a runtime whose steps take no time, as KWOK's stages and kubemark's fake runtime; "+
		"minikubelet-noevents is minikubelet-instant with --send-events=false too: no event client, as kubemark's hollow nodes)")
	benchKubemarkMax = flag.Int("kubemark-max-nodes", 50, "side-by-side benchmark: kubemark runs one process per node, and is left out above this many nodes")
	benchSteady      = flag.Duration("steady", time.Minute, "side-by-side benchmark: how long to keep measuring once every pod is Running and Ready")
	benchClientQPS   = flag.Int("client-qps", 100, "side-by-side benchmark: the controller manager's and the scheduler's --kube-api-qps and --kube-api-burst (0 for their defaults, 20 and 50)")
	benchReport      = flag.String("report", "", "side-by-side benchmark: also write the tables to this file")
	benchMkArgs      = flag.String("minikubelet-args", "--api-latency=0", "side-by-side benchmark: extra arguments of minikubelet run, space-separated")
)

// BenchmarkSideBySide runs the same workload (nodes × pods-per-node pause pods of one
// Deployment) with each simulator in turn, each on a fresh control plane and etcd, and prints
// the tables of docs/benchmarks.md:
//
//	go test -run '^$' -bench SideBySide -benchtime 1x -timeout 0 . -nodes 20
func BenchmarkSideBySide(b *testing.B) {
	tools := strings.Split(*benchTools, ",")
	need := append([]string{}, ControlPlaneBinaries...)
	for _, tool := range tools {
		switch tool {
		case "minikubelet", "minikubelet-instant", "minikubelet-noevents":
			need = append(need, Minikubelet)
		case "kwok":
			need = append(need, Kwok, KwokStages)
		case "kubemark":
			need = append(need, Kubemark)
		default:
			b.Fatalf("-tools: unknown simulator %q (minikubelet, minikubelet-instant, minikubelet-noevents, kwok, kubemark)", tool)
		}
	}
	bins := RequireBinaries(b, need...)
	var results []*Result
	for _, tool := range tools {
		b.Run(tool, func(b *testing.B) {
			if tool == "kubemark" && *benchNodes > *benchKubemarkMax {
				b.Skipf("kubemark runs a process per node: %d nodes is above -kubemark-max-nodes %d", *benchNodes, *benchKubemarkMax)
			}
			for range b.N {
				var sim Simulator
				switch tool {
				case "minikubelet":
					sim = &MinikubeletFleet{Binary: bins[Minikubelet], RBACFile: rbacFile, Args: strings.Fields(*benchMkArgs)}
				case "minikubelet-instant":
					// The flag comes last, so that it wins over one in -minikubelet-args.
					sim = &MinikubeletFleet{Binary: bins[Minikubelet], RBACFile: rbacFile, Label: InstantRuntimeLabel,
						Args: append(strings.Fields(*benchMkArgs), "--runtime-latencies=0")}
				case "minikubelet-noevents":
					sim = &MinikubeletFleet{Binary: bins[Minikubelet], RBACFile: rbacFile, Label: NoEventsLabel,
						Args: append(strings.Fields(*benchMkArgs), "--runtime-latencies=0", "--send-events=false")}
				case "kwok":
					sim = &KWOK{Binary: bins[Kwok], Stages: bins[KwokStages]}
				case "kubemark":
					sim = &KubemarkNodes{Binary: bins[Kubemark]}
				}
				res, err := RunWorkload(b.Context(), sim, WorkloadOptions{
					Binaries: bins, Dir: workDir(b), Nodes: *benchNodes, PodsPerNode: *benchPodsPerNode,
					Steady: *benchSteady, ClientQPS: *benchClientQPS, Logf: b.Logf,
				})
				if err != nil {
					b.Fatal(err)
				}
				results = append(results, res)
				b.ReportMetric(res.NodesReady().Seconds(), "s-nodes-ready")
				b.ReportMetric(res.PodsRunning().Seconds(), "s-pods-running")
				b.ReportMetric(res.Usage.CPU.Seconds(), "cpu-s")
				b.ReportMetric(float64(res.Usage.PeakRSS)/1e6, "peak-MB")
				b.ReportMetric(float64(len(res.Requests)), "requests")
			}
		})
	}
	if len(results) == 0 {
		return
	}
	report := Report(results, runtime.NumCPU())
	fmt.Println(report)
	if *benchReport != "" {
		if err := os.WriteFile(*benchReport, []byte(report), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}
