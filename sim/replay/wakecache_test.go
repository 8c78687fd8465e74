package replay

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// wakeCacheFleet is a three-node fleet with the control plane, whose steps touch single nodes
// directly (stop, start, restart, a cut link, a deleted node, a patched node) and the pods of
// several nodes at one instant.
func wakeCacheFleet() string {
	var b strings.Builder
	b.WriteString(`name: wake-cache-fleet
nodes: [node-1, node-2, node-3]
sources: [api]
controllers: [nodelifecycle, podgc, scheduler]
runtime: {sandboxStart: 500ms, imagePull: 1s, containerStart: 500ms}
steps:
`)
	for n := 1; n <= 3; n++ {
		for i := range 4 {
			fmt.Fprintf(&b, `- at: 0s
  apiCreatePod:
    pod:
      metadata: {name: p-%d-%d, namespace: default}
      spec:
        nodeName: node-%d
        restartPolicy: Always
        containers: [{name: app, image: busybox:1.36, readinessProbe: {exec: {command: ["true"]}, periodSeconds: 3}}]
        tolerations:
        - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 20}
`, n, i, n)
		}
	}
	b.WriteString(`- at: 0s
  apiCreatePod:
    pod:
      metadata: {name: unbound, namespace: default}
      spec: {containers: [{name: app, image: busybox:1.36}]}
- at: 5s
  crashLoop: {pod: default/p-1-0, container: app, exitCode: 1, after: 2s}
- at: 7s
  containerExit: {pod: default/p-2-1, container: app, exitCode: 1}
- at: 9s
  apiDeletePod: {namespace: default, name: p-3-1, gracePeriodSeconds: 5}
- at: 10s
  node: node-2
  stopNode: {}
- at: 12s
  node: node-3
  apiServerDown: {for: 25s}
- at: 15s
  node: node-1
  restartKubelet: {}
- at: 30s
  node: node-1
  apiPatchNode:
    type: merge
    patch: {metadata: {labels: {zone: b}}}
- at: 70s
  node: node-2
  apiDeleteNode: {name: node-2}
- at: 80s
  node: node-2
  startNode: {}
- at: 100s
  node: node-3
  restartKubelet: {}
- at: 180s
  expect: {pod: default/p-1-1, phase: Running}
`)
	return b.String()
}

// replayWith replays s until until (its own end when zero) with the engine's wakes used as mode
// says, and returns the trace.
func replayWith(t *testing.T, s *Scenario, mode WakeCacheMode, until time.Duration) []byte {
	t.Helper()
	var out bytes.Buffer
	if _, err := Run(context.Background(), s, RunOptions{Out: &out, Format: trace.Text, Until: until, WakeCache: mode}); err != nil {
		t.Fatalf("Run(%s) error = %v", s.Name, err)
	}
	return out.Bytes()
}

// TestWakeCacheSameAsFresh replays the library, a fleet whose steps touch single nodes, and a
// fleet of ten nodes for ten minutes (three nodes for two under -short), once with the wakes read
// after a settle kept until the next, each use checked against a fresh read, and once with every
// wake read afresh: no kept wake may differ from a fresh one, and the traces must be the same
// bytes.
func TestWakeCacheSameAsFresh(t *testing.T) {
	if raceEnabled {
		t.Skip(replaysOnOneGoroutine)
	}
	replays := libraryAndWakeFleet(t)
	nodes, until := 10, 10*time.Minute
	if testing.Short() {
		nodes, until = 3, 2*time.Minute
	}
	replays = append(replays, replay{s: hourOfAFleet(t, nodes, 10), until: until})
	for _, r := range replays {
		t.Run(r.s.Name, func(t *testing.T) {
			cached := replayWith(t, r.s, WakeCacheChecked, r.until)
			fresh := replayWith(t, r.s, WakeCacheOff, r.until)
			if diff := FirstDifference(fresh, cached); diff != "" {
				t.Errorf("the trace with the wakes kept differs from the one with fresh wakes: %s", diff)
			}
		})
	}
}

// TestWakeCacheOption checks the modes' names and that Run refuses a mode it does not know
// before it replays anything.
func TestWakeCacheOption(t *testing.T) {
	s, err := Parse("wake-cache-fleet.yaml", []byte(wakeCacheFleet()), LoadOptions{})
	if err != nil {
		t.Fatalf("Parse(wake-cache-fleet.yaml) error = %v", err)
	}
	tests := []struct {
		mode    WakeCacheMode
		name    string
		wantErr bool
	}{
		{mode: WakeCacheOn, name: "On"},
		{mode: WakeCacheOff, name: "Off"},
		{mode: WakeCacheChecked, name: "Checked"},
		{mode: WakeCacheMode(7), name: "WakeCacheMode(7)", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.mode.String(); got != tt.name {
				t.Errorf("String() = %q, want %q", got, tt.name)
			}
			opts := RunOptions{WakeCache: tt.mode}
			if err := opts.validate(); (err != nil) != tt.wantErr {
				t.Errorf("validate() error = %v, want an error: %v", err, tt.wantErr)
			}
			if !tt.wantErr {
				return
			}
			var out bytes.Buffer
			if _, err := Run(context.Background(), s, RunOptions{Out: &out, WakeCache: tt.mode}); err == nil || out.Len() != 0 {
				t.Errorf("Run() error = %v with %d bytes of trace, want an error and no trace", err, out.Len())
			}
		})
	}
}

// replay is a scenario to replay and how long (zero: to its end).
type replay struct {
	s     *Scenario
	until time.Duration
}

// libraryAndWakeFleet loads every scenario of the library and the fleet whose steps touch single
// nodes: the replays the tests that compare two ways of finding something start from.
func libraryAndWakeFleet(t *testing.T) []replay {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "scenarios", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the scenario library: %d files, error %v", len(files), err)
	}
	var replays []replay
	for _, f := range files {
		s, err := Load(f, LoadOptions{})
		if err != nil {
			t.Fatalf("Load(%s) error = %v", f, err)
		}
		replays = append(replays, replay{s: s})
	}
	s, err := Parse("wake-cache-fleet.yaml", []byte(wakeCacheFleet()), LoadOptions{})
	if err != nil {
		t.Fatalf("Parse(wake-cache-fleet.yaml) error = %v", err)
	}
	return append(replays, replay{s: s})
}
