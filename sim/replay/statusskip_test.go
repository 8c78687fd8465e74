package replay

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// replaysOnOneGoroutine is why a test that replays the library again, on the test's goroutine,
// skips under -race: the replay starts no goroutines of this module (the prometheus client and
// go-cmp may start their own), so the race detector needs another goroutine to find anything in
// it, and TestScenarios replays every scenario of the library under -race. Not everything is
// covered twice: TestWakeCacheSameAsFresh also replays two fleets that are not in the library,
// which run on the test's goroutine as the library's scenarios do, under -race nowhere else. The
// plain suite runs both tests.
const replaysOnOneGoroutine = "replays on one goroutine, no goroutines of this module; TestScenarios replays every scenario under -race"

// TestStatusSkipAcrossTheLibrary is the evidence for the pod sync's periodic skip of an unchanged
// status: it replays every scenario of the library with a sync frequency of 2s, so that running
// pods are synced again often enough for the skip to be taken (with the library's own settings
// it is taken a few times only), and with RunOptions.CheckStatusSkip, so that every sync that
// takes the skip builds the status all the same and fails the replay if the status manager would
// not have found it unchanged. The expectations are not judged: a shorter sync frequency changes
// what some scenarios teach.
func TestStatusSkipAcrossTheLibrary(t *testing.T) {
	if raceEnabled {
		t.Skip(replaysOnOneGoroutine)
	}
	if testing.Short() {
		t.Skip("replays the whole library")
	}
	const syncFrequency = 2 * time.Second
	total, scenarios := 0, 0
	for _, file := range scenarioFiles(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		s, err := Load(file, LoadOptions{})
		if err != nil {
			t.Fatalf("%s: Load() error = %v", name, err)
		}
		s.kubelet.SyncFrequency = syncFrequency
		res, err := Run(context.Background(), s, RunOptions{Out: io.Discard, CheckStatusSkip: true})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		total += res.StatusSkips
		if res.StatusSkips > 0 {
			scenarios++
		}
	}
	t.Logf("the skip was taken %d times in %d scenarios", total, scenarios)
	// The check means something only if the skip was taken often, in many scenarios.
	const wantSkips, wantScenarios = 400, 30
	if total < wantSkips || scenarios < wantScenarios {
		t.Errorf("the skip was taken %d times in %d scenarios, want at least %d times in %d", total, scenarios, wantSkips, wantScenarios)
	}
}
