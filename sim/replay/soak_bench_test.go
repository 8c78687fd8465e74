package replay

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/sim/trace"
)

var soakHours = flag.Int("soak-hours", 0, "virtual hours BenchmarkReplaySoak plays; zero skips it")

const (
	replaySoakPods     = 500
	replaySoakWatchers = 10
)

// BenchmarkReplaySoak replays replaySoakPods static pods (file and API sources, mirror pods,
// status writes) for -soak-hours of virtual time while replaySoakWatchers HTTP watches of every
// pod stream from the replay's API server, and samples the live heap after a GC at every virtual
// hour. It reports the heap after the first hour (warm-up) and at the end; memory is flat when the
// two agree. It runs only when -soak-hours is set; run it once: -benchtime 1x.
func BenchmarkReplaySoak(b *testing.B) {
	if *soakHours <= 0 {
		b.Skip("set -soak-hours to run the replay soak")
	}
	for b.Loop() {
		replaySoak(b, *soakHours)
	}
}

func replaySoak(b *testing.B, hours int) {
	var sb strings.Builder
	// The node must admit them all: maxPods above the kubelet's 110.
	fmt.Fprintf(&sb, "name: soak\nsources: [file, api]\nsettings: {maxPods: %d}\nsteps:\n", replaySoakPods)
	for i := range replaySoakPods {
		fmt.Fprintf(&sb, "- at: 0s\n  writeManifest:\n    name: pod-%03d.yaml\n    content: |\n      apiVersion: v1\n      kind: Pod\n      metadata: {name: pod-%03d}\n      spec: {containers: [{name: app, image: busybox:1.36}]}\n", i, i)
	}
	fmt.Fprintf(&sb, "- at: %dh\n  expect: {pod: default/pod-%03d-node-1, phase: Running, mirror: present}\n", hours, replaySoakPods-1)
	s, err := Parse("soak.yaml", []byte(sb.String()), LoadOptions{MaxDuration: time.Duration(hours) * time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	sampler := &heapSampler{every: time.Hour}
	e, err := newEngine(s, RunOptions{Out: sampler, Format: trace.JSON})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(e.cluster.Server().Handler())
	var events atomic.Int64
	var wg sync.WaitGroup
	for range replaySoakWatchers {
		resp, err := ts.Client().Get(ts.URL + "/api/v1/pods?watch=1")
		if err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("watch = %s", resp.Status)
		}
		wg.Go(func() {
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 4<<20)
			for sc.Scan() {
				events.Add(1)
			}
		})
	}
	if err := e.run(context.Background(), 0); err != nil {
		b.Fatal(err)
	}
	e.cluster.Server().CloseWatches()
	wg.Wait()
	ts.Close()
	if !e.result.Passed() {
		b.Fatalf("expectations failed: %+v", e.result.Outcomes)
	}
	if len(sampler.heap) < 2 {
		b.Fatalf("heap sampled %d times, want one per virtual hour", len(sampler.heap))
	}
	// One line: a benchmark's log keeps only its first lines.
	b.Logf("heap by virtual hour (MiB): %.1f", sampler.heap)
	b.ReportMetric(sampler.heap[0], "heap-MiB-1h")
	b.ReportMetric(sampler.heap[len(sampler.heap)-1], "heap-MiB-end")
	b.ReportMetric(float64(events.Load())/replaySoakWatchers, "events/watcher")
}

// heapSampler reads the JSON trace and samples the live heap each time the virtual time passes
// the next multiple of every after next.
type heapSampler struct {
	every   time.Duration
	next    float64 // the virtual second after which the next sample is due
	heap    []float64
	partial []byte
	// profile, when set, is the file each sample writes the heap profile to; err is the first
	// failure to write it.
	profile string
	err     error
}

func (h *heapSampler) Write(p []byte) (int, error) {
	h.partial = append(h.partial, p...)
	for {
		i := bytes.IndexByte(h.partial, '\n')
		if i < 0 {
			break
		}
		h.line(h.partial[:i])
		h.partial = h.partial[i+1:]
	}
	if len(h.partial) == 0 {
		h.partial = nil
	}
	return len(p), nil
}

func (h *heapSampler) line(l []byte) {
	rest, ok := bytes.CutPrefix(l, []byte(`{"t":`))
	if !ok {
		return
	}
	end := bytes.IndexByte(rest, ',')
	if end < 0 {
		return
	}
	t, err := strconv.ParseFloat(string(rest[:end]), 64)
	if err != nil || t < h.next+h.every.Seconds() {
		return
	}
	h.next += h.every.Seconds()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mib := float64(ms.HeapAlloc) / (1 << 20)
	h.heap = append(h.heap, mib)
	if h.profile != "" && h.err == nil {
		h.err = writeHeapProfile(h.profile)
	}
}
