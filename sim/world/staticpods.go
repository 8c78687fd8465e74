package world

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"time"

	"github.com/minikubelet/minikubelet/sources"
)

// StaticPods is a static pod directory in memory: one flat directory at a fixed path. A fixed
// path matters because the file source hashes it into every static pod's UID and names it in
// every error; a temporary directory would change both from run to run. Its changes return the
// watch events inotify would deliver, for the driver to hand to the file source.
//
// The file source relists the directory every 20s: the reads allocate as little as they can (the
// file infos are made at each write, the sorted listing kept between changes), since a relist
// of unchanged files should cost next to nothing.
type StaticPods struct {
	dir     string
	dirInfo *fileInfo
	files   map[string]*staticFile // base name → the file

	// globbed is the last Glob's answer and globbedFor its pattern, kept while globValid, until
	// the directory's list of files changes.
	globbed    []string
	globbedFor string
	globValid  bool
	// version counts the changes (Version).
	version uint64
}

// staticFile is one file of the directory: its content, and what Stat says of it.
type staticFile struct {
	data []byte
	info *fileInfo
}

var (
	_ sources.FileSystem    = (*StaticPods)(nil)
	_ sources.ChangeCounter = (*StaticPods)(nil)
)

// NewStaticPods returns an empty directory at dir.
func NewStaticPods(dir string) *StaticPods {
	return &StaticPods{
		dir:     dir,
		dirInfo: &fileInfo{name: path.Base(dir), mode: fs.ModeDir | 0o755},
		files:   map[string]*staticFile{},
	}
}

// Dir is the directory's path.
func (m *StaticPods) Dir() string { return m.dir }

// Path is the path of a file of the directory.
func (m *StaticPods) Path(name string) string { return path.Join(m.dir, name) }

// Version returns a number that moves with every write, removal and rename: the file source
// does not read a directory again that did not change since its last relist.
func (m *StaticPods) Version() uint64 { return m.version }

// Event is a watch event on the directory, as inotify delivers it to the file source.
type Event = sources.WatchEvent

// Names lists the directory's files, sorted.
func (m *StaticPods) Names() []string {
	out := make([]string, 0, len(m.files))
	for name := range m.files {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Has reports whether the directory holds the file.
func (m *StaticPods) Has(name string) bool { _, ok := m.files[name]; return ok }

// Write writes a file: a new file is IN_CREATE then IN_MODIFY (an add, then a modify), a
// rewritten one IN_MODIFY alone.
func (m *StaticPods) Write(name string, content []byte) []sources.WatchEvent {
	existed := m.Has(name)
	m.version++
	m.files[name] = &staticFile{data: bytes.Clone(content), info: &fileInfo{name: name, size: int64(len(content)), mode: 0o644}}
	if !existed {
		m.globValid = false
	}
	var evs []sources.WatchEvent
	if !existed {
		evs = append(evs, m.event(name, sources.WatchAdd))
	}
	return append(evs, m.event(name, sources.WatchModify))
}

// Remove deletes a file: IN_DELETE.
func (m *StaticPods) Remove(name string) ([]sources.WatchEvent, error) {
	if !m.Has(name) {
		return nil, fmt.Errorf("%s: no such file", m.Path(name))
	}
	delete(m.files, name)
	m.globValid = false
	m.version++
	return []sources.WatchEvent{m.event(name, sources.WatchDelete)}, nil
}

// Rename moves a file inside the directory: IN_MOVED_FROM for the old name (a delete for the
// file source) and IN_MOVED_TO for the new one (an add).
func (m *StaticPods) Rename(from, to string) ([]sources.WatchEvent, error) {
	f, ok := m.files[from]
	if !ok {
		return nil, fmt.Errorf("%s: no such file", m.Path(from))
	}
	delete(m.files, from)
	m.files[to] = &staticFile{data: f.data, info: &fileInfo{name: to, size: f.info.size, mode: f.info.mode}}
	m.globValid = false
	m.version++
	return []sources.WatchEvent{m.event(from, sources.WatchDelete), m.event(to, sources.WatchAdd)}, nil
}

func (m *StaticPods) event(name string, op sources.WatchOp) sources.WatchEvent {
	return sources.WatchEvent{Path: m.Path(name), Op: op}
}

// Stat is os.Stat of the directory or one of its files.
func (m *StaticPods) Stat(p string) (fs.FileInfo, error) {
	if p == m.dir {
		return m.dirInfo, nil
	}
	if path.Dir(p) == m.dir {
		if f, ok := m.files[path.Base(p)]; ok {
			return f.info, nil
		}
	}
	return nil, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
}

// Glob is filepath.Glob over the directory's files, sorted, in a slice of the caller's.
func (m *StaticPods) Glob(pattern string) ([]string, error) {
	if path.Dir(pattern) != m.dir {
		return nil, nil
	}
	if m.globValid && m.globbedFor == pattern {
		return slices.Clone(m.globbed), nil
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
	m.globbed, m.globbedFor, m.globValid = out, pattern, true
	return slices.Clone(out), nil
}

// Open opens one of the directory's files.
func (m *StaticPods) Open(p string) (io.ReadCloser, error) {
	if path.Dir(p) == m.dir {
		if f, ok := m.files[path.Base(p)]; ok {
			// A file of its own at each Open: a handle reused once closed would let its first
			// holder's second Close (or a read after Close) reach the next holder's file. The
			// file source reads a file only when the directory changed (the relist skip), so
			// this allocation is not one a relist.
			r := &openFile{open: true}
			r.content.Reset(f.data)
			return r, nil
		}
	}
	return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
}

// openFile is an open file of the directory: a reader of its content as it was at the open (a
// write replaces the content, it does not change it).
type openFile struct {
	content bytes.Reader
	open    bool
}

// Read reads the content; a closed file fails, as os.File does.
func (f *openFile) Read(b []byte) (int, error) {
	if !f.open {
		return 0, fs.ErrClosed
	}
	return f.content.Read(b)
}

// Close closes the file; a second Close fails, as os.File's does.
func (f *openFile) Close() error {
	if !f.open {
		return fs.ErrClosed
	}
	f.open = false
	f.content.Reset(nil)
	return nil
}

// fileInfo describes a file, a directory or a socket of the world.
type fileInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return i.size }
func (i fileInfo) Mode() fs.FileMode  { return i.mode }
func (i fileInfo) ModTime() time.Time { return time.Time{} }
func (i fileInfo) IsDir() bool        { return i.mode.IsDir() }
func (i fileInfo) Sys() any           { return nil }
