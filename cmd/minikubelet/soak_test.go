package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/kubelet/config"
	"github.com/minikubelet/minikubelet/sim/trace"
)

var soakDuration = flag.Duration("soak", 0, "how long BenchmarkSoak runs minikubelet; zero skips it")

const (
	soakPods     = 500
	soakWatchers = 10
	soakSamples  = 10
)

// BenchmarkSoak runs `minikubelet run` on the real clock with soakPods static pods and
// soakWatchers pod informers (list, then watch) on its embedded API server, for -soak of wall
// time, and samples the live heap after a GC at soakSamples even intervals. It reports the heap
// half-way (after the warm-up: every pod started, mirrored and reported, which takes 500 pods
// about two minutes at the kubelet's 50 QPS) and at the end; memory is flat when the two agree. It runs only when -soak is set; run it once: -benchtime 1x.
func BenchmarkSoak(b *testing.B) {
	if *soakDuration <= 0 {
		b.Skip("set -soak to a duration to run the soak")
	}
	for b.Loop() {
		soak(b)
	}
}

func soak(b *testing.B) {
	dir := b.TempDir()
	for i := range soakPods {
		name := fmt.Sprintf("pod-%03d", i)
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(podYAML(name, "", "busybox:1.36")), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	cfg := testConfig(dir, false)
	cfg.Kubelet.Sources.FileCheckFrequency = config.Default().Sources.FileCheckFrequency
	cfg.Kubelet.Machine.MaxPods = soakPods // the node must admit them all: above the kubelet's 110
	cfg.TraceFormat = trace.JSON
	cfg.WriteKubeconfig = filepath.Join(b.TempDir(), "kubeconfig")

	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background().V(10)))
	defer cancel()
	var traced countingWriter
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, &traced) }()

	client := soakClient(b, cfg.WriteKubeconfig)
	var events atomic.Int64
	var factories []informers.SharedInformerFactory
	for range soakWatchers {
		f := informers.NewSharedInformerFactory(client, 0)
		_, err := f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { events.Add(1) },
			UpdateFunc: func(_, _ any) { events.Add(1) },
			DeleteFunc: func(any) { events.Add(1) },
		})
		if err != nil {
			b.Fatal(err)
		}
		f.Start(ctx.Done())
		factories = append(factories, f)
	}

	interval := *soakDuration / soakSamples
	heap := make([]float64, 0, soakSamples)
	start := time.Now()
	for i := range soakSamples {
		select {
		case err := <-done:
			b.Fatalf("run() ended after %v: %v", time.Since(start), err)
		case <-time.After(interval):
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = append(heap, float64(ms.HeapAlloc)/(1<<20))
		b.Logf("soak %v: heap %.1f MiB, goroutines %d, watch events %d, trace %.1f MiB",
			time.Duration(i+1)*interval, heap[i], runtime.NumGoroutine(), events.Load(), float64(traced.n.Load())/(1<<20))
	}
	cancel()
	for _, f := range factories {
		f.Shutdown()
	}
	if err := <-done; err != nil {
		b.Errorf("run() = %v", err)
	}
	b.ReportMetric(heap[soakSamples/2-1], "heap-MiB-mid")
	b.ReportMetric(heap[len(heap)-1], "heap-MiB-end")
	b.ReportMetric(float64(events.Load())/soakWatchers, "events/watcher")
}

// soakClient waits for run to write its kubeconfig and returns a client built from it.
func soakClient(b *testing.B, path string) kubernetes.Interface {
	b.Helper()
	for deadline := time.Now().Add(waitTimeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(path); err != nil {
			continue
		}
		rc, err := restConfigFromKubeconfig(path)
		if err != nil {
			b.Fatal(err)
		}
		rc.QPS, rc.Burst = -1, 0
		return kubernetes.NewForConfigOrDie(rc)
	}
	b.Fatalf("no kubeconfig at %s after %v", path, waitTimeout)
	return nil
}

// countingWriter counts the trace bytes run writes and drops them.
type countingWriter struct{ n atomic.Int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return len(p), nil
}

var _ io.Writer = (*countingWriter)(nil)
