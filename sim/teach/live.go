package teach

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// DefaultLiveBacklog is how many events a Live view keeps for the pages that open later.
const DefaultLiveBacklog = 200_000

// subscriberBuffer is how many events a page may fall behind before it is cut off; its browser
// reconnects and gets the backlog again.
const subscriberBuffer = 8192

// Live serves the timeline view of a running node: the page at /, and at /events every event as a
// server-sent event, the backlog first and then each new one as it is emitted. It is a
// trace.Tracer, to be given to the Recorder as RecorderOptions.Also, so that it sees events with
// their seq and cause.
type Live struct {
	name    string
	backlog int

	mu     sync.Mutex
	events [][]byte // the backlog, each event as one JSON object
	subs   map[chan []byte]struct{}
	done   chan struct{}
	closed bool
}

var _ trace.Tracer = (*Live)(nil)

// NewLive returns a live view titled name that keeps the last backlog events (DefaultLiveBacklog
// when backlog is 0 or less).
func NewLive(name string, backlog int) *Live {
	if backlog <= 0 {
		backlog = DefaultLiveBacklog
	}
	return &Live{name: name, backlog: backlog, subs: map[chan []byte]struct{}{}, done: make(chan struct{})}
}

// Emit records e and sends it to every page. It never blocks: a page that is too far behind is
// disconnected.
func (l *Live) Emit(e trace.Event) {
	line := liveJSON(e)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	if len(l.events) == l.backlog {
		// Drop the oldest tenth at once, so that trimming is rare.
		n := copy(l.events, l.events[l.backlog/10:])
		clear(l.events[n:])
		l.events = l.events[:n]
	}
	l.events = append(l.events, line)
	for ch := range l.subs {
		select {
		case ch <- line:
		default:
			delete(l.subs, ch)
			close(ch)
		}
	}
}

// liveJSON is the trace's JSON form of e with the link to its kubelet function added.
func liveJSON(e trace.Event) []byte {
	b, _ := e.MarshalJSON()
	if u := FuncURL(e.Component, e.Func); u != "" {
		q, _ := json.Marshal(u)
		b = append(append(append(b[:len(b)-1], `,"funcURL":`...), q...), '}')
	}
	return b
}

// Close ends every stream; the server's handlers return.
func (l *Live) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	close(l.done)
	for ch := range l.subs {
		delete(l.subs, ch)
		close(ch)
	}
}

// ServeHTTP serves the page at / and the stream at /events.
func (l *Live) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch strings.TrimPrefix(r.URL.Path, "/") {
	case "":
		l.page(w)
	case "events":
		l.stream(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (l *Live) page(w http.ResponseWriter) {
	tl := &Timeline{Name: l.name, Live: true, Funcs: map[string]string{}, Strings: []string{""}, Events: [][]any{}}
	tl.withGlossary("")
	data, err := tl.JSON()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = writePage(w, l.name, data)
}

func (l *Live) stream(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ch := make(chan []byte, subscriberBuffer)
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		http.Error(w, "the node has stopped", http.StatusServiceUnavailable)
		return
	}
	backlog := append([][]byte(nil), l.events...)
	l.subs[ch] = struct{}{}
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		if _, ok := l.subs[ch]; ok {
			delete(l.subs, ch)
			close(ch)
		}
		l.mu.Unlock()
	}()

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	var buf bytes.Buffer
	send := func(line []byte) {
		buf.WriteString("data: ")
		buf.Write(line)
		buf.WriteString("\n\n")
	}
	for i, line := range backlog {
		send(line)
		if buf.Len() > 64<<10 || i == len(backlog)-1 {
			if _, err := w.Write(buf.Bytes()); err != nil {
				return
			}
			buf.Reset()
		}
	}
	flusher.Flush()
	for {
		select {
		case line, ok := <-ch:
			if !ok {
				return
			}
			send(line)
			// Whatever else is already queued goes in the same write.
			for more := true; more && buf.Len() < 64<<10; {
				select {
				case line, ok := <-ch:
					if !ok {
						more = false
						break
					}
					send(line)
				default:
					more = false
				}
			}
			if _, err := w.Write(buf.Bytes()); err != nil {
				return
			}
			buf.Reset()
			flusher.Flush()
		case <-r.Context().Done():
			return
		case <-l.done:
			return
		}
	}
}
