package replay

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fuzzMaxDuration bounds the scenarios FuzzReplay plays, so that a run that does not return within
// replayHangLimit is a hang and not a long but legitimate replay.
const (
	fuzzMaxDuration = time.Hour
	replayHangLimit = time.Minute
)

// FuzzReplay feeds scenario bytes to the whole replay: Parse, then Run. Whatever the bytes, the
// replay either runs to its end or returns an error; it never panics, and it never runs on: a
// replay still going after replayHangLimit of wall time fails. The repository's scenarios seed
// the corpus when fuzzing; the plain suite, whose TestScenarios and TestDeterminism already replay
// every scenario, runs only the seeds in testdata and the one below.
func FuzzReplay(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "scenarios", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	if !fuzzing() {
		paths = nil
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("name: x\nsources: [file, http, api]\nsteps:\n- at: 0s\n  serveHTTP: {status: 200, body: '{'}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data, LoadOptions{MaxDuration: fuzzMaxDuration})
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), replayHangLimit)
		defer cancel()
		res, err := Run(ctx, s, RunOptions{})
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			t.Fatalf("replay of a scenario of at most %v still running after %v: %v", fuzzMaxDuration, replayHangLimit, err)
		case err == nil && res == nil:
			t.Fatal("Run() = nil, nil: want a result or an error")
		}
	})
}

// fuzzing reports whether the test binary runs a fuzz target (-test.fuzz) rather than only its
// seed corpus.
func fuzzing() bool {
	fl := flag.Lookup("test.fuzz")
	return fl != nil && fl.Value.String() != ""
}
