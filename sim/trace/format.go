package trace

import (
	"bytes"
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

// seconds renders d as seconds with millisecond precision. Three decimals are enough to order a
// trace read by people and keep golden files free of nanosecond noise from the real clock.
func seconds(d float64) string {
	return strconv.FormatFloat(d, 'f', 3, 64)
}

// The text form's layout: one line of at most LineWidth columns (docs/trace.md, "Text form").
const (
	// LineWidth is the widest a text line gets.
	LineWidth = 120
	// maxListedPods is how many pod names the text form prints for one update before it counts
	// the rest.
	maxListedPods = 3
	// componentWidth fits the longest component name, "pluginmanager".
	componentWidth = 13
	// podWidth is the pod column; a longer pod pushes the body right.
	podWidth = 24
)

// TextOptions are the choices of the text form.
type TextOptions struct {
	// UID adds the pod's UID, cut to 8 characters, to the body.
	UID bool
}

// Text renders e as one line of the text form with the default options.
func (e Event) Text() string { return e.TextWith(TextOptions{}) }

// TextWith renders e as one line of at most LineWidth columns:
//
//	12.000s podworkers    web-node-1               state to=sync                                 podWorkers.UpdatePod
//
// The body is cut, with an ellipsis, where it would push the line past LineWidth.
func (e Event) TextWith(o TextOptions) string {
	pod := shortPod(e.Pod)
	if pod == "" {
		pod = "-"
	}
	body := e.body(o)
	fn := e.Where().Func
	// The event word is never cut: a reader and a parser of the text form need it whole. When a
	// long pod name leaves no room for it, the pod name is cut instead.
	need := runeLen(string(e.Event)) + 2
	prefix, room := e.textPrefix(pod, fn)
	if room < need {
		pod = cut(pod, max(runeLen(pod)-(need-room), 8))
		prefix, room = e.textPrefix(pod, fn)
	}
	body = cut(body, max(room, need))
	if fn == "" {
		return strings.TrimRight(prefix+body, " ")
	}
	return prefix + pad(body, room) + "  " + fn
}

// textPrefix is the time, component and pod columns of the text form, and the room they and fn
// leave for the body within LineWidth.
func (e Event) textPrefix(pod, fn string) (string, int) {
	prefix := fmt.Sprintf("%9ss %-*s %-*s ", seconds(e.T.Seconds()), componentWidth, e.Component, podWidth, pod)
	room := LineWidth - runeLen(prefix)
	if fn != "" {
		room -= 2 + runeLen(fn)
	}
	return prefix, room
}

// body is the event word followed by its fields as key=value pairs, in the JSON field order.
func (e Event) body(o TextOptions) string {
	parts := []string{string(e.Event)}
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	add("node", e.Node)
	add("op", e.Op)
	add("source", e.Source)
	if e.Pods != nil {
		add("pods", shortPods(e.Pods))
	}
	if e.From != "" || e.To != "" {
		add("from", e.From)
		add("to", e.To)
	}
	add("container", e.Container)
	if e.ExitCode != nil {
		add("exitCode", strconv.Itoa(*e.ExitCode))
	}
	if e.Delay != 0 {
		add("delay", e.Delay.Round(time.Millisecond).String())
	}
	if o.UID {
		add("uid", shortUID(e.UID))
	}
	add("reason", e.Reason)
	if e.Message != "" {
		parts = append(parts, strconv.Quote(e.Message))
	}
	return strings.Join(parts, " ")
}

// shortPod leaves out the default namespace: a pod name has no slash, so "web" can only be
// default/web.
func shortPod(pod string) string {
	return strings.TrimPrefix(pod, "default/")
}

// shortPods renders a pod list as [a b c +4]: the first pods, then how many more.
func shortPods(pods []string) string {
	names := make([]string, 0, maxListedPods+1)
	for i, p := range pods {
		if i == maxListedPods {
			names = append(names, "+"+strconv.Itoa(len(pods)-maxListedPods))
			break
		}
		names = append(names, shortPod(p))
	}
	return "[" + strings.Join(names, " ") + "]"
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

// cut shortens s to at most n runes, the last of them an ellipsis.
func cut(s string, n int) string {
	if runeLen(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// pad fills s with spaces to n runes.
func pad(s string, n int) string {
	if k := n - runeLen(s); k > 0 {
		return s + strings.Repeat(" ", k)
	}
	return s
}

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
	var b bytes.Buffer
	b.WriteString(`{"t":`)
	b.WriteString(strconv.FormatFloat(e.T.Seconds(), 'f', -1, 64))
	field := func(k string, v any) {
		b.WriteString(`,"` + k + `":`)
		raw, _ := json.Marshal(v) // strings, ints and string slices always marshal
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
	return b.Bytes(), nil
}
