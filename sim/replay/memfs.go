package replay

import (
	"bytes"
	"io"
	"io/fs"
	"path"
	"sort"
	"time"

	"github.com/minikubelet/minikubelet/sources"
)

// memDir is the static pod directory of a replay: one flat in-memory directory at a fixed path.
// A fixed path matters because the file source hashes it into every static pod's UID and names
// it in every error; a temporary directory would change both from run to run.
type memDir struct {
	dir   string
	files map[string][]byte // base name → content
}

var _ sources.FileSystem = (*memDir)(nil)

func newMemDir(dir string) *memDir { return &memDir{dir: dir, files: map[string][]byte{}} }

func (m *memDir) has(name string) bool { _, ok := m.files[name]; return ok }

func (m *memDir) Stat(p string) (fs.FileInfo, error) {
	if p == m.dir {
		return memInfo{name: path.Base(p), dir: true}, nil
	}
	if path.Dir(p) == m.dir {
		if data, ok := m.files[path.Base(p)]; ok {
			return memInfo{name: path.Base(p), size: int64(len(data))}, nil
		}
	}
	return nil, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
}

func (m *memDir) Glob(pattern string) ([]string, error) {
	if path.Dir(pattern) != m.dir {
		return nil, nil
	}
	var out []string
	for name := range m.files {
		ok, err := path.Match(path.Base(pattern), name)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, path.Join(m.dir, name))
		}
	}
	sort.Strings(out)
	return out, nil
}

func (m *memDir) Open(p string) (io.ReadCloser, error) {
	if path.Dir(p) == m.dir {
		if data, ok := m.files[path.Base(p)]; ok {
			return io.NopCloser(bytes.NewReader(data)), nil
		}
	}
	return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
}

// memInfo describes a file or the directory of a memDir.
type memInfo struct {
	name string
	size int64
	dir  bool
}

func (i memInfo) Name() string { return i.name }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }
