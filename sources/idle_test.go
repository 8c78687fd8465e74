package sources

import (
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// staticFS is a directory of files held in memory that answers without allocating, once warmed
// up, so that a test can count what the file source itself allocates.
type staticFS struct {
	dir     string
	names   []string // sorted paths
	content map[string]string
	readers map[string]*fileReader
}

func newStaticFS(dir string, files map[string]string) *staticFS {
	s := &staticFS{dir: dir, content: map[string]string{}, readers: map[string]*fileReader{}}
	for name, c := range files {
		p := filepath.Join(dir, name)
		s.content[p] = c
		s.readers[p] = &fileReader{}
	}
	for p := range s.content {
		s.names = append(s.names, p)
	}
	return s
}

func (s *staticFS) Stat(path string) (fs.FileInfo, error) {
	if path == s.dir {
		return dirInfo{}, nil
	}
	if _, ok := s.content[path]; ok {
		return fileInfo{}, nil
	}
	return nil, fs.ErrNotExist
}

func (s *staticFS) Glob(string) ([]string, error) { return s.names, nil }

func (s *staticFS) Open(path string) (io.ReadCloser, error) {
	r, ok := s.readers[path]
	if !ok {
		return nil, fs.ErrNotExist
	}
	r.data, r.off = s.content[path], 0
	return r, nil
}

// fileReader reads one file's content; Open rewinds it.
type fileReader struct {
	data string
	off  int
}

func (r *fileReader) Read(p []byte) (int, error) {
	if r.off >= len(r.data) {
		return 0, io.EOF
	}
	n := copy(p, r.data[r.off:])
	r.off += n
	return n, nil
}

func (r *fileReader) Close() error { return nil }

type dirInfo struct{ fileInfo }

func (dirInfo) IsDir() bool       { return true }
func (dirInfo) Mode() fs.FileMode { return fs.ModeDir | 0o755 }

type fileInfo struct{}

func (fileInfo) Name() string       { return "" }
func (fileInfo) Size() int64        { return 0 }
func (fileInfo) Mode() fs.FileMode  { return 0o644 }
func (fileInfo) ModTime() time.Time { return time.Time{} }
func (fileInfo) IsDir() bool        { return false }
func (fileInfo) Sys() any           { return nil }

// TestRelistUnchangedAllocatesNothing checks the file source's steady state, a relist every 20s
// of files that did not change: it reads them into its own buffer, finds the same bytes, and sends
// the SET it sent last time, without allocating.
func TestRelistUnchangedAllocatesNothing(t *testing.T) {
	files := map[string]string{}
	for i := range 20 {
		name := fmt.Sprintf("pod-%02d", i)
		files[name+".yaml"] = podYAML(name, "app", "")
	}
	f := newFile(t, FileOptions{Path: "/etc/kubernetes/manifests", NodeName: "node1", Clock: vclock.New(vclock.Epoch),
		Tracer: trace.Discard, FS: newStaticFS("/etc/kubernetes/manifests", files)})
	first, err := f.Relist()
	if err != nil || len(first.Pods) != 20 {
		t.Fatalf("Relist() = %v, %v, want 20 pods", first, err)
	}
	if n := testing.AllocsPerRun(50, func() {
		if u, err := f.Relist(); err != nil || u != first {
			t.Fatalf("Relist() of unchanged files = %p, %v, want the same SET %p", u, err, first)
		}
	}); n != 0 {
		t.Errorf("Relist() of unchanged files = %v allocations, want 0", n)
	}
}

// TestRelistSendsANewSetAfterAChange checks that the SET a relist sends again is dropped as soon as
// a file changes, appears or goes.
func TestRelistSendsANewSetAfterAChange(t *testing.T) {
	const dir = "/etc/kubernetes/manifests"
	files := map[string]string{"a.yaml": podYAML("a", "app", ""), "b.yaml": podYAML("b", "app", "")}
	sfs := newStaticFS(dir, files)
	f := newFile(t, FileOptions{Path: dir, NodeName: "node1", Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard, FS: sfs})
	first, err := f.Relist()
	if err != nil {
		t.Fatal(err)
	}
	sfs.content[filepath.Join(dir, "b.yaml")] = podYAML("b", "other", "")
	changed, err := f.Relist()
	if err != nil {
		t.Fatal(err)
	}
	if changed == first || changed.Pods[1] == first.Pods[1] || changed.Pods[0] != first.Pods[0] {
		t.Errorf("Relist() after b.yaml changed = %v, want a new SET with a new b and the same a", changed.Pods)
	}
	if got := changed.Pods[1].Spec.Containers[0].Name; got != "other" {
		t.Errorf("b's container = %q, want the changed file's", got)
	}
	delete(sfs.content, filepath.Join(dir, "a.yaml"))
	sfs.names = sfs.names[1:] // a.yaml sorts first
	gone, err := f.Relist()
	if err != nil {
		t.Fatal(err)
	}
	if len(gone.Pods) != 1 || gone.Pods[0] != changed.Pods[1] {
		t.Errorf("Relist() after a.yaml went = %v, want b alone", gone.Pods)
	}
}
