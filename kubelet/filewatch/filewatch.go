package filewatch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"

	"github.com/minikubelet/minikubelet"
)

// maxQueued is the kernel's default fs.inotify.max_queued_events: how many events one inotify
// instance holds unread before it drops them and reports an overflow.
const maxQueued = 16384

// ErrClosed is what a Watch reports once its Shared has stopped: fsnotify's own, so that a
// consumer tells a closed watch as it would tell its own watcher's, without importing this
// package.
var ErrClosed = fsnotify.ErrClosed

// Source adds and removes the watches events come from: an fsnotify.Watcher, or a fake.
type Source interface {
	Add(path string) error
	Remove(path string) error
	Close() error
}

var _ Source = (*fsnotify.Watcher)(nil)

// Options configure New.
type Options struct {
	// Source is the one watcher every Watch shares. Required.
	Source Source
	// Events and Errors are Source's events and errors. Required.
	Events <-chan fsnotify.Event
	Errors <-chan error
}

// Shared is one watcher shared by many Watches: its Run routes each event to the Watches that
// added the event's directory or the event's path itself.
type Shared struct {
	src    Source
	events <-chan fsnotify.Event
	errors <-chan error

	// srcMu serialises the routing table's changes with Source's Add and Remove, so that one
	// Watch's last Remove of a path and another's Add of it reach Source in the table's order.
	// Run never takes it: Source may wait for Run to take an event before it returns.
	srcMu sync.Mutex

	mu      sync.Mutex // guards paths, watches, closed and every Watch's queue
	paths   map[string]map[*Watch]struct{}
	watches map[*Watch]struct{}
	closed  bool
}

// New returns a Shared over opts.Source; nothing is routed before Run.
func New(opts Options) (*Shared, error) {
	if opts.Source == nil || opts.Events == nil || opts.Errors == nil {
		return nil, fmt.Errorf("new file watch: options Source, Events and Errors: %w", minikubelet.ErrMissingOption)
	}
	return &Shared{src: opts.Source, events: opts.Events, errors: opts.Errors,
		paths: map[string]map[*Watch]struct{}{}, watches: map[*Watch]struct{}{}}, nil
}

// NewInotify returns a Shared over one new fsnotify watcher: one inotify instance.
func NewInotify() (*Shared, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("file watch: unable to create inotify: %w", err)
	}
	return New(Options{Source: w, Events: w.Events, Errors: w.Errors})
}

// Run routes events until ctx is done or Source's channels close, then closes Source; every
// Watch then reports ErrClosed. A Shared runs once; one that never runs is closed with Close.
func (s *Shared) Run(ctx context.Context) error {
	defer s.Close()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-s.events:
			if !ok {
				return nil
			}
			s.route(ev)
		case err, ok := <-s.errors:
			if !ok {
				return nil
			}
			s.broadcast(err)
		}
	}
}

// route queues ev for the Watches of its directory, and for those of the path itself that do
// not also watch the directory: a watcher of both gets one event, as fsnotify gives one when it
// watches a directory and an entry of it that is deleted.
func (s *Shared) route(ev fsnotify.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	parent := s.paths[filepath.Dir(ev.Name)]
	for w := range parent {
		w.push(ev)
	}
	for w := range s.paths[ev.Name] {
		if _, both := parent[w]; !both {
			w.push(ev)
		}
	}
}

// broadcast gives err to every Watch: each watcher of its own would have met it.
func (s *Shared) broadcast(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watches {
		w.fail(err)
	}
}

// Close stops the Shared: Source is closed, and every Watch reports ErrClosed.
func (s *Shared) Close() {
	s.mu.Lock()
	s.closed = true
	for w := range s.watches {
		w.signal()
	}
	s.mu.Unlock()
	_ = s.src.Close()
}

// Watch returns a new Watch, which holds no path yet.
func (s *Shared) Watch() *Watch {
	w := &Watch{s: s, wake: make(chan struct{}, 1), paths: map[string]struct{}{}}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watches[w] = struct{}{}
	if s.closed {
		w.signal()
	}
	return w
}

// Watch is one user's share of a Shared: the paths it added, and the events queued for it.
type Watch struct {
	s    *Shared
	wake chan struct{} // holds a signal while events or an error are pending

	// Guarded by s.srcMu.
	paths  map[string]struct{}
	closed bool

	// Guarded by s.mu.
	queue    []fsnotify.Event
	err      error
	overflow bool
}

// Add watches path (a directory's entries, or the file itself) for this Watch; adding it again
// renews the watch, as after the directory was deleted and made again.
func (w *Watch) Add(path string) error {
	path = filepath.Clean(path)
	s := w.s
	s.srcMu.Lock()
	defer s.srcMu.Unlock()
	if w.closed {
		return fmt.Errorf("watch %s: %w", path, fsnotify.ErrClosed)
	}
	_, held := w.paths[path]
	s.mu.Lock()
	subs := s.paths[path]
	if subs == nil {
		subs = map[*Watch]struct{}{}
		s.paths[path] = subs
	}
	subs[w] = struct{}{}
	s.mu.Unlock()
	// fsnotify's Add of a watched path is cheap, and renews a watch the kernel dropped with its
	// directory, which the table cannot know of.
	if err := s.src.Add(path); err != nil {
		if !held {
			s.unsubscribe(path, w)
		}
		return err
	}
	w.paths[path] = struct{}{}
	return nil
}

// Remove stops watching path for this Watch; the path stays watched for the others that hold it.
func (w *Watch) Remove(path string) error {
	path = filepath.Clean(path)
	w.s.srcMu.Lock()
	defer w.s.srcMu.Unlock()
	if _, ok := w.paths[path]; !ok {
		return fmt.Errorf("%w: %s", fsnotify.ErrNonExistentWatch, path)
	}
	return w.remove(path)
}

// remove drops path, and Source's watch of it when no Watch holds it any more. s.srcMu is held.
func (w *Watch) remove(path string) error {
	delete(w.paths, path)
	if !w.s.unsubscribe(path, w) {
		return nil
	}
	// The kernel drops the watch of a deleted directory itself.
	if err := w.s.src.Remove(path); err != nil && !errors.Is(err, fsnotify.ErrNonExistentWatch) {
		return fmt.Errorf("remove watch %s: %w", path, err)
	}
	return nil
}

// unsubscribe takes w off path's Watches and reports whether none is left.
func (s *Shared) unsubscribe(path string, w *Watch) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	subs := s.paths[path]
	delete(subs, w)
	if len(subs) > 0 {
		return false
	}
	delete(s.paths, path)
	return true
}

// Close removes every path of this Watch, as closing a watcher of its own would; the first
// failure to remove one is returned, after every path was tried.
func (w *Watch) Close() error {
	s := w.s
	s.srcMu.Lock()
	defer s.srcMu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	var first error
	for path := range w.paths {
		if err := w.remove(path); err != nil && first == nil {
			first = err
		}
	}
	s.mu.Lock()
	delete(s.watches, w)
	w.queue = nil
	s.mu.Unlock()
	return first
}

// Wake holds a signal while events or an error wait for Drain.
func (w *Watch) Wake() <-chan struct{} { return w.wake }

// Drain appends the queued events to into, in the order they came, and returns them with the
// pending error: fsnotify.ErrEventOverflow when events were lost, Source's own error, or
// ErrClosed once the Shared has stopped.
func (w *Watch) Drain(into []fsnotify.Event) ([]fsnotify.Event, error) {
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	into = append(into, w.queue...)
	if cap(w.queue) > keptQueue {
		// A burst's queue goes with it: a thousand nodes' queues kept at their largest would
		// hold memory for events that are long gone.
		w.queue = nil
	} else {
		clear(w.queue)
		w.queue = w.queue[:0]
	}
	err := w.err
	w.err, w.overflow = nil, false
	if err == nil && s.closed {
		err = ErrClosed
	}
	return into, err
}

// keptQueue is the most queue capacity a Watch keeps between bursts.
const keptQueue = 64

// push queues ev, or drops it once the queue is full. s.mu is held.
func (w *Watch) push(ev fsnotify.Event) {
	if len(w.queue) >= maxQueued {
		if !w.overflow {
			w.overflow = true
			w.fail(fsnotify.ErrEventOverflow)
		}
		return
	}
	w.queue = append(w.queue, ev)
	w.signal()
}

// fail keeps err for Drain unless an error is already pending. s.mu is held.
func (w *Watch) fail(err error) {
	if w.err == nil {
		w.err = err
	}
	w.signal()
}

func (w *Watch) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Watching is how many Watches hold path: how many watchers of their own the one stands for.
func (s *Shared) Watching(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.paths[filepath.Clean(path)])
}
