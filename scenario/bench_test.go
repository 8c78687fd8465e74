package scenario

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
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

// BenchmarkReplayHourOf100StaticPods measures replay speed in virtual seconds per wall second.
func BenchmarkReplayHourOf100StaticPods(b *testing.B) {
	s := hourOf100Pods(b)
	b.ReportAllocs()
	for b.Loop() {
		res, err := Run(context.Background(), s, RunOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if !res.Passed() {
			b.Fatalf("expectations failed: %+v", res.Outcomes)
		}
	}
	perRun := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(time.Hour.Seconds()/perRun.Seconds(), "virtual-s/s")
}
