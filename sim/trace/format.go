package trace

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Format selects how a Recorder renders events.
type Format int

// The formats.
const (
	Text Format = iota // aligned columns for people
	JSON               // one JSON object a line for machines
)

// String returns the format's flag value.
func (f Format) String() string {
	switch f {
	case Text:
		return "text"
	case JSON:
		return "json"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// ParseFormat parses a --trace-format value.
func ParseFormat(s string) (Format, error) {
	switch s {
	case "text":
		return Text, nil
	case "json":
		return JSON, nil
	}
	return 0, fmt.Errorf("unknown trace format %q: want text or json", s)
}

// The text form's layout: lines of at most LineWidth columns (docs/trace.md, "Text form").
const (
	// LineWidth is the widest a text line gets, unless a pod name longer than the pod column
	// leaves no room for the event word.
	LineWidth = 120
	// maxListedPods is how many pod names the text form prints for one update before it counts
	// the rest.
	maxListedPods = 3
	// componentWidth fits the longest component name, "pluginmanager".
	componentWidth = 13
	// podWidth is the pod column; a longer pod pushes the body right.
	podWidth = 24
	// bodyColumn is where the body starts, on an event's first line after a pod of podWidth
	// and on its continuation lines: the time, the component and the pod columns, each with
	// its space.
	bodyColumn = 10 + 1 + componentWidth + 1 + podWidth + 1
)

// TextOptions are the choices of the text form.
type TextOptions struct {
	// UID adds the pod's UID, cut to 8 characters, to the body.
	UID bool
	// Wide keeps every event on one line however long: a body that does not fit beside its
	// function is followed by it, two spaces after.
	Wide bool
}

// Text renders e in the text form with the default options.
func (e Event) Text() string { return e.TextWith(TextOptions{}) }

// TextWith renders e in the text form: one line of at most LineWidth columns,
//
//	12.000s podworkers    web-node-1               state to=sync                                 podWorkers.UpdatePod
//
// with the kubelet function right-aligned after the body. Nothing is ever cut: a body that does
// not fit beside its function gets the function's short name (startContainer for
// kubeGenericRuntimeManager.startContainer), then none; a body too long for its line goes on in
// continuation lines, which start with spaces up to the body's column (bodyColumn), breaking
// between the fields and between the words of the message. The function then ends the last
// line if it fits there. With Wide, the event stays on one line.
func (e Event) TextWith(o TextOptions) string { return string(e.AppendText(nil, o)) }

// AppendText appends e's text form with the options o, the line TextWith returns, to b. A
// Recorder appends each line to the one buffer it reuses, as AppendJSON does for the JSON form:
// text is run's default format, and building each line as strings made a dozen allocations an
// event, garbage the collector marked while the pods started. Only a line too long for its
// width (wrapBody) and a delay still allocate.
func (e Event) AppendText(b []byte, o TextOptions) []byte {
	start := len(b)
	// Seconds with millisecond precision: three decimals are enough to order a trace read by
	// people and keep golden files free of nanosecond noise from the real clock.
	var num [32]byte
	secs := strconv.AppendFloat(num[:0], e.T.Seconds(), 'f', 3, 64)
	b = appendSpaces(b, 9-len(secs))
	b = append(b, secs...)
	b = append(b, 's', ' ')
	b = appendPadded(b, string(e.Component), componentWidth)
	pod := shortPod(e.Pod)
	if pod == "" {
		pod = "-"
	}
	b = appendPadded(b, pod, podWidth)
	prefix := utf8.RuneCount(b[start:])
	room := LineWidth - prefix
	bodyStart := len(b)
	b = e.appendBody(b, o)
	body := utf8.RuneCount(b[bodyStart:])
	fn := e.Where().Func
	if fn == "" {
		if o.Wide || body <= room {
			return b
		}
		return appendWrapped(b, bodyStart, room, "", prefix)
	}
	fits := func(f string) bool { return body+2+runeLen(f) <= room }
	switch {
	case fits(fn):
		return appendFunc(appendSpaces(b, room-2-runeLen(fn)-body), fn)
	case o.Wide:
		return appendFunc(b, fn)
	case fits(shortFunc(fn)):
		f := shortFunc(fn)
		return appendFunc(appendSpaces(b, room-2-runeLen(f)-body), f)
	case body <= room:
		return b
	}
	return appendWrapped(b, bodyStart, room, fn, prefix)
}

// appendWrapped replaces the body at b[bodyStart:] with its lines (wrapBody) and ends the last
// line with the function fn, or its short name, if either fits there. prefix is the width of
// the columns before the body.
func appendWrapped(b []byte, bodyStart, room int, fn string, prefix int) []byte {
	wrapped := wrapBody(string(b[bodyStart:]), room)
	b = append(b[:bodyStart], wrapped...)
	if fn == "" {
		return b
	}
	i := strings.LastIndexByte(wrapped, '\n')
	end := runeLen(wrapped[i+1:]) // the column the last line ends in
	if i < 0 {
		end += prefix
	}
	for _, f := range [2]string{fn, shortFunc(fn)} {
		if end+2+runeLen(f) <= LineWidth {
			return append(appendSpaces(b, LineWidth-end-runeLen(f)), f...)
		}
	}
	return b
}

// appendFunc appends the two spaces before a function's name and the name.
func appendFunc(b []byte, fn string) []byte {
	b = append(b, ' ', ' ')
	return append(b, fn...)
}

// appendSpaces appends n spaces, none when n is not positive.
func appendSpaces(b []byte, n int) []byte {
	for ; n > 0; n-- {
		b = append(b, ' ')
	}
	return b
}

// appendPadded appends s filled with spaces to width runes, and the space after its column.
func appendPadded(b []byte, s string, width int) []byte {
	b = append(b, s...)
	return append(appendSpaces(b, width-runeLen(s)), ' ')
}

// shortFunc is a function's name without its receiver or package: the part after the last dot.
// The API server's requests ("PATCH pods/status") have none.
func shortFunc(fn string) string {
	return fn[strings.LastIndexByte(fn, '.')+1:]
}

// wrapBody lays out a body in lines: the first of at most first columns, after the prefix the
// caller writes, the others of at most LineWidth-bodyColumn after bodyColumn spaces. It breaks
// at the spaces between fields and between the words of the message, and a word longer than a
// line between its characters, starting where the line before ends. The first line always holds
// the event word.
func wrapBody(body string, first int) string {
	// minBreak is the fewest columns a line must have left for a word longer than a line to
	// start in it rather than on the next.
	const minBreak = 8
	var lines []string
	line, room := "", first
	flush := func() {
		lines = append(lines, line)
		line, room = "", LineWidth-bodyColumn
	}
	for i, w := range strings.Split(body, " ") {
		for {
			if i == 0 || line != "" && runeLen(line)+1+runeLen(w) <= room {
				if line != "" {
					line += " "
				}
				line += w
				break
			}
			if runeLen(w) <= LineWidth-bodyColumn || room-runeLen(line) <= minBreak {
				// A word that fits on a line of its own starts one.
				if line != "" {
					flush()
					continue
				}
				if runeLen(w) <= room {
					line = w
					break
				}
			}
			// A word longer than a line fills this one and goes on in the next.
			k := room
			if line != "" {
				line += " "
				k = room - runeLen(line)
			}
			r := []rune(w)
			line, w = line+string(r[:k]), string(r[k:])
			flush()
		}
	}
	lines = append(lines, line)
	return strings.Join(lines, "\n"+strings.Repeat(" ", bodyColumn))
}

// appendBody appends the event word followed by its fields as key=value pairs, in the JSON
// field order, and the message in quotes, each after a space.
func (e Event) appendBody(b []byte, o TextOptions) []byte {
	b = append(b, e.Event...)
	add := func(k, v string) {
		if v != "" {
			b = appendKey(b, k)
			b = append(b, v...)
		}
	}
	add("node", e.Node)
	add("op", e.Op)
	add("source", e.Source)
	if e.Pods != nil {
		b = appendKey(b, "pods")
		b = appendShortPods(b, e.Pods)
	}
	if e.From != "" || e.To != "" {
		add("from", e.From)
		add("to", e.To)
	}
	add("container", e.Container)
	if e.ExitCode != nil {
		b = appendKey(b, "exitCode")
		b = strconv.AppendInt(b, int64(*e.ExitCode), 10)
	}
	if e.Delay != 0 {
		add("delay", e.Delay.Round(time.Millisecond).String())
	}
	if o.UID {
		add("uid", shortUID(e.UID))
	}
	add("reason", e.Reason)
	if e.Message != "" {
		b = append(b, ' ')
		b = strconv.AppendQuote(b, e.Message)
	}
	return b
}

// appendKey appends the space before a field and its key, and the equals sign.
func appendKey(b []byte, k string) []byte {
	b = append(b, ' ')
	b = append(b, k...)
	return append(b, '=')
}

// shortPod leaves out the default namespace: a pod name has no slash, so "web" can only be
// default/web.
func shortPod(pod string) string {
	return strings.TrimPrefix(pod, "default/")
}

// appendShortPods appends a pod list as [a b c +4]: the first pods, then how many more.
func appendShortPods(b []byte, pods []string) []byte {
	b = append(b, '[')
	for i, p := range pods {
		if i > 0 {
			b = append(b, ' ')
		}
		if i == maxListedPods {
			b = append(b, '+')
			b = strconv.AppendInt(b, int64(len(pods)-maxListedPods), 10)
			break
		}
		b = append(b, shortPod(p)...)
	}
	return append(b, ']')
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

// shortUID keeps the text form narrow; the JSON form always carries the whole UID.
func shortUID(uid string) string {
	if len(uid) > 8 {
		return uid[:8]
	}
	return uid
}

// MarshalJSON renders e as a JSON object with its fields in a fixed order and empty optional
// fields left out.
func (e Event) MarshalJSON() ([]byte, error) {
	return e.AppendJSON(nil), nil
}

// AppendJSON appends e's JSON object, the bytes MarshalJSON returns, to b. A Recorder appends
// each line to the one buffer it reuses, so that writing an event allocates nothing: in run, a
// fleet traces dozens of events a pod, and each one's encoding was garbage the collector marked
// while the pods started.
func (e Event) AppendJSON(b []byte) []byte {
	b = append(b, `{"t":`...)
	b = strconv.AppendFloat(b, e.T.Seconds(), 'f', -1, 64)
	str := func(k, v string) {
		if v != "" {
			b = appendJSONKey(b, k)
			b = appendJSONString(b, v)
		}
	}
	b = appendJSONKey(b, "component")
	b = appendJSONString(b, string(e.Component))
	b = appendJSONKey(b, "event")
	b = appendJSONString(b, string(e.Event))
	str("pod", e.Pod)
	str("uid", e.UID)
	str("op", e.Op)
	str("source", e.Source)
	if e.Pods != nil {
		b = appendJSONKey(b, "pods")
		b = append(b, '[')
		for i, p := range e.Pods {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, p)
		}
		b = append(b, ']')
	}
	str("from", e.From)
	str("to", e.To)
	str("container", e.Container)
	if e.ExitCode != nil {
		b = appendJSONKey(b, "exitCode")
		b = strconv.AppendInt(b, int64(*e.ExitCode), 10)
	}
	if e.Delay != 0 {
		b = appendJSONKey(b, "delay")
		b = strconv.AppendFloat(b, e.Delay.Seconds(), 'f', -1, 64)
	}
	str("reason", e.Reason)
	str("message", e.Message)
	where := e.Where()
	str("func", where.Func)
	str("file", where.File)
	if e.Seq != 0 {
		b = appendJSONKey(b, "seq")
		b = strconv.AppendUint(b, e.Seq, 10)
	}
	if e.Cause != 0 {
		b = appendJSONKey(b, "cause")
		b = strconv.AppendUint(b, e.Cause, 10)
	}
	str("node", e.Node)
	return append(b, '}')
}

// appendJSONKey appends a comma and the object key k, one of AppendJSON's own names (none needs
// escaping).
func appendJSONKey(b []byte, k string) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	return append(b, '"', ':')
}

// appendJSONString appends s as encoding/json.Marshal writes a string. A string of printable
// ASCII with nothing to escape (the trace's names, UIDs, kinds and nearly every message) is
// copied between quotes; any other goes through encoding/json, which escapes HTML characters,
// control characters, U+2028 and U+2029 and replaces invalid UTF-8.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			raw, _ := json.Marshal(s) // a string always marshals
			return append(b, raw...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
