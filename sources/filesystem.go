package sources

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
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
	// Open opens a file for reading.
	Open(path string) (io.ReadCloser, error)
}

// oSFileSystem is the real disk.
type oSFileSystem struct{}

var _ FileSystem = oSFileSystem{}

// Stat calls os.Stat.
func (oSFileSystem) Stat(path string) (fs.FileInfo, error) { return os.Stat(path) }

// Glob calls filepath.Glob.
func (oSFileSystem) Glob(pattern string) ([]string, error) { return filepath.Glob(pattern) }

// Open calls os.Open.
func (oSFileSystem) Open(path string) (io.ReadCloser, error) { return os.Open(path) }
