package sources

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// oneGoroutineUnderRace is why a test that reads and decodes manifests of nearly the size limit
// on the test's goroutine, on the virtual clock or without one, skips under -race, where a
// megabyte's decoding takes seconds: the race detector needs a second goroutine to find
// anything, and the tests of the runners, which start them, run under it; the plain suite runs
// it.
const oneGoroutineUnderRace = "reads files on the test's goroutine, nothing for the race detector"

// TestUnparsableManifestIsQuotedShortAndDecodedOnce reproduces a manifest just under the size
// limit whose decode error quotes the whole input: the error is cut, and an unchanged bad file is
// not decoded again at the next relist.
func TestUnparsableManifestIsQuotedShortAndDecodedOnce(t *testing.T) {
	if raceEnabled {
		t.Skip(oneGoroutineUnderRace)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(path, []byte("a: "+strings.Repeat("x", maxConfigLength-100)), 0o600); err != nil {
		t.Fatal(err)
	}
	var traced []trace.Event
	f, err := NewFile(FileOptions{Path: dir, NodeName: "node-1", Clock: clock.RealClock{},
		Tracer: trace.Func(func(e trace.Event) { traced = append(traced, e) })})
	if err != nil {
		t.Fatalf("NewFile() error = %v", err)
	}
	_, _, first := f.extractFromFile(path)
	if !errors.Is(first, ErrUnparsable) {
		t.Fatalf("extractFromFile() error = %v, want %v", first, ErrUnparsable)
	}
	if n := len(first.Error()); n > 2*maxErrorQuote {
		t.Errorf("len(extractFromFile() error) = %d, want at most %d", n, 2*maxErrorQuote)
	}
	if !strings.HasSuffix(first.Error(), "more bytes)), please check config file") {
		t.Errorf("extractFromFile() error = ...%q, want the kubelet's ending after the cut", first.Error()[len(first.Error())-60:])
	}
	if _, _, again := f.extractFromFile(path); again != first {
		t.Errorf("extractFromFile() of the unchanged file = a new error, want the cached one")
	}
	if _, err := f.Relist(); err == nil {
		t.Error("Relist() error = nil, want the bad manifest reported")
	}
	for _, e := range traced {
		if len(e.Message) > 2*maxErrorQuote {
			t.Errorf("trace %s message is %d bytes, want at most %d", e.Event, len(e.Message), 2*maxErrorQuote)
		}
	}
}

func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want string
	}{
		{name: "short", in: "bad", want: "bad"},
		{name: "exactly the cap", in: strings.Repeat("x", maxErrorQuote), want: strings.Repeat("x", maxErrorQuote)},
		{name: "long", in: strings.Repeat("x", maxErrorQuote+5), want: strings.Repeat("x", maxErrorQuote) + "... (5 more bytes)"},
		{name: "cut inside a rune", in: strings.Repeat("x", maxErrorQuote-1) + "é" + "yz", want: strings.Repeat("x", maxErrorQuote-1) + "... (4 more bytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorText(errors.New(tc.in)); got != tc.want {
				t.Errorf("errorText(%d bytes) = %q, want %q", len(tc.in), got[max(0, len(got)-30):], tc.want[max(0, len(tc.want)-30):])
			}
		})
	}
}
