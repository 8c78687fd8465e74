package scenarios

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmbedsTheLibrary checks that FS holds every scenario of this directory with its golden
// trace, every narration, the lessons index and the glossary, byte for byte as they are on disk.
func TestEmbedsTheLibrary(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("filepath.Glob(*.yaml) = %v, %v, want the scenarios", files, err)
	}
	for _, pattern := range []string{"*.yaml", "*.golden", "*.explain", "lessons/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			disk, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			embedded, err := fs.ReadFile(FS, filepath.ToSlash(f))
			if err != nil {
				t.Errorf("fs.ReadFile(FS, %s) error = %v, want the file", f, err)
				continue
			}
			if !bytes.Equal(disk, embedded) {
				t.Errorf("FS's %s differs from the file on disk", f)
			}
		}
	}
	for _, f := range files {
		golden := strings.TrimSuffix(f, ".yaml") + ".golden"
		if _, err := fs.Stat(FS, golden); err != nil {
			t.Errorf("scenario %s has no golden trace in FS: %v", f, err)
		}
	}
}
