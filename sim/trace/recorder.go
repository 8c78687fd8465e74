package trace

import (
	"errors"
	"fmt"
	"io"
	"iter"
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

	mu sync.Mutex // guards events, head, forgotten, looping, forgetLater, err and writes to out
	// events[head:] are the kept events not forgotten. Forget moves head instead of reslicing
	// the array from the front, so that the appends after it reuse the array's room rather than
	// allocate a new one each time the shortened slice fills up.
	events []Event
	head   int
	// forgotten is how many of the first kept events Forget dropped: events[head] has index
	// forgotten.
	forgotten int
	err       error
	seq       uint64  // the Seq of the last event
	link      *linker // gives each event its Cause
	// looping counts the Since loops running; a Forget asked for meanwhile is kept in
	// forgetLater (the largest index asked) and made when the last one ends.
	looping     int
	forgetLater int
	// line is the buffer each written event is rendered into, reused from one event to the
	// next (an io.Writer keeps none of what it is handed).
	line []byte
}

var _ Tracer = (*Recorder)(nil)

// maxLineBuffer is the largest line buffer a Recorder keeps for the next event: a rare long
// line (a long message) is not held for the rest of the run.
const maxLineBuffer = 16 << 10

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
	line := r.line[:0]
	if r.format == JSON {
		line = e.AppendJSON(line)
	} else {
		line = e.AppendText(line, r.text)
	}
	line = append(line, '\n')
	if cap(line) <= maxLineBuffer {
		r.line = line
	}
	if _, err := r.out.Write(line); err != nil {
		r.err = fmt.Errorf("write trace: %w", err)
	}
}

// Events returns a copy of every event kept so far and not forgotten. It is empty unless Keep
// was set.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events[r.head:]...)
}

// Len returns how many events were kept so far. With EventsSince or Since it lets a caller look
// at what happened after a point without going over the whole history each time.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.forgotten + len(r.events) - r.head
}

// since returns the kept events from index i on, those forgotten left out. The caller holds mu.
func (r *Recorder) since(i int) []Event {
	i -= r.forgotten
	kept := r.events[r.head:]
	if i >= len(kept) {
		return nil
	}
	return kept[max(i, 0):]
}

// EventsSince returns a copy of the kept events from index i on, those forgotten left out.
func (r *Recorder) EventsSince(i int) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.since(i)...)
}

// Since yields, in order and without copying them, the kept events from index i on, those
// forgotten left out: replay looks at every event after each step and each settled instant, and
// a copy of each was a tenth of what an hour of replay allocated. The events yielded are those
// kept when the loop starts. The Recorder is not locked while the body runs, so the body may
// emit (its events are not yielded) and call Forget (which waits until the last loop over the
// events ends, so that no event yielded is cleared or moved under it). The event the body is
// handed must not be kept or changed after the iteration it is handed in.
func (r *Recorder) Since(i int) iter.Seq[*Event] {
	return func(yield func(*Event) bool) {
		r.mu.Lock()
		// Emit only appends past these (into a new array when this one is full, which the
		// slice keeps alive), so the elements yielded are not written while the loop runs.
		evs := r.since(i)
		r.looping++
		r.mu.Unlock()
		defer r.endLoop()
		for k := range evs {
			if !yield(&evs[k]) {
				return
			}
		}
	}
}

// endLoop ends one Since loop, and makes the Forget asked for meanwhile once no loop runs.
func (r *Recorder) endLoop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.looping--; r.looping == 0 && r.forgetLater > 0 {
		i := r.forgetLater
		r.forgetLater = 0
		r.forget(i)
	}
}

// Forget drops the kept events before index i, which the caller will not ask for again, so that
// a long replay holds only the events its checks still need. Indices do not change: Len still
// counts every event kept, and EventsSince takes the same i as before.
func (r *Recorder) Forget(i int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.looping > 0 {
		r.forgetLater = max(r.forgetLater, i)
		return
	}
	r.forget(i)
}

// forget is Forget, with mu held and no Since loop running.
func (r *Recorder) forget(i int) {
	kept := r.events[r.head:]
	n := min(i-r.forgotten, len(kept))
	if n <= 0 {
		return
	}
	// What the dropped events point to (their pod lists, their messages) is released now.
	clear(kept[:n])
	r.head += n
	r.forgotten += n
	// Once the dropped front is at least as long as what is kept, the kept events move to the
	// front of the array, where the next appends reuse the room. Each move copies no more events
	// than were dropped since the last, so it costs O(1) an event, and in replay, which forgets
	// nearly everything it has looked at, it copies a handful.
	if live := len(r.events) - r.head; r.head >= live {
		reached := len(r.events) // how far the events filled the array since the last move
		copy(r.events, r.events[r.head:])
		// The dropped front was cleared as it was dropped; the kept events are now at 0 too.
		clear(r.events[r.head:])
		r.events = r.events[:live]
		r.head = 0
		// An array grown by a burst (a fleet's start-up instant) is let go once the events
		// since the last move filled a quarter of it at most, so that a long replay does not
		// hold the burst's peak to keep a handful; an array that every instant fills (a
		// fleet's ticks) stays, and the appends keep reusing it.
		if floor := max(reached, 1024); cap(r.events) > 4*floor {
			r.events = append(make([]Event, 0, 2*floor), r.events...)
		}
	}
}

// Err returns the first error writing to Out, after which the Recorder stops writing.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
