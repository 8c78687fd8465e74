package pluginwatcher

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// FS is the file system the watcher reads.
type FS interface {
	MkdirAll(path string, perm fs.FileMode) error
	Stat(path string) (fs.FileInfo, error)
	WalkDir(root string, fn fs.WalkDirFunc) error
}

// Watches adds a file system watch on a directory.
type Watches interface {
	Add(dir string) error
}

// Desired is the plugin manager's desired state of the world.
type Desired interface {
	// AddOrUpdatePlugin records the socket with a fresh id, which it returns.
	AddOrUpdatePlugin(path string) (id string, err error)
	RemovePlugin(path string)
}

// Options configure a Watcher.
type Options struct {
	// Dir is the plugin registry directory. Required.
	Dir string
	// FS is read for stats and walks. Required.
	FS FS
	// Desired receives the sockets. Required.
	Desired Desired
	// Tracer receives the watcher's events. Required; trace.Discard drops them.
	Tracer trace.Tracer
}

func (o Options) validate() error {
	var missing []string
	if o.Dir == "" {
		missing = append(missing, "Dir")
	}
	if o.FS == nil {
		missing = append(missing, "FS")
	}
	if o.Desired == nil {
		missing = append(missing, "Desired")
	}
	if o.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	if len(missing) > 0 {
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	return nil
}

// Watcher is the plugin watcher's core.
type Watcher struct {
	opts Options
}

// New returns a Watcher.
func New(opts Options) (*Watcher, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new plugin watcher: %w", err)
	}
	return &Watcher{opts: opts}, nil
}

// Start creates the directory and traverses it, the watcher's init and its first traversal.
// A failed MkdirAll or watch of the directory itself is returned; errors below it only traced.
func (w *Watcher) Start(watches Watches) error {
	if err := w.opts.FS.MkdirAll(w.opts.Dir, 0o755); err != nil {
		return fmt.Errorf("plugin registry %s: %w", w.opts.Dir, err)
	}
	if err := w.traverse(w.opts.Dir, watches); err != nil {
		// The kubelet logs a failed traversal and starts anyway.
		w.opts.Tracer.Emit(trace.Event{Component: trace.PluginWatcher, Event: trace.KindError, Reason: "Traverse", Func: "traversePluginDir", Message: err.Error()})
	}
	return nil
}

// traverse watches dir and every directory below it, and handles every socket as a create event.
func (w *Watcher) traverse(dir string, watches Watches) error {
	if err := watches.Add(dir); err != nil {
		return fmt.Errorf("watch %s: %w", dir, err)
	}
	return w.opts.FS.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return fmt.Errorf("walk %s: %w", dir, err)
			}
			w.opts.Tracer.Emit(trace.Event{Component: trace.PluginWatcher, Event: trace.KindError, Reason: "Traverse", Func: "traversePluginDir", Message: err.Error()})
			return nil
		}
		if path == dir {
			return nil
		}
		if d.IsDir() {
			if err := watches.Add(path); err != nil {
				w.opts.Tracer.Emit(trace.Event{Component: trace.PluginWatcher, Event: trace.KindError, Reason: "Watch", Func: "traversePluginDir", Message: err.Error()})
			}
			return nil
		}
		if d.Type()&fs.ModeSocket != 0 {
			if err := w.Create(path, watches); err != nil {
				w.opts.Tracer.Emit(trace.Event{Component: trace.PluginWatcher, Event: trace.KindError, Reason: "Create", Func: "handleCreateEvent", Message: err.Error()})
			}
		}
		return nil
	})
}

// Create is handleCreateEvent: dotfiles are ignored, a directory is traversed, a socket goes to
// the desired state with a fresh id.
func (w *Watcher) Create(path string, watches Watches) error {
	info, err := w.opts.FS.Stat(path)
	if err != nil {
		return fmt.Errorf("stat file %s failed: %w", path, err)
	}
	if strings.HasPrefix(filepath.Base(path), ".") {
		return nil
	}
	if info.IsDir() {
		return w.traverse(path, watches)
	}
	if info.Mode()&fs.ModeSocket == 0 {
		return nil
	}
	id, err := w.opts.Desired.AddOrUpdatePlugin(path)
	if err != nil {
		return fmt.Errorf("socket %s: %w", path, err)
	}
	w.opts.Tracer.Emit(trace.Event{Component: trace.PluginWatcher, Event: trace.KindAdd, Func: "handlePluginRegistration",
		Message: fmt.Sprintf("socket=%s id=%s", w.rel(path), id)})
	return nil
}

// Remove is handleDeleteEvent: the path leaves the desired state, whatever it was.
func (w *Watcher) Remove(path string) {
	w.opts.Desired.RemovePlugin(path)
	w.opts.Tracer.Emit(trace.Event{Component: trace.PluginWatcher, Event: trace.KindRemove, Func: "handleDeleteEvent",
		Message: fmt.Sprintf("socket=%s", w.rel(path))})
}

// rel names a path relative to the registry directory, so traces do not depend on where it is.
func (w *Watcher) rel(path string) string {
	if r, err := filepath.Rel(w.opts.Dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}
