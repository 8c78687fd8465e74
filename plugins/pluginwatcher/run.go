package pluginwatcher

import (
	"context"
	"errors"
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

// FileWatch is the watch Run feeds the watcher from: a share of the process's file watch
// (filewatch.Watch), which stands for the kubelet's own fsnotify watcher.
type FileWatch interface {
	Watches
	// Wake holds a signal while events or an error wait for Drain.
	Wake() <-chan struct{}
	// Drain appends the pending events to into and returns them with the pending error.
	Drain(into []fsnotify.Event) ([]fsnotify.Event, error)
	Close() error
}

// Run starts the watcher on fw and feeds it fw's events until ctx is done or fw's file watch
// stops; it closes fw. The lock, when not nil, is held around every call into the watcher (the
// desired state is shared with the reconciler). ready, when not nil, is closed once the first
// traversal is done.
func Run(ctx context.Context, w *Watcher, fw FileWatch, lock func() func(), ready chan<- struct{}) error {
	defer func() { _ = fw.Close() }()
	if lock == nil {
		lock = func() func() { return func() {} }
	}
	unlock := lock()
	err := w.Start(fw)
	unlock()
	if err != nil {
		return err
	}
	if ready != nil {
		close(ready)
	}
	logger := klog.FromContext(ctx)
	var events []fsnotify.Event
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-fw.Wake():
		}
		var err error
		events, err = fw.Drain(events[:0])
		unlock := lock()
		for _, ev := range events {
			switch {
			case ev.Has(fsnotify.Create):
				if err := w.Create(ev.Name, fw); err != nil {
					logger.Error(err, "Error when handling create event", "event", ev)
				}
			case ev.Has(fsnotify.Remove):
				w.Remove(ev.Name)
			}
		}
		unlock()
		switch {
		case errors.Is(err, fsnotify.ErrClosed):
			return nil
		case err != nil:
			logger.Error(err, "Received an error from the plugin registry watcher")
		}
	}
}
