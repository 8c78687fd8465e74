package sources

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// FileSystem is what the file source reads the static pod path through. Paths are the
// operating system's (absolute or relative to the working directory), as the kubelet uses them.
//
// The default reads the real disk. Replay passes an in-memory one, so that the static pod path
// can be the same fixed string on every run: the path is part of every static pod's UID and of
// every error message, and a temporary directory would make neither repeatable.
type FileSystem interface {
	// Stat follows symbolic links, like os.Stat.
	Stat(path string) (fs.FileInfo, error)
	// Glob returns the paths matching pattern, like filepath.Glob.
	Glob(pattern string) ([]string, error)
	// Open opens a regular file for reading. It never blocks: anything else (a FIFO, a device,
	// a socket) is refused with an error wrapping ErrNotRegular.
	Open(path string) (io.ReadCloser, error)
}

// ChangeCounter is what a FileSystem may also implement when it can tell cheaply that nothing
// changed: Version returns a number that moves with every change of anything Stat, Glob or Open
// answer. A directory relist that finds the number as at its last relist, which traced no error,
// and a store that no watch event changed since, sends the SET it sent then without reading the directory again: it would find the same files
// with the same bytes. The kubelet reads every file at every relist; what it reads is all that is
// observable, and it is the same. The real disk has no such number.
type ChangeCounter interface {
	Version() uint64
}

// osFileSystem is the real disk.
type osFileSystem struct{}

var _ FileSystem = osFileSystem{}

// Stat calls os.Stat.
func (osFileSystem) Stat(path string) (fs.FileInfo, error) { return os.Stat(path) }

// Glob calls filepath.Glob.
func (osFileSystem) Glob(pattern string) ([]string, error) { return filepath.Glob(pattern) }

// Open opens path without blocking and refuses anything but a regular file. A plain open(2) of a
// FIFO blocks until a writer appears, which would stall the file source (and its shutdown) for
// good; a type check before the open would race with a rename.
func (osFileSystem) Open(path string) (io.ReadCloser, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w: %v", path, ErrNotRegular, info.Mode())
	}
	return f, nil
}
