package sources

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/podconfig"
)

const (
	// eventBufferLen is the capacity of the channel from the watcher to the relist loop.
	eventBufferLen = 10
	// retryPeriod is how often the watch loop tries to (re)start the watcher.
	retryPeriod = 1 * time.Second
	// maxRetryPeriod caps the back-off after a watcher failure that is not retryable.
	maxRetryPeriod = 20 * time.Second
	// httpFullVerbosityFailures is how many consecutive poll failures are logged at info level.
	httpFullVerbosityFailures = 3
)

// FileRunner drives a File source on a real clock with a real fsnotify watch, as the kubelet's
// sourceFile goroutines do: one goroutine serialises periodic relists and watch events, another
// keeps the watcher running and retries it every second with back-off.
type FileRunner struct {
	core    *File
	clock   clock.WithTicker
	out     chan<- podconfig.Update
	watches func() FileWatch
	// watching, when set, is called each time a watcher is in place; tests wait on it because
	// an edit made before that moment produces no event.
	watching func()
}

// FileRunnerOptions configures NewFileRunner.
type FileRunnerOptions struct {
	// Core is the file source to drive. Required.
	Core *File
	// Clock times relists and watcher retries; it must be the clock Core was built with. Required.
	Clock clock.WithTicker
	// Out receives every update Core produces. Required.
	Out chan<- podconfig.Update
	// Watches opens a watch for each attempt to watch Core's path, where the kubelet opens an
	// inotify instance: a share of the process's file watch (filewatch.Shared's Watch).
	// Required.
	Watches func() FileWatch
}

// FileWatch is one attempt's watch of the path (filewatch.Watch).
type FileWatch interface {
	Add(path string) error
	// Wake holds a signal while events or an error wait for Drain.
	Wake() <-chan struct{}
	// Drain appends the pending events to into and returns them with the pending error.
	Drain(into []fsnotify.Event) ([]fsnotify.Event, error)
	Close() error
}

func (o FileRunnerOptions) validate() error {
	var missing []string
	if o.Core == nil {
		missing = append(missing, "Core")
	}
	if o.Clock == nil {
		missing = append(missing, "Clock")
	}
	if o.Out == nil {
		missing = append(missing, "Out")
	}
	if o.Watches == nil {
		missing = append(missing, "Watches")
	}
	return missingOptions(missing)
}

// NewFileRunner returns a runner for opts.Core, or an error wrapping ErrMissingOption. It starts
// nothing; Run does.
func NewFileRunner(opts FileRunnerOptions) (*FileRunner, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("file source: %w", err)
	}
	return &FileRunner{core: opts.Core, clock: opts.Clock, out: opts.Out, watches: opts.Watches}, nil
}

// validateRunnerOptions names the options a source runner lacks.
func validateRunnerOptions(noCore, noClock, noOut bool) error {
	var missing []string
	if noCore {
		missing = append(missing, "Core")
	}
	if noClock {
		missing = append(missing, "Clock")
	}
	if noOut {
		missing = append(missing, "Out")
	}
	return missingOptions(missing)
}

// Run relists and watches until ctx is done, then stops the watcher and returns nil once both of
// its goroutines have ended.
func (r *FileRunner) Run(ctx context.Context) error {
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "source", podconfig.FileSource, "path", r.core.Path())
	ctx = klog.NewContext(ctx, logger)
	logger.V(2).Info("Watching path")
	events := make(chan WatchEvent, eventBufferLen)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.watchLoop(ctx, events)
	}()
	r.relistLoop(ctx, events)
	wg.Wait()
	return nil
}

// relistLoop is the kubelet's run goroutine: relist when the ticker is due, apply watch events
// as they come.
func (r *FileRunner) relistLoop(ctx context.Context, events <-chan WatchEvent) {
	logger := klog.FromContext(ctx)
	for {
		wake, _ := r.core.NextWake()
		timer := r.clock.NewTimer(wake.Sub(r.clock.Now()))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C():
			u, err := r.core.Relist()
			logRelistError(logger, err)
			if !send(ctx, r.out, u) {
				return
			}
		case ev := <-events:
			timer.Stop()
			u, err := r.core.HandleEvent(ev)
			if err != nil {
				logger.Error(err, "Unable to process watch event")
			}
			if !send(ctx, r.out, u) {
				return
			}
		}
	}
}

// logRelistError logs each manifest a directory relist skipped, or the relist's own error.
func logRelistError(logger klog.Logger, err error) {
	if err == nil {
		return
	}
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, e := range joined.Unwrap() {
			logger.Error(e, "Could not process manifest file")
		}
		return
	}
	logger.Error(err, "Unable to read config path")
}

// watchLoop is the kubelet's startWatch: every retryPeriod, unless backing off, run the watcher
// until it fails. A missing path is retryable (no back-off) and sends an empty SET each time.
func (r *FileRunner) watchLoop(ctx context.Context, events chan<- WatchEvent) {
	logger := klog.FromContext(ctx)
	var backoff watchBackoff
	for {
		if !backoff.active(r.clock.Now()) {
			err := r.watch(ctx, events)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				logger.Error(err, "Unable to read config path")
				if !errors.Is(err, ErrPathNotExist) {
					backoff.next(r.clock.Now())
				}
			}
		}
		// wait.Forever is sliding: the next attempt is a full period after this one returned.
		timer := r.clock.NewTimer(retryPeriod)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C():
		}
	}
}

// watch is the kubelet's doWatch: it blocks for the lifetime of one watch and closes it on
// return.
func (r *FileRunner) watch(ctx context.Context, events chan<- WatchEvent) error {
	u, err := r.core.CheckWatchPath()
	if !send(ctx, r.out, u) || err != nil {
		return err
	}
	w := r.watches()
	defer func() { _ = w.Close() }()
	path := r.core.Path()
	if err := w.Add(path); err != nil {
		return fmt.Errorf("unable to create inotify for path %q: %w", path, err)
	}
	logger := klog.FromContext(ctx)
	logger.V(4).Info("Watching for manifest changes")
	if r.watching != nil {
		r.watching()
	}
	var batch []fsnotify.Event
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.Wake():
		}
		batch, err = w.Drain(batch[:0])
		for _, e := range batch {
			if strings.HasPrefix(filepath.Base(e.Name), ".") {
				logger.V(4).Info("Ignored pod manifest, because it starts with dots", "eventName", e.Name)
				continue
			}
			op, ok := watchOpFor(e.Op)
			if !ok {
				continue
			}
			select {
			case events <- WatchEvent{Path: e.Name, Op: op}:
			case <-ctx.Done():
				return nil
			}
		}
		switch {
		case errors.Is(err, fsnotify.ErrClosed):
			return fmt.Errorf("watcher for %q closed", path)
		case err != nil:
			return fmt.Errorf("error while watching %q: %w", path, err)
		}
	}
}

// watchBackoff is the client-go flowcontrol back-off the kubelet uses for its one "watch" entry:
// 1s doubling to 20s, forgotten after a quiet spell of twice the maximum.
type watchBackoff struct {
	delay time.Duration
	last  time.Time
}

func (b *watchBackoff) expired(now time.Time) bool {
	return b.last.IsZero() || now.Sub(b.last) > 2*maxRetryPeriod
}

func (b *watchBackoff) active(now time.Time) bool {
	return !b.expired(now) && now.Sub(b.last) < b.delay
}

func (b *watchBackoff) next(now time.Time) {
	if b.expired(now) {
		b.delay = retryPeriod
	} else {
		b.delay = min(2*b.delay, maxRetryPeriod)
	}
	b.last = now
}

// HTTPRunner drives an HTTP source on a real clock, as the kubelet's wait.Until loop does, with
// its failure-log throttling.
type HTTPRunner struct {
	core  *HTTP
	clock clock.WithTicker
	out   chan<- podconfig.Update
}

// HTTPRunnerOptions configures NewHTTPRunner.
type HTTPRunnerOptions struct {
	// Core is the HTTP source to drive. Required.
	Core *HTTP
	// Clock times polls; it must be the clock Core was built with. Required.
	Clock clock.WithTicker
	// Out receives every update Core produces. Required.
	Out chan<- podconfig.Update
}

func (o HTTPRunnerOptions) validate() error {
	return validateRunnerOptions(o.Core == nil, o.Clock == nil, o.Out == nil)
}

// NewHTTPRunner returns a runner for opts.Core, or an error wrapping ErrMissingOption. It starts
// nothing; Run does.
func NewHTTPRunner(opts HTTPRunnerOptions) (*HTTPRunner, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("http source: %w", err)
	}
	return &HTTPRunner{core: opts.Core, clock: opts.Clock, out: opts.Out}, nil
}

// Run polls until ctx is done and returns nil. It runs in the caller's goroutine only.
func (r *HTTPRunner) Run(ctx context.Context) error {
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "source", podconfig.HTTPSource)
	failures := 0
	for {
		wake, _ := r.core.NextWake()
		timer := r.clock.NewTimer(wake.Sub(r.clock.Now()))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C():
		}
		u, err := r.core.Poll(ctx)
		if ctx.Err() != nil {
			return nil
		}
		switch {
		case err == nil && failures > 0:
			logger.Info("Successfully read pods from URL")
			failures = 0
		case err == nil:
		case failures < httpFullVerbosityFailures:
			logger.Info("Failed to read pods from URL", "err", err)
			failures++
		case failures == httpFullVerbosityFailures:
			logger.Info("Failed to read pods from URL. Dropping verbosity of this message to V(4)", "err", err)
			failures++
		default:
			logger.V(4).Info("Failed to read pods from URL", "err", err)
			failures++
		}
		if !send(ctx, r.out, u) {
			return nil
		}
	}
}

// send delivers u, if any, unless ctx ends first; it reports whether the caller may go on.
func send(ctx context.Context, out chan<- podconfig.Update, u *podconfig.Update) bool {
	if u == nil {
		return ctx.Err() == nil
	}
	select {
	case out <- *u:
		return true
	case <-ctx.Done():
		return false
	}
}
