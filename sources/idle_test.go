package sources

import (
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/podconfig"
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

// countedFS is a staticFS that counts its changes (ChangeCounter) and its reads.
type countedFS struct {
	*staticFS
	version      uint64
	globs, opens int
}

func (c *countedFS) Version() uint64 { return c.version }

func (c *countedFS) Glob(pattern string) ([]string, error) {
	c.globs++
	return c.staticFS.Glob(pattern)
}

func (c *countedFS) Open(path string) (io.ReadCloser, error) {
	c.opens++
	return c.staticFS.Open(path)
}

// TestRelistOfAnUnchangedCounterReadsNothing: with a file system that counts its changes, a
// relist that finds the count as at the last relist sends that relist's SET, traced as usual,
// without reading the directory; a change, a traced error or a store changed by a watch event
// since make the next relist read it all again.
func TestRelistOfAnUnchangedCounterReadsNothing(t *testing.T) {
	const dir = "/etc/kubernetes/manifests"
	cfs := &countedFS{staticFS: newStaticFS(dir, map[string]string{"a.yaml": podYAML("a", "app", ""), "b.yaml": podYAML("b", "app", "")})}
	ev := &events{}
	f := newFile(t, FileOptions{Path: dir, NodeName: "node1", Clock: vclock.New(vclock.Epoch), Tracer: ev, FS: cfs})
	relist := func(what string) *podconfig.Update {
		t.Helper()
		u, err := f.Relist()
		if err != nil {
			t.Fatalf("Relist() %s: error = %v", what, err)
		}
		return u
	}
	reads := func(what string, wantGlobs, wantOpens int) {
		t.Helper()
		if cfs.globs != wantGlobs || cfs.opens != wantOpens {
			t.Errorf("%s: %d globs and %d opens in all, want %d and %d", what, cfs.globs, cfs.opens, wantGlobs, wantOpens)
		}
	}
	first := relist("first")
	reads("first relist", 1, 2)
	ev.take()
	if again := relist("again"); again != first {
		t.Errorf("Relist() of an unchanged directory = %v, want the first SET", again.Pods)
	}
	reads("relist of an unchanged directory", 1, 2)
	if got := ev.take(); len(got) != 1 || got[0].Event != trace.KindSet || got[0].Func != "listConfig" || len(got[0].Pods) != 2 {
		t.Errorf("relist of an unchanged directory traced %+v, want one set of two pods", got)
	}

	// A change moves the counter: the directory is read again.
	cfs.content[filepath.Join(dir, "b.yaml")] = podYAML("b", "other", "")
	cfs.version++
	if changed := relist("after a change"); changed == first || changed.Pods[1].Spec.Containers[0].Name != "other" {
		t.Errorf("Relist() after a change = %v, want a new SET with the new b", changed.Pods)
	}
	reads("relist after a change", 2, 4)

	// A relist that traced an error is not taken as read: the next one reads, and traces, again.
	cfs.content[filepath.Join(dir, "b.yaml")] = "kind: Pod\nspec: ["
	cfs.version++
	for i := range 2 {
		ev.take()
		if _, err := f.Relist(); err == nil {
			t.Fatalf("Relist() %d of a bad manifest: no error", i)
		}
		if got := ev.take(); len(got) != 2 || got[0].Event != trace.KindError {
			t.Errorf("Relist() %d of a bad manifest traced %+v, want the error then the set", i, got)
		}
	}
	reads("two relists of a bad manifest", 4, 8)

	// A watch event that changed the store since: the relist reads, and puts back what it lists.
	cfs.content[filepath.Join(dir, "b.yaml")] = podYAML("b", "app", "")
	cfs.version++
	listed := relist("after the fix")
	reads("relist after the fix", 5, 10)
	cfs.content[filepath.Join(dir, "c.yaml")] = podYAML("c", "app", "")
	cfs.readers[filepath.Join(dir, "c.yaml")] = &fileReader{}
	if _, err := f.HandleEvent(WatchEvent{Path: filepath.Join(dir, "c.yaml"), Op: WatchAdd}); err != nil {
		t.Fatal(err)
	}
	delete(cfs.content, filepath.Join(dir, "c.yaml")) // gone again, and the counter did not move
	back := relist("after the watch event")
	reads("relist after the watch event", 6, 13) // and one open of c.yaml for the watch event
	if diff := gocmp.Diff(names(listed), names(back)); diff != "" {
		t.Errorf("Relist() after the watch event (-want +got):\n%s", diff)
	}
}
