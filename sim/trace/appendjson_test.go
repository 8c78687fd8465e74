package trace

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/sim/vclock"
)

// marshalJSONByFields is the event's JSON built field by field with encoding/json, the way the
// trace was written before AppendJSON: the reference AppendJSON must match byte for byte.
func marshalJSONByFields(e Event) []byte {
	var b bytes.Buffer
	b.WriteString(`{"t":`)
	b.WriteString(strconv.FormatFloat(e.T.Seconds(), 'f', -1, 64))
	field := func(k string, v any) {
		b.WriteString(`,"` + k + `":`)
		raw, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		b.Write(raw)
	}
	str := func(k, v string) {
		if v != "" {
			field(k, v)
		}
	}
	field("component", string(e.Component))
	field("event", e.Event)
	str("pod", e.Pod)
	str("uid", e.UID)
	str("op", e.Op)
	str("source", e.Source)
	if e.Pods != nil {
		field("pods", e.Pods)
	}
	str("from", e.From)
	str("to", e.To)
	str("container", e.Container)
	if e.ExitCode != nil {
		field("exitCode", *e.ExitCode)
	}
	if e.Delay != 0 {
		b.WriteString(`,"delay":` + strconv.FormatFloat(e.Delay.Seconds(), 'f', -1, 64))
	}
	str("reason", e.Reason)
	str("message", e.Message)
	where := e.Where()
	str("func", where.Func)
	str("file", where.File)
	if e.Seq != 0 {
		b.WriteString(`,"seq":` + strconv.FormatUint(e.Seq, 10))
	}
	if e.Cause != 0 {
		b.WriteString(`,"cause":` + strconv.FormatUint(e.Cause, 10))
	}
	str("node", e.Node)
	b.WriteByte('}')
	return b.Bytes()
}

// TestAppendJSONAsEncodingJSON holds AppendJSON to encoding/json's bytes for the strings its
// fast path copies and for every kind it hands to encoding/json: quotes, backslashes, HTML
// characters, control characters, DEL, non-ASCII, U+2028/U+2029 and invalid UTF-8.
func TestAppendJSONAsEncodingJSON(t *testing.T) {
	strs := []string{
		"", "plain", "default/web-7d4b9c-x2x5z", `said "bye"`, `back\slash`, "<b>&amp;</b>",
		"tab\there", "line\nbreak", "\x00\x1f", "del\x7f", "café", "日本", "\u2028\u2029",
		"bad\xffutf8", "\xc3", "~ !#$%'()*+,-./:;=?@[]^_`{|}",
	}
	exit := -1
	for _, s := range strs {
		events := []Event{
			{Component: Component(s), Event: Kind(s)},
			{T: 1234567 * time.Microsecond, Component: Status, Event: KindPatch, Pod: s, UID: s, Op: s,
				Source: s, Pods: []string{s, s}, From: s, To: s, Container: s, ExitCode: &exit,
				Delay: 1500 * time.Millisecond, Reason: s, Message: s, Func: s, Seq: 1 << 40, Cause: 3, Node: s},
			{Component: PodWorkers, Event: "state", Func: "UpdatePod", Message: s, Pods: []string{}},
		}
		for _, e := range events {
			want := marshalJSONByFields(e)
			if got := e.AppendJSON(nil); !bytes.Equal(got, want) {
				t.Errorf("AppendJSON(%q) = %s, want %s", s, got, want)
			}
			prefix := []byte("prefix ")
			if got := e.AppendJSON(prefix); !bytes.Equal(got, append([]byte("prefix "), want...)) {
				t.Errorf("AppendJSON(%q) after a prefix = %s, want the prefix and %s", s, got, want)
			}
			if got, _ := e.MarshalJSON(); !bytes.Equal(got, want) {
				t.Errorf("MarshalJSON(%q) = %s, want %s", s, got, want)
			}
		}
	}
}

func FuzzAppendJSON(f *testing.F) {
	f.Add("default/a", "said \"bye\"", "<&>", int64(1500), 0)
	f.Add("\xff", "\u2028", "\x00", int64(-1), -3)
	f.Fuzz(func(t *testing.T, pod, message, node string, t0 int64, exit int) {
		e := Event{T: time.Duration(t0), Component: Runtime, Event: Kind(pod), Pod: pod, Message: message,
			Node: node, Pods: []string{node, pod}, ExitCode: &exit, Func: message}
		want := marshalJSONByFields(e)
		if got := e.AppendJSON(nil); !bytes.Equal(got, want) {
			t.Errorf("AppendJSON() = %s, want %s", got, want)
		}
		if !json.Valid(want) {
			t.Errorf("%s is not valid JSON", want)
		}
	})
}

// TestRecorderReusesItsLineBuffer checks that lines written one after another from the reused
// buffer each arrive whole and unchanged, a long one included, in either format.
func TestRecorderReusesItsLineBuffer(t *testing.T) {
	long := strings.Repeat("x", 2*maxLineBuffer)
	events := []Event{
		{Component: Status, Event: KindPatch, Pod: "default/a", UID: "u1", From: "Pending", To: "Running"},
		{Component: Runtime, Event: "exited", Pod: "default/b", Message: long},
		{Component: Status, Event: KindPatch, Pod: "default/c"},
		{Component: PodWorkers, Event: "state", Pod: "default/d", Message: "<tab>\t"},
	}
	for _, format := range []Format{JSON, Text} {
		w := &failingWriter{n: len(events)}
		r, err := NewRecorder(RecorderOptions{Clock: vclock.New(vclock.Epoch), Out: w, Format: format, Keep: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			r.Emit(e)
		}
		kept := r.Events()
		if len(w.writes) != len(kept) {
			t.Fatalf("format %v: %d lines written, want %d", format, len(w.writes), len(kept))
		}
		for i, e := range kept {
			want := string(e.AppendJSON(nil)) + "\n"
			if format == Text {
				want = e.Text() + "\n"
			}
			if w.writes[i] != want {
				t.Errorf("format %v: line %d = %q, want %q", format, i, w.writes[i], want)
			}
		}
		if cap(r.line) > maxLineBuffer {
			t.Errorf("format %v: the recorder kept a line buffer of %d bytes, want at most %d", format, cap(r.line), maxLineBuffer)
		}
	}
}

// BenchmarkRecorderEmit is a status patch's event written as a line, as run writes each, in
// either format (text is run's default).
func BenchmarkRecorderEmit(b *testing.B) {
	for _, format := range []Format{JSON, Text} {
		b.Run(format.String(), func(b *testing.B) {
			r, err := NewRecorder(RecorderOptions{Clock: vclock.New(vclock.Epoch), Out: discard{}, Format: format})
			if err != nil {
				b.Fatal(err)
			}
			e := Event{Component: Status, Event: KindPatch, Pod: "default/web-7d4b9c-x2x5z",
				UID: "0b6f3c1e-5f7a-4c2b-9d1e-3a4b5c6d7e8f", From: "Pending", To: "Running", Func: "syncPod", Node: "sim0-17"}
			b.ReportAllocs()
			for b.Loop() {
				r.Emit(e)
			}
		})
	}
}

// discard is io.Discard without its pooled ReadFrom, for a benchmark of the writes alone.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
