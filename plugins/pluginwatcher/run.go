package pluginwatcher

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2"
)

// OS is the real file system.
type OS struct{}

// MkdirAll is os.MkdirAll.
func (OS) MkdirAll(path string, perm fs.FileMode) error { return os.MkdirAll(path, perm) }

// Stat is os.Stat.
func (OS) Stat(path string) (fs.FileInfo, error) { return os.Stat(path) }

// WalkDir is filepath.WalkDir.
func (OS) WalkDir(root string, fn fs.WalkDirFunc) error { return filepath.WalkDir(root, fn) }

// Run starts the watcher on fsnotify and feeds it events until ctx is done. The lock, when not
// nil, is held around every call into the watcher (the desired state is shared with the
// reconciler). ready, when not nil, is closed once the first traversal is done.
func Run(ctx context.Context, w *Watcher, lock func() func(), ready chan<- struct{}) error {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("plugin watcher: %w", err)
	}
	defer func() { _ = fsw.Close() }()
	if lock == nil {
		lock = func() func() { return func() {} }
	}
	unlock := lock()
	err = w.Start(fsw)
	unlock()
	if err != nil {
		return err
	}
	if ready != nil {
		close(ready)
	}
	logger := klog.FromContext(ctx)
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fsw.Events:
			if !ok {
				return nil
			}
			unlock := lock()
			switch {
			case ev.Has(fsnotify.Create):
				if err := w.Create(ev.Name, fsw); err != nil {
					logger.Error(err, "Error when handling create event", "event", ev)
				}
			case ev.Has(fsnotify.Remove):
				w.Remove(ev.Name)
			}
			unlock()
		case err, ok := <-fsw.Errors:
			if !ok {
				return nil
			}
			logger.Error(err, "Received an error from the plugin registry watcher")
		}
	}
}
