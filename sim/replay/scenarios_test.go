package replay

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minikubelet/minikubelet/sim/trace"
)

var update = flag.Bool("update", false, "rewrite the golden traces in scenarios/")

// scenarioFiles lists the scenario library.
func scenarioFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "scenarios", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios found: %v", err)
	}
	return files
}

func replayToBytes(t *testing.T, s *Scenario, format trace.Format) ([]byte, *Result) {
	t.Helper()
	var out bytes.Buffer
	// Every replay of the library also checks that no component changed a pod it shared.
	res, err := Run(context.Background(), s, RunOptions{Out: &out, Format: format, KeepEvents: true, CheckReadOnlyPods: true})
	if err != nil {
		t.Fatalf("Run(%s) error = %v", s.path, err)
	}
	return out.Bytes(), res
}

// TestScenarios replays every scenario in the library, checks its expectations and compares its
// text trace with the golden file beside it. `go test ./sim/replay -update` rewrites the goldens;
// review the diff like code.
func TestScenarios(t *testing.T) {
	for _, file := range scenarioFiles(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			s, err := Load(file, LoadOptions{})
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			got, res := replayToBytes(t, s, trace.Text)
			if !res.Passed() {
				var sum bytes.Buffer
				res.WriteSummary(&sum)
				t.Errorf("expectations failed:\n%s", sum.String())
			}
			// Every event the replay emitted is one the catalogue registers, with its reason
			// and its function (docs/trace.md).
			unregistered := map[string]bool{}
			for _, e := range res.Events {
				if err := trace.Registered(e); err != nil && !unregistered[err.Error()] {
					unregistered[err.Error()] = true
					t.Errorf("%v", err)
				}
			}
			if len(res.Outcomes) == 0 {
				t.Errorf("scenario %s has no expectations: a teaching scenario must check what it teaches", name)
			}
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden (run go test ./sim/replay -update to create it): %v", err)
			}
			if diff := FirstDifference(want, got); diff != "" {
				t.Errorf("trace differs from %s: %s", golden, diff)
			}
		})
	}
}

// TestDeterminism replays every scenario eight times in each trace format and requires the same
// bytes each time. What makes a replay vary is an order the code does not fix, a map's above
// all. Since Go 1.24 a range over a map of at most eight entries visits them in insertion order
// rotated to a random start among eight slots, so a trace that shows a two-key map's order once
// shows the rarer order in one run of eight: two runs differ in only 22% of pairs (7/32). All n
// runs agree with probability (7/8)^n; the tests stage runs 17 (TestScenarios' one against the
// golden and 8 a format here) and misses such a map 10% of the time, and the one-P stage's 17
// more bring that to 1.1% (three runs a format, 7 a stage, missed it 39% of the time). A
// three-key map is missed by one stage 0.75% of the time ((3/4)^17); five keys, or a map ranged
// at many wake-ups, practically never. The replay has no goroutines whose timing could vary
// (002-replay.md), and CI replays every scenario again with one P (the goldens and this test)
// and under -race.
func TestDeterminism(t *testing.T) {
	const runs = 8
	for _, file := range scenarioFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			s, err := Load(file, LoadOptions{})
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			for _, format := range []trace.Format{trace.Text, trace.JSON} {
				first, _ := replayToBytes(t, s, format)
				for i := 1; i < runs; i++ {
					got, _ := replayToBytes(t, s, format)
					if diff := FirstDifference(first, got); diff != "" {
						t.Fatalf("%v run %d differs from run 1: %s", format, i+1, diff)
					}
				}
			}
		})
	}
}
