package trace

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// RecorderOptions configures a Recorder.
type RecorderOptions struct {
	// Clock stamps each event. Required.
	Clock clock.PassiveClock
	// Start is the instant that is t=0 in the trace. Zero means Clock.Now() at construction.
	Start time.Time
	// Out receives each event as it is emitted, rendered in Format. Nil writes nothing.
	Out io.Writer
	// Format is how events are written to Out.
	Format Format
	// Keep makes the Recorder remember every event for Events. Replay and tests use it.
	Keep bool
	// View, when not nil, chooses the events written to Out. Every event is kept all the same.
	View *View
	// Text are the options of the text format.
	Text TextOptions
	// Also receives every event once it is stamped, with its Seq and Cause, in stamp order and
	// under the Recorder's lock, so it must not block or emit. Nil sends nowhere. The live
	// timeline view (run --ui) uses it.
	Also Tracer
}

// Recorder stamps events with the time since the start and writes them out. It is safe for
// concurrent use: in run mode several runners emit at once, and each line is written whole.
type Recorder struct {
	clock  clock.PassiveClock
	start  time.Time
	out    io.Writer
	format Format
	keep   bool
	view   *View
	text   TextOptions
	also   Tracer

	mu     sync.Mutex // guards events, forgotten, err and writes to out
	events []Event
	// forgotten is how many of the first kept events Forget dropped: events[0] has index
	// forgotten.
	forgotten int
	err       error
	seq       uint64  // the Seq of the last event
	link      *linker // gives each event its Cause
}

var _ Tracer = (*Recorder)(nil)

// ErrNoClock is returned by NewRecorder without a clock.
var ErrNoClock = errors.New("new recorder: options Clock: missing required option")

// NewRecorder returns a Recorder. It fails without a clock.
func NewRecorder(opts RecorderOptions) (*Recorder, error) {
	if opts.Clock == nil {
		return nil, ErrNoClock
	}
	start := opts.Start
	if start.IsZero() {
		start = opts.Clock.Now()
	}
	return &Recorder{clock: opts.Clock, start: start, out: opts.Out, format: opts.Format, keep: opts.Keep,
		view: opts.View, text: opts.Text, also: opts.Also, link: newLinker()}, nil
}

// Emit stamps e with the time since the start, its sequence number and its cause, and records it.
func (r *Recorder) Emit(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Stamped under the lock, so that events from concurrent runners are kept and written in
	// the order of their stamps.
	e.T = r.clock.Since(r.start)
	r.seq++
	e.Seq = r.seq
	e.Cause = r.link.link(e)
	if r.keep {
		r.events = append(r.events, e)
	}
	if r.also != nil {
		r.also.Emit(e)
	}
	if r.out == nil || r.err != nil {
		return
	}
	if r.view != nil && !r.view.Show(e) {
		return
	}
	var line []byte
	if r.format == JSON {
		line, _ = e.MarshalJSON()
	} else {
		line = []byte(e.TextWith(r.text))
	}
	line = append(line, '\n')
	if _, err := r.out.Write(line); err != nil {
		r.err = fmt.Errorf("write trace: %w", err)
	}
}

// Events returns a copy of every event kept so far and not forgotten. It is empty unless Keep
// was set.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Len returns how many events were kept so far. With Events or EventsSince it lets a caller
// look at what happened after a point without copying the whole history each time.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.forgotten + len(r.events)
}

// EventsSince returns a copy of the kept events from index i on, those forgotten left out.
func (r *Recorder) EventsSince(i int) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	i -= r.forgotten
	if i >= len(r.events) {
		return nil
	}
	return append([]Event(nil), r.events[max(i, 0):]...)
}

// EachSince calls fn with each kept event from index i on, in order, until fn returns false: what
// EventsSince returns, looked at without a copy. The events are the Recorder's, read-only, and fn
// runs under its lock: it must not emit or call the Recorder. A replay looks at every instant's
// events this way.
func (r *Recorder) EachSince(i int, fn func(e *Event) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for j := max(i-r.forgotten, 0); j < len(r.events); j++ {
		if !fn(&r.events[j]) {
			return
		}
	}
}

// Forget drops the kept events before index i, which the caller will not ask for again, so that
// a long replay holds only the events its checks still need. Indices do not change: Len still
// counts every event kept, and EventsSince takes the same i as before.
func (r *Recorder) Forget(i int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := min(i-r.forgotten, len(r.events))
	if n <= 0 {
		return
	}
	r.forgotten += n
	if kept := len(r.events) - n; kept <= n {
		// Fewer kept than dropped (a replay forgets every event its checks have seen at every
		// instant, and keeps few): the kept move to the front, and the array is used again
		// instead of being reallocated by the appends after a reslice from the front. Moving
		// no more than was dropped keeps a Forget's cost to that of the events it drops.
		copy(r.events, r.events[n:])
		clear(r.events[kept:])
		r.events = r.events[:kept]
		return
	}
	// The dropped prefix of the array is released when a later append reallocates it.
	clear(r.events[:n])
	r.events = r.events[n:]
}

// Err returns the first error writing to Out, after which the Recorder stops writing.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
