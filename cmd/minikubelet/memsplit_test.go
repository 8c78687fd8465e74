package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The runtime's memory classes a resident set is split into (runtime/metrics). They add up to
// /memory/classes/total:bytes, everything the Go runtime mapped; what it returned to the OS
// (heap/released) is not resident, and what is resident beyond the rest is the binary's own
// pages and what the runtime does not account for.
var memSplitNames = []string{
	"/memory/classes/heap/objects:bytes",  // live objects and the garbage not yet swept
	"/memory/classes/heap/unused:bytes",   // the spans' slots that hold no object
	"/memory/classes/heap/free:bytes",     // free spans the runtime keeps
	"/memory/classes/heap/released:bytes", // free spans returned to the OS
	"/memory/classes/heap/stacks:bytes",   // goroutine stacks
	"/memory/classes/os-stacks:bytes",
	"/memory/classes/metadata/mcache/free:bytes",
	"/memory/classes/metadata/mcache/inuse:bytes",
	"/memory/classes/metadata/mspan/free:bytes",
	"/memory/classes/metadata/mspan/inuse:bytes",
	"/memory/classes/metadata/other:bytes",
	"/memory/classes/profiling/buckets:bytes",
	"/memory/classes/other:bytes",
	"/memory/classes/total:bytes",
	"/gc/heap/live:bytes", // marked live by the last collection
	"/gc/heap/goal:bytes",
	"/sched/goroutines:goroutines",
	"/cpu/classes/gc/total:cpu-seconds",
	"/cpu/classes/total:cpu-seconds",
	"/cpu/classes/idle:cpu-seconds",
	"/gc/cycles/total:gc-cycles",
	"/gc/heap/allocs:bytes", // allocated since the process started
}

// memSplit is the process's memory at one instant: its resident set as the kernel counts it,
// and the runtime's classes of what it mapped.
type memSplit struct {
	rss uint64
	// objects .. total are the memory classes of memSplitNames, in bytes.
	objects, unused, free, released, stacks, metadata, profiling, other, total uint64
	live, goal, goroutines                                                     uint64
	// gcCPU and allCPU are the collector's CPU time and all the process's busy CPU time (the
	// runtime's estimate: its total less the Ps' idle time).
	gcCPU, allCPU float64
	cycles        uint64
	// allocs is every byte allocated on the heap so far.
	allocs uint64
	// cpu is the process's user and system CPU time (getrusage), 0 where there is none.
	cpu time.Duration
}

// readMemSplit reads the split now into samples (reused between calls).
func readMemSplit(samples []metrics.Sample) memSplit {
	metrics.Read(samples)
	v := make(map[string]uint64, len(samples))
	var s memSplit
	for _, m := range samples {
		switch m.Value.Kind() {
		case metrics.KindUint64:
			v[m.Name] = m.Value.Uint64()
		case metrics.KindFloat64:
			switch m.Name {
			case "/cpu/classes/gc/total:cpu-seconds":
				s.gcCPU = m.Value.Float64()
			case "/cpu/classes/total:cpu-seconds":
				s.allCPU += m.Value.Float64()
			case "/cpu/classes/idle:cpu-seconds":
				s.allCPU -= m.Value.Float64()
			}
		}
	}
	s.rss = residentBytes()
	s.cpu = processCPU()
	s.objects = v["/memory/classes/heap/objects:bytes"]
	s.unused = v["/memory/classes/heap/unused:bytes"]
	s.free = v["/memory/classes/heap/free:bytes"]
	s.released = v["/memory/classes/heap/released:bytes"]
	s.stacks = v["/memory/classes/heap/stacks:bytes"] + v["/memory/classes/os-stacks:bytes"]
	s.metadata = v["/memory/classes/metadata/mcache/free:bytes"] + v["/memory/classes/metadata/mcache/inuse:bytes"] +
		v["/memory/classes/metadata/mspan/free:bytes"] + v["/memory/classes/metadata/mspan/inuse:bytes"] +
		v["/memory/classes/metadata/other:bytes"]
	s.profiling = v["/memory/classes/profiling/buckets:bytes"]
	s.other = v["/memory/classes/other:bytes"]
	s.total = v["/memory/classes/total:bytes"]
	s.live = v["/gc/heap/live:bytes"]
	s.goal = v["/gc/heap/goal:bytes"]
	s.goroutines = v["/sched/goroutines:goroutines"]
	s.cycles = v["/gc/cycles/total:gc-cycles"]
	s.allocs = v["/gc/heap/allocs:bytes"]
	return s
}

// newMemSplitSamples returns the samples readMemSplit reads.
func newMemSplitSamples() []metrics.Sample {
	samples := make([]metrics.Sample, len(memSplitNames))
	for i, name := range memSplitNames {
		samples[i].Name = name
	}
	return samples
}

// residentBytes is the process's resident set now (/proc/self/statm's second field), 0 where
// there is no /proc.
func residentBytes() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(string(f[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

// peakResident is the process's largest resident set so far (/proc/self/status's VmHWM), 0
// where there is none.
func peakResident() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			f := bytes.Fields(rest)
			if len(f) == 2 && string(f[1]) == "kB" {
				kb, err := strconv.ParseUint(string(f[0]), 10, 64)
				if err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}

// memPeak samples the split every interval from start until stop and keeps the sample of the
// largest resident set: where the memory was when the process needed the most.
type memPeak struct {
	done  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup
	mu    sync.Mutex
	first memSplit
	peak  memSplit
	last  memSplit
	err   error // writing the profile
}

// startMemPeak starts sampling. With a profile path, it writes the heap profile there (as of the
// last collection, none forced: what the collections near the peak found live) whenever the
// resident set passed the last written one's by 10 MB.
func startMemPeak(interval time.Duration, profile string) *memPeak {
	p := &memPeak{done: make(chan struct{})}
	samples := newMemSplitSamples()
	p.first = readMemSplit(samples)
	p.peak = p.first
	p.wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		var written uint64
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
			}
			s := readMemSplit(samples)
			p.mu.Lock()
			if s.rss > p.peak.rss {
				p.peak = s
			}
			p.mu.Unlock()
			if profile != "" && s.rss > written+10e6 {
				written = s.rss
				if err := writePeakProfiles(profile); err != nil {
					p.err = err
					return
				}
			}
		}
	})
	return p
}

// stop ends the sampling and returns the first sample, the peak's and the last (those of the
// first call, when called again).
func (p *memPeak) stop() (first, peak, last memSplit) {
	p.once.Do(func() {
		close(p.done)
		p.wg.Wait()
		p.last = readMemSplit(newMemSplitSamples())
		if p.last.rss > p.peak.rss {
			p.peak = p.last
		}
	})
	return p.first, p.peak, p.last
}

// reportMemPeak reports the split at the peak as benchmark metrics, in MB (10^6 bytes), and
// the collector's share of the process's CPU between first and last.
func reportMemPeak(b *testing.B, first, peak, last memSplit) {
	const mb = 1e6
	b.ReportMetric(float64(peakResident())/mb, "VmHWM-MB")
	b.ReportMetric(float64(peak.rss)/mb, "peak-RSS-MB")
	b.ReportMetric(float64(peak.live)/mb, "peak-heap-live-MB")
	b.ReportMetric(float64(peak.goal)/mb, "peak-heap-goal-MB")
	b.ReportMetric(float64(peak.objects)/mb, "peak-heap-objects-MB")
	b.ReportMetric(float64(peak.unused)/mb, "peak-heap-unused-MB")
	b.ReportMetric(float64(peak.free)/mb, "peak-heap-free-MB")
	b.ReportMetric(float64(peak.released)/mb, "peak-heap-released-MB")
	b.ReportMetric(float64(peak.stacks)/mb, "peak-stacks-MB")
	b.ReportMetric(float64(peak.metadata)/mb, "peak-metadata-MB")
	b.ReportMetric(float64(peak.profiling+peak.other)/mb, "peak-other-MB")
	// What the kernel counts and the runtime does not: the binary's pages, mostly.
	b.ReportMetric((float64(peak.rss)-float64(peak.total-peak.released))/mb, "peak-outside-runtime-MB")
	b.ReportMetric(float64(peak.goroutines), "peak-goroutines")
	if cpu := last.allCPU - first.allCPU; cpu > 0 {
		b.ReportMetric(100*(last.gcCPU-first.gcCPU)/cpu, "gc-cpu-%")
	}
	b.ReportMetric(float64(last.cycles-first.cycles), "gc-cycles")
	b.ReportMetric((last.cpu - first.cpu).Seconds(), "cpu-s")
}

// String is the split in one line, for a log.
func (s memSplit) String() string {
	const mb = 1e6
	return fmt.Sprintf("rss %.1f MB: heap objects %.1f (live %.1f, goal %.1f), unused %.1f, free %.1f, released %.1f, stacks %.1f, metadata %.1f, other %.1f, goroutines %d",
		float64(s.rss)/mb, float64(s.objects)/mb, float64(s.live)/mb, float64(s.goal)/mb, float64(s.unused)/mb,
		float64(s.free)/mb, float64(s.released)/mb, float64(s.stacks)/mb, float64(s.metadata)/mb,
		float64(s.other+s.profiling)/mb, s.goroutines)
}

// writePeakProfiles writes the heap profile to path, as of the last collection, and the
// goroutines, counted by stack, to path.goroutines: the stacks are a part of the resident set
// that the heap profile does not show.
func writePeakProfiles(path string) error {
	f, err := os.Create(path + ".goroutines")
	if err != nil {
		return err
	}
	err = errors.Join(pprof.Lookup("goroutine").WriteTo(f, 1), f.Close())
	return errors.Join(err, writeHeapProfile(path))
}

// TestMemSplitAddsUp checks that the classes the benchmark reports are the runtime's whole
// mapped memory, none left out or counted twice, and that the resident sets read are sane.
func TestMemSplitAddsUp(t *testing.T) {
	runtime.GC() // a live heap is known once a collection ran
	s := readMemSplit(newMemSplitSamples())
	sum := s.objects + s.unused + s.free + s.released + s.stacks + s.metadata + s.profiling + s.other
	if sum != s.total {
		t.Errorf("the memory classes add up to %d bytes, /memory/classes/total:bytes is %d", sum, s.total)
	}
	if s.live == 0 || s.goal < s.live {
		t.Errorf("live heap %d, heap goal %d: want a live heap and a goal above it", s.live, s.goal)
	}
	if _, err := os.Stat("/proc/self/statm"); err != nil {
		t.Skip("no /proc: the resident sets are not read")
	}
	if s.rss == 0 || peakResident() < s.rss {
		t.Errorf("resident set %d bytes, its peak %d: want a resident set and a peak at least as large", s.rss, peakResident())
	}
}
