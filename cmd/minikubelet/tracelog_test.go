package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// traceEvent is one line of the JSON trace, decoded the way a tool reading it would.
type traceEvent struct {
	T         float64  `json:"t"`
	Node      string   `json:"node,omitempty"`
	Component string   `json:"component,omitempty"`
	Event     string   `json:"event,omitempty"`
	Pod       string   `json:"pod,omitempty"`
	UID       string   `json:"uid,omitempty"`
	Op        string   `json:"op,omitempty"`
	Source    string   `json:"source,omitempty"`
	Pods      []string `json:"pods,omitempty"`
	From      string   `json:"from,omitempty"`
	To        string   `json:"to,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	Message   string   `json:"message,omitempty"`
	Func      string   `json:"func,omitempty"`
}

func (e traceEvent) String() string {
	b, _ := json.Marshal(e)
	return string(b)
}

// carries reports whether the event names pod, alone or in its list of pods.
func (e traceEvent) carries(pod string) bool {
	return e.Pod == pod || slices.Contains(e.Pods, pod)
}

// traceLog is the io.Writer a run writes its JSON trace to. It decodes each complete line and
// wakes the tests waiting for an event, so that they wait for facts, not for time.
type traceLog struct {
	mu      sync.Mutex // guards every field below
	partial []byte
	events  []traceEvent
	bad     []string      // lines that are not valid JSON events
	changed chan struct{} // closed and replaced whenever events grows
	// ended is why the run writing the trace returned, once it has: no event will come after,
	// so a wait for one ends with it instead of at its deadline.
	ended error
	// text reads the text form instead (newTextTraceLog).
	text bool
}

// end records that the run writing the trace returned with err (nil for a clean return).
func (l *traceLog) end(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		err = errors.New("run returned")
	}
	l.ended = err
	close(l.changed)
	l.changed = make(chan struct{})
}

func newTraceLog() *traceLog {
	return &traceLog{changed: make(chan struct{})}
}

// newTextTraceLog is a traceLog of a run that writes the text form, run's default, read for
// the columns BenchmarkNodeHeap waits on: an event's component, pod and word, and its node.
func newTextTraceLog() *traceLog {
	return &traceLog{changed: make(chan struct{}), text: true}
}

// parseTextEvent reads the component, the pod, the event word and the node of a text line;
// ok is false for a continuation line (which starts with spaces past the time column) and
// for a line that is not the text form.
func parseTextEvent(line string) (e traceEvent, ok bool) {
	if strings.HasPrefix(line, strings.Repeat(" ", 10)) {
		return e, false
	}
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasSuffix(f[0], "s") {
		return e, false
	}
	e.Component, e.Pod, e.Event = f[1], f[2], f[3]
	if e.Pod == "-" {
		e.Pod = ""
	}
	for _, field := range f[4:] {
		if node, ok := strings.CutPrefix(field, "node="); ok {
			e.Node = node
		}
	}
	return e, true
}

func (l *traceLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	grew := false
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := l.partial[:i]
		var e traceEvent
		if l.text {
			if te, ok := parseTextEvent(string(line)); ok {
				l.events = append(l.events, te)
				grew = true
			}
		} else if err := json.Unmarshal(line, &e); err != nil || e.Component == "" || e.Event == "" {
			l.bad = append(l.bad, string(line))
		} else {
			l.events = append(l.events, e)
			grew = true
		}
		l.partial = l.partial[i+1:]
	}
	if grew {
		close(l.changed)
		l.changed = make(chan struct{})
	}
	return len(p), nil
}

// snapshot returns the events so far, the lines that did not decode, and a channel closed at the
// next event.
func (l *traceLog) snapshot() ([]traceEvent, []string, <-chan struct{}) {
	events, bad, changed, _ := l.state()
	return events, bad, changed
}

// state is snapshot with why the run ended, nil while it runs.
func (l *traceLog) state() ([]traceEvent, []string, <-chan struct{}, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events), slices.Clone(l.bad), l.changed, l.ended
}

// waitFor returns the index and value of the first event at index from or later that matches,
// waiting for it until ctx ends. what describes the event for the failure message.
func (l *traceLog) waitFor(ctx context.Context, from int, what string, match func(traceEvent) bool) (int, traceEvent, error) {
	for {
		events, _, changed, ended := l.state()
		for i := from; i < len(events); i++ {
			if match(events[i]) {
				return i, events[i], nil
			}
		}
		if ended != nil {
			return 0, traceEvent{}, fmt.Errorf("no %s in the trace after event %d, and none will come: %w\n%s", what, from, ended, l.tail(40))
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return 0, traceEvent{}, fmt.Errorf("no %s in the trace after event %d: %w\n%s", what, from, ctx.Err(), l.tail(40))
		}
	}
}

// mustWait is waitFor that fails the test.
func (l *traceLog) mustWait(t *testing.T, ctx context.Context, from int, what string, match func(traceEvent) bool) (int, traceEvent) {
	t.Helper()
	i, e, err := l.waitFor(ctx, from, what, match)
	if err != nil {
		t.Fatal(err)
	}
	return i, e
}

// waitForAll waits until, for every pod in pods, an event at index from or later matches it.
func (l *traceLog) waitForAll(ctx context.Context, from int, what string, pods []string, match func(traceEvent, string) bool) error {
	for _, pod := range pods {
		if _, _, err := l.waitFor(ctx, from, what+" of "+pod, func(e traceEvent) bool { return match(e, pod) }); err != nil {
			return err
		}
	}
	return nil
}

// tail renders the last n events, for failure messages.
func (l *traceLog) tail(n int) string {
	events, bad, _ := l.snapshot()
	var b strings.Builder
	fmt.Fprintf(&b, "last events of %d:\n", len(events))
	for _, e := range events[max(0, len(events)-n):] {
		b.WriteString("  " + e.String() + "\n")
	}
	for _, line := range bad {
		b.WriteString("  undecodable line: " + line + "\n")
	}
	return b.String()
}

// isUpdate matches PodConfig's update of op from source.
func isUpdate(op, source string) func(traceEvent) bool {
	return func(e traceEvent) bool {
		return e.Component == "podconfig" && e.Event == "update" && e.Op == op && e.Source == source
	}
}

// isRunning matches the status manager's first Running status of pod.
func isRunning(e traceEvent, pod string) bool {
	return e.Component == "status" && e.Event == "set" && e.Pod == pod && e.To == "Running"
}

// TestParseTextEvent reads back the columns BenchmarkNodeHeap waits on from text lines the
// trace writes, a wrapped one's continuation skipped.
func TestParseTextEvent(t *testing.T) {
	register := trace.Event{Component: trace.Node, Event: "register", Pod: "sim0-1", Func: "registerWithAPIServer"}
	config := trace.Event{Component: trace.SyncLoop, Event: trace.KindConfig, Node: "sim0-7", Op: "SET", Source: "api",
		Pods: []string{"default/a"}, Message: strings.Repeat("long words ", 20)}
	lines := strings.Split(register.Text()+"\n"+config.Text(), "\n")
	if len(lines) < 3 {
		t.Fatalf("want the config event to wrap, got %q", lines)
	}
	var got []traceEvent
	for _, line := range lines {
		if e, ok := parseTextEvent(line); ok {
			got = append(got, e)
		}
	}
	want := []traceEvent{{Component: "node", Event: "register", Pod: "sim0-1"}, {Component: "syncloop", Event: "config", Node: "sim0-7"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseTextEvent mismatch (-want +got):\n%s", diff)
	}
}
