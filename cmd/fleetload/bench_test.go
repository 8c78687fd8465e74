package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/test/benchfloor"
)

var (
	fleetNodes      = flag.Int("fleet-nodes", 0, "nodes of the `minikubelet run --nodes` BenchmarkFleet starts; zero skips it")
	fleetPerNode    = flag.Int("fleet-pods-per-node", 30, "pods BenchmarkFleet binds to each node")
	fleetSteady     = flag.Duration("fleet-steady", 30*time.Second, "how long BenchmarkFleet measures the steady state")
	fleetRootDir    = flag.String("fleet-root-dir", "", "the fleet's --root-dir; empty gives each run a fresh one in the benchmark's temporary directory")
	fleetProfile    = flag.String("fleet-profile-dir", "", "write the simulator's CPU profile of the first -fleet-profile-seconds from the first create (cpu.pprof) and its heap profile once every pod runs (heap.pprof) here; empty takes none")
	fleetProfileFor = flag.Duration("fleet-profile-seconds", time.Minute, "how long -fleet-profile-dir's CPU profile runs")
	fleetGoroutines = flag.Duration("fleet-profile-goroutines-every", 0, "with -fleet-profile-dir, also fetch the simulator's goroutine profile this often while the pods are created (goroutine-<n>-<milliseconds>ms.txt; each fetch stops the simulator's world briefly); zero fetches none")
)

// BenchmarkFleet is docs/benchmarks.md's fleet in one process: it builds minikubelet, starts
// `minikubelet run --nodes -fleet-nodes` with its embedded API server and the full JSON trace
// thrown away, and runs fleetload against it with -fleet-pods-per-node. It reports the time until
// every node is Ready and every pod Running, per pod, as a multiple of the decode floor
// (floor-ratio; the target for 1,000 × 30 is 4 at most: 4 × 30,000 × the floor in all), the
// seconds it took (s-to-running; s-to-ready until every pod is also Ready; s-to-create until the
// last create returned), the median and 99th percentile of a pod's time from its create to
// Running and Ready (what a node takes, without the wait for the other creates), how many times
// fleetload's watches listed everything again (watch-relists: the times are as late as such a
// list), the simulator's
// CPU seconds from its start until then and fleetload's own, the peak RSS in GiB (target 2) and
// the steady-state CPU in cores (target 0.5). The times are the moments fleetload's watches, which
// start before the first create, delivered the changes.
// It runs only when -fleet-nodes is set, once: -benchtime 1x. Its ns/op is meaningless (the timer
// is stopped while the simulator runs in its own process); read the reported metrics.
func BenchmarkFleet(b *testing.B) {
	if *fleetNodes <= 0 {
		b.Skip("set -fleet-nodes to run a fleet")
	}
	bin := buildMinikubelet(b)
	for b.Loop() {
		b.StopTimer()
		floor := benchfloor.Floor(b)
		res := fleet(b, bin)
		pods := *fleetNodes * *fleetPerNode
		benchfloor.Report(b, res.running/time.Duration(pods), floor)
		b.ReportMetric(res.running.Seconds(), "s-to-running")
		b.ReportMetric(res.ready.Seconds(), "s-to-ready")
		b.ReportMetric(res.created.Seconds(), "s-to-create")
		b.ReportMetric(res.toRunning.median.Seconds(), "pod-s-to-running-median")
		b.ReportMetric(res.toRunning.p99.Seconds(), "pod-s-to-running-p99")
		b.ReportMetric(res.toReady.median.Seconds(), "pod-s-to-ready-median")
		b.ReportMetric(res.toReady.p99.Seconds(), "pod-s-to-ready-p99")
		b.ReportMetric(float64(res.relists), "watch-relists")
		b.ReportMetric(res.cpuToRunning, "cpu-s-to-running")
		b.ReportMetric(res.selfCPU, "fleetload-cpu-s")
		b.ReportMetric(float64(res.peakRSSKB)/(1<<20), "peak-RSS-GiB")
		b.ReportMetric(res.steadyCores, "steady-cores")
		b.StartTimer()
	}
}

// buildMinikubelet builds the simulator into a temporary directory.
func buildMinikubelet(b *testing.B) string {
	b.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		b.Fatalf("the go command builds minikubelet: %v", err)
	}
	bin := filepath.Join(b.TempDir(), "minikubelet")
	out, err := exec.Command(gobin, "build", "-o", bin, "github.com/minikubelet/minikubelet/cmd/minikubelet").CombinedOutput()
	if err != nil {
		b.Fatalf("build minikubelet: %v\n%s", err, out)
	}
	return bin
}

// fleet starts the simulator, measures it with run, and stops it.
func fleet(b *testing.B, bin string) result {
	b.Helper()
	dir := b.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	logFile, err := os.Create(filepath.Join(dir, "minikubelet.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer logFile.Close()
	// A root directory of its own: the default one (the user's state directory) is every fleet's
	// on the machine, whose runtime state a run would take over as a restarted kubelet does.
	root := *fleetRootDir
	if root == "" {
		root = filepath.Join(dir, "root")
	}
	args := []string{"run", "--nodes", fmt.Sprint(*fleetNodes), "--node-name-prefix", "sim", "--port", "0",
		"--write-kubeconfig", kc, "--root-dir", root, "--trace-format", "json"}
	if *fleetProfile != "" {
		// The kubelet server's profiling handler serves the process's profiles; the flags
		// let fleetload's anonymous requests in (a configuration file's default is no
		// anonymous requests).
		conf := filepath.Join(dir, "kubelet-config.yaml")
		if err := os.WriteFile(conf, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nenableProfilingHandler: true\n"), 0o600); err != nil {
			b.Fatal(err)
		}
		args = append(args, "--config", conf, "--anonymous-auth=true", "--authorization-mode", "AlwaysAllow")
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = logFile // stdout, the trace, goes to the null device
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	// The kubeconfig appears once the embedded API server serves.
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(kc); err == nil {
			break
		}
		select {
		case err := <-exited:
			b.Fatalf("minikubelet exited before serving: %v (log in %s)", err, logFile.Name())
		default:
		}
		if time.Since(start) > 10*time.Minute {
			b.Fatalf("no kubeconfig after %v", time.Since(start))
		}
	}
	cfg := config{kubeconfig: kc, nodes: *fleetNodes, prefix: "sim", perNode: *fleetPerNode, pid: cmd.Process.Pid, steady: *fleetSteady, workers: 32,
		profileDir: *fleetProfile, profileFor: *fleetProfileFor, goroutinesEvery: *fleetGoroutines}
	// A bound far above the targets, so that a fleet that never gets there ends the benchmark.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	res, err := run(ctx, cfg, benchLog{b})
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// benchLog writes fleetload's progress to the benchmark's log and to the standard error, whole:
// the test framework shortens a benchmark's log to its first lines, and the last are the results.
type benchLog struct{ b *testing.B }

func (l benchLog) Write(p []byte) (int, error) {
	l.b.Log(strings.TrimRight(string(p), "\n"))
	return os.Stderr.Write(p)
}
