package trace

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
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

	mu sync.Mutex // guards full, tail, spares, started, head, forgotten, looping, forgetLater, err and writes to out
	// The kept events not forgotten are, in order, full[0][head:], full[1:]..., tail (or
	// tail[head:] when full is empty). Each chunk in full holds exactly chunkLen events, so that
	// keeping one more event never copies the earlier ones (a single growing slice copied every
	// event at each growth: about five times the trace's bytes over a long run) and an index is found
	// by division. Emit writes only into tail, past every event already kept; a chunk in full
	// is written again only by forget, which waits for the Since loops. Forget moves head over
	// the dropped events and takes a chunk out of full once all of it is dropped, into spares,
	// the next tails, so that a replay, which forgets nearly everything it has looked at, reuses
	// the same few chunks instead of making new ones.
	full   [][]Event
	tail   []Event
	spares [][]Event
	head   int
	// started counts the chunks that became full since the last forget: forget keeps spares
	// for what an interval between two forgets fills, and lets go of the rest.
	started int
	// forgotten is how many of the first kept events Forget dropped: the first kept event not
	// forgotten has index forgotten.
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

// chunkLen is how many events a chunk of kept events holds: 1,024 events of 272 bytes, so a
// chunk is 280 KB, and a trace of 20,000 events (1,000 pods to Running) is 20 chunks. The
// first tail grows from a few events to a chunk, so a short trace (a test's) holds no more than
// it needs.
const chunkLen = 1024

// firstTailLen is the room of the first tail, which doubles from there up to chunkLen.
const firstTailLen = 16

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
		r.keepEvent(e)
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

// keepEvent appends e to the kept events. The caller holds mu.
func (r *Recorder) keepEvent(e Event) {
	if len(r.tail) == cap(r.tail) {
		switch {
		case cap(r.tail) < chunkLen:
			// The first tail, still growing: its events are copied, at most a chunk's worth
			// over the whole growth.
			grown := make([]Event, len(r.tail), min(max(2*cap(r.tail), firstTailLen), chunkLen))
			copy(grown, r.tail)
			r.tail = grown
		default:
			r.full = append(r.full, r.tail)
			r.started++
			if k := len(r.spares) - 1; k >= 0 {
				r.tail = r.spares[k]
				r.spares[k] = nil
				r.spares = r.spares[:k]
			} else {
				r.tail = make([]Event, 0, chunkLen)
			}
		}
	}
	r.tail = append(r.tail, e)
}

// kept returns how many kept events are not forgotten. The caller holds mu.
func (r *Recorder) kept() int {
	return len(r.full)*chunkLen + len(r.tail) - r.head
}

// span is a run of kept events, from the one at offset from on, count of them, as they were
// when it was taken: a Since loop reads them without the lock.
type span struct {
	full  [][]Event
	tail  []Event
	from  int // offset from full[0][0], or from tail[0] when full is empty
	count int
}

// since returns the span of the kept events from index i on, those forgotten left out. The
// caller holds mu.
func (r *Recorder) since(i int) span {
	skip := max(i-r.forgotten, 0)
	n := r.kept() - skip
	if n <= 0 {
		return span{}
	}
	return span{full: r.full, tail: r.tail, from: r.head + skip, count: n}
}

// pieces calls yield with the events of s a chunk's part at a time, in order, until yield
// returns false.
func (s span) pieces(yield func([]Event) bool) {
	at, left := s.from, s.count
	for left > 0 {
		var piece []Event
		if c := at / chunkLen; c < len(s.full) {
			piece = s.full[c][at%chunkLen:]
		} else {
			piece = s.tail[at-len(s.full)*chunkLen:]
		}
		piece = piece[:min(len(piece), left)]
		if !yield(piece) {
			return
		}
		at += len(piece)
		left -= len(piece)
	}
}

// appendTo appends the events of s to dst.
func (s span) appendTo(dst []Event) []Event {
	dst = slices.Grow(dst, s.count)
	for piece := range s.pieces {
		dst = append(dst, piece...)
	}
	return dst
}

// Events returns a copy of every event kept so far and not forgotten. It is empty unless Keep
// was set.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.since(r.forgotten).appendTo(nil)
}

// Len returns how many events were kept so far. With EventsSince or Since it lets a caller look
// at what happened after a point without going over the whole history each time.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.forgotten + r.kept()
}

// EventsSince returns a copy of the kept events from index i on, those forgotten left out.
func (r *Recorder) EventsSince(i int) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.since(i).appendTo(nil)
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
		// Emit only writes past these events, into the tail or a new chunk, and appends to
		// full past the chunks the span holds, so the span's events and chunk list are not
		// written while the loop runs.
		s := r.since(i)
		r.looping++
		r.mu.Unlock()
		defer r.endLoop()
		for piece := range s.pieces {
			for k := range piece {
				if !yield(&piece[k]) {
					return
				}
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
	n := min(i-r.forgotten, r.kept())
	if n <= 0 {
		return
	}
	for n > 0 {
		chunk := r.tail
		if len(r.full) > 0 {
			chunk = r.full[0]
		}
		k := min(n, len(chunk)-r.head)
		// What the dropped events point to (their pod lists, their messages) is released now.
		clear(chunk[r.head : r.head+k])
		r.head += k
		r.forgotten += k
		n -= k
		if len(r.full) > 0 && r.head == chunkLen {
			// All of the chunk is dropped: it becomes a spare, cleared already. full is moved
			// down rather than resliced from the front, so that its array does not creep along
			// as a long replay drops chunk after chunk; no Since loop holds it now.
			r.spares = append(r.spares, chunk[:0])
			last := len(r.full) - 1
			copy(r.full, r.full[1:])
			r.full[last] = nil
			r.full = r.full[:last]
			r.head = 0
		}
	}
	// Spares grown by a burst (a fleet's start-up instant) are let go once the chunks filled
	// since the last forget are a quarter of them at most, so that a long replay does not hold
	// the burst's peak to keep a handful; spares that every interval fills (a fleet's ticks)
	// stay, and the next tails reuse them.
	if floor := max(r.started, 1); len(r.spares) > 4*floor {
		clear(r.spares[2*floor:])
		r.spares = r.spares[:2*floor]
	}
	r.started = 0
}

// Err returns the first error writing to Out, after which the Recorder stops writing.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
