package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

var (
	nodeHeapNodes    = flag.Int("node-heap-nodes", 100, "nodes BenchmarkNodeHeap starts")
	nodeHeapNoEvents = flag.Bool("node-heap-no-events", false, "BenchmarkNodeHeap's nodes send no events (--send-events=false)")
	nodeHeapProfile  = flag.String("node-heap-profile", "", "write the heap profile BenchmarkNodeHeap's nodes leave, once settled, to this file (with -test.memprofilerate)")
)

// BenchmarkNodeHeap measures what a node of `run --nodes N` costs the process before it has
// pods: the live heap and the goroutines of N registered nodes (the API client, the heartbeat
// client, the event broadcaster, the kubelet server and its handlers, the metrics registries,
// the plugin watcher, the volume manager, ...), divided by N. The API server is a `minikubelet
// apiserver` in a process of its own, as a real control plane would be, so that only the kubelet
// side counts (issue 26's memory).
func BenchmarkNodeHeap(b *testing.B) {
	n := *nodeHeapNodes
	dir := b.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	api := exec.Command(os.Args[0], "apiserver", "--addr", "127.0.0.1:0", "--write-kubeconfig", kubeconfig)
	api.Env = append(os.Environ(), asMain+"=main", "XDG_STATE_HOME="+dir, "XDG_CACHE_HOME="+dir)
	stderr := &strings.Builder{}
	api.Stderr = stderr
	if err := api.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- api.Wait() }()
	defer func() {
		_ = api.Process.Kill()
		<-exited
	}()
	ctx, cancel := context.WithTimeout(b.Context(), 10*time.Minute)
	defer cancel()
	for {
		if _, err := os.Stat(kubeconfig); err == nil {
			break
		}
		select {
		case err := <-exited:
			b.Fatalf("the API server exited: %v\n%s", err, stderr)
		case <-ctx.Done():
			b.Fatalf("the API server wrote no kubeconfig\n%s", stderr)
		case <-time.After(50 * time.Millisecond):
		}
	}
	// Two nodes first: what the process builds once, on first use (schemes, the trace, the
	// shared pod watch's and the transport's first state), is not counted against the nodes.
	nodeHeap(b, ctx, kubeconfig, filepath.Join(dir, "warm"), "warm", 2)
	for b.Loop() {
		heap, goroutines := nodeHeap(b, ctx, kubeconfig, filepath.Join(dir, "root"), "sim", n)
		b.ReportMetric(heap/float64(n), "heap-B/node")
		b.ReportMetric(goroutines/float64(n), "goroutines/node")
	}
}

// nodeHeap runs n nodes named prefix-i against the API server of kubeconfig until every one
// registered and took its first (empty) set of pods from the API, and returns the live heap and
// goroutines they added to the process.
func nodeHeap(b *testing.B, ctx context.Context, kubeconfig, rootDir, prefix string, n int) (heap, goroutines float64) {
	b.Helper()
	before, gBefore := liveHeap(), runtime.NumGoroutine()
	cfg := testConfig("", false)
	cfg.Kubelet.Sources.StaticPodPath = ""
	cfg.Nodes, cfg.NodeNamePrefix = n, prefix
	cfg.KubeletAddr = "127.0.0.1:0"
	cfg.Kubeconfig = kubeconfig
	cfg.RootDir = rootDir
	cfg.NoEventClient = *nodeHeapNoEvents
	log := newTraceLog()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		err := run(runCtx, cfg, log)
		log.end(err)
		done <- err
	}()
	// A node is settled once it registered and its sync loop took the api source's first set.
	registered, synced := map[string]bool{}, map[string]bool{}
	from := 0
	for len(registered) < n || len(synced) < n {
		i, e, err := log.waitFor(ctx, from, "node registration and first sync", func(e traceEvent) bool {
			return e.Component == "node" && e.Event == "register" || e.Component == "syncloop" && e.Event == "config"
		})
		if err != nil {
			stop()
			b.Fatal(err)
		}
		if e.Component == "node" {
			registered[e.Pod] = true
		} else {
			synced[e.Node] = true
		}
		from = i + 1
	}
	heap, goroutines = float64(liveHeap()-before), float64(runtime.NumGoroutine()-gBefore)
	if *nodeHeapProfile != "" && prefix != "warm" {
		if err := writeHeapProfile(*nodeHeapProfile); err != nil {
			stop()
			b.Fatal(err)
		}
	}
	stop()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	return heap, goroutines
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// writeHeapProfile writes the heap profile, as of the last collection, to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(pprof.Lookup("heap").WriteTo(f, 0), f.Close())
}
