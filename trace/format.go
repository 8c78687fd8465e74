package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
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

// maxListedPods is how many pod names the text form prints for one update before it summarises.
const maxListedPods = 6

// Text renders e as one line of aligned text:
//
//	12.000s  podconfig     default/etcd-node-1            update op=ADD source=file    [HandlePodAdditions]
func (e Event) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%9ss  %-12s  ", seconds(e.T.Seconds()), e.Component)
	pod := e.Pod
	if pod == "" {
		pod = "-"
	}
	fmt.Fprintf(&b, "%-36s  ", pod)
	body := e.body()
	if e.Func == "" {
		b.WriteString(body)
		return strings.TrimRight(b.String(), " ")
	}
	fmt.Fprintf(&b, "%-64s  [%s]", body, e.Func)
	return b.String()
}

// body is the event word followed by its fields as key=value pairs, in the JSON field order.
func (e Event) body() string {
	parts := []string{string(e.Event)}
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	add("op", e.Op)
	add("source", e.Source)
	if e.Pods != nil {
		if len(e.Pods) <= maxListedPods {
			add("pods", "["+strings.Join(e.Pods, " ")+"]")
		} else {
			add("pods", fmt.Sprintf("[%s ... %d pods]", strings.Join(e.Pods[:maxListedPods-1], " "), len(e.Pods)))
		}
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
		add("delay", e.Delay.String())
	}
	add("uid", shortUID(e.UID))
	add("reason", e.Reason)
	if e.Message != "" {
		parts = append(parts, strconv.Quote(e.Message))
	}
	return strings.Join(parts, " ")
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
	str("func", e.Func)
	if e.Seq != 0 {
		b.WriteString(`,"seq":` + strconv.FormatUint(e.Seq, 10))
	}
	if e.Cause != 0 {
		b.WriteString(`,"cause":` + strconv.FormatUint(e.Cause, 10))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
