package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestResolveProfilePath checks where a relative profile path goes: into -test.outputdir when go
// test gave one, else into the working directory (the package's, under go test).
func TestResolveProfilePath(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for _, tc := range []struct {
		name, outputDir, want string
	}{
		{name: "/var/heap.pprof", want: "/var/heap.pprof"},
		{name: "/var/heap.pprof", outputDir: out, want: "/var/heap.pprof"},
		{name: "heap.pprof", want: filepath.Join(wd, "heap.pprof")},
		{name: "heap.pprof", outputDir: out, want: filepath.Join(out, "heap.pprof")},
		{name: "profiles/../heap.pprof", outputDir: out, want: filepath.Join(out, "heap.pprof")},
	} {
		got, err := resolveProfilePath(tc.name, tc.outputDir)
		if err != nil {
			t.Errorf("resolveProfilePath(%q, %q): %v", tc.name, tc.outputDir, err)
			continue
		}
		if got != tc.want {
			t.Errorf("resolveProfilePath(%q, %q) = %q, want %q", tc.name, tc.outputDir, got, tc.want)
		}
	}
}

// TestProfilePathNeedsItsDirectory checks that a profile that could not be written fails before
// the benchmark runs, naming the path, and that none is no path.
func TestProfilePathNeedsItsDirectory(t *testing.T) {
	dir := t.TempDir()
	if got, err := profilePath(""); got != "" || err != nil {
		t.Errorf(`profilePath("") = %q, %v; want "", nil`, got, err)
	}
	if got, err := profilePath(filepath.Join(dir, "heap.pprof")); got != filepath.Join(dir, "heap.pprof") || err != nil {
		t.Errorf("profilePath in an existing directory = %q, %v; want the path, nil", got, err)
	}
	missing := filepath.Join(dir, "missing", "heap.pprof")
	if _, err := profilePath(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("profilePath(%q) = %v; want an error naming the path", missing, err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := profilePath(filepath.Join(file, "heap.pprof")); err == nil {
		t.Errorf("profilePath under a file: no error")
	}
}

// heldForProfile keeps allocHeldForProfile's allocation live while the profile is written.
var heldForProfile []byte

//go:noinline
func allocHeldForProfile() []byte { return make([]byte, 16<<20) }

// TestWriteHeapProfileHoldsTheHeap checks that the file -node-heap-profile names is a heap
// profile with the live heap in it, at the default sampling rate: a 16 MiB allocation is
// sampled (all but certainly, at one sample in 512 KiB on average) and named by its function.
func TestWriteHeapProfileHoldsTheHeap(t *testing.T) {
	heldForProfile = allocHeldForProfile()
	defer func() { heldForProfile = nil }()
	runtime.GC() // the profile is as of the last collection
	path := filepath.Join(t.TempDir(), "heap.pprof")
	if err := writeHeapProfile(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("the profile is not gzipped protobuf: %v", err)
	}
	data, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"inuse_space", "allocHeldForProfile"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the heap profile (%d bytes) has no %q", len(data), want)
		}
	}
	if err := writeHeapProfile(filepath.Join(path, "under-a-file")); err == nil || !strings.Contains(err.Error(), "heap profile") {
		t.Errorf("writeHeapProfile under a file = %v; want an error about the heap profile", err)
	}
}
