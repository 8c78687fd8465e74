package trace

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// textWithReference is the text form built from strings, the way the trace was written before
// AppendText: the reference AppendText must match byte for byte.
func textWithReference(e Event, o TextOptions) string {
	pod := shortPod(e.Pod)
	if pod == "" {
		pod = "-"
	}
	prefix := fmt.Sprintf("%9ss %-*s %-*s ", strconv.FormatFloat(e.T.Seconds(), 'f', 3, 64), componentWidth, e.Component, podWidth, pod)
	body := strings.Join(e.bodyItems(o), " ")
	fn := e.Where().Func
	room := LineWidth - runeLen(prefix)
	if fn == "" {
		if o.Wide || runeLen(body) <= room {
			return prefix + body
		}
		return prefix + wrapBody(body, room)
	}
	fits := func(f string) bool { return runeLen(body)+2+runeLen(f) <= room }
	switch {
	case fits(fn):
		return prefix + pad(body, room-2-runeLen(fn)) + "  " + fn
	case o.Wide:
		return prefix + body + "  " + fn
	case fits(shortFunc(fn)):
		f := shortFunc(fn)
		return prefix + pad(body, room-2-runeLen(f)) + "  " + f
	case runeLen(body) <= room:
		return prefix + body
	}
	wrapped := wrapBody(body, room)
	i := strings.LastIndexByte(wrapped, '\n')
	end := runeLen(wrapped[i+1:])
	if i < 0 {
		end += runeLen(prefix)
	}
	for _, f := range []string{fn, shortFunc(fn)} {
		if end+2+runeLen(f) <= LineWidth {
			return prefix + wrapped + strings.Repeat(" ", LineWidth-end-runeLen(f)) + f
		}
	}
	return prefix + wrapped
}

// bodyItems are the event word followed by its fields as key=value pairs, in the JSON field
// order, and the message in quotes: the reference's body, before appendBody.
func (e Event) bodyItems(o TextOptions) []string {
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
	return parts
}

// shortPods renders a pod list as [a b c +4], as the reference did.
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

// pad fills s with spaces to n runes.
func pad(s string, n int) string {
	if k := n - runeLen(s); k > 0 {
		return s + strings.Repeat(" ", k)
	}
	return s
}

// textOptions are every combination of the text form's options.
var textOptions = []TextOptions{{}, {UID: true}, {Wide: true}, {UID: true, Wide: true}}

// checkAppendText holds AppendText, after nothing and after a prefix, and TextWith to the
// reference for e under every option.
func checkAppendText(t *testing.T, e Event) {
	t.Helper()
	for _, o := range textOptions {
		want := textWithReference(e, o)
		if got := e.AppendText(nil, o); string(got) != want {
			t.Errorf("%+v.AppendText(%+v) =\n%q\nwant\n%q", e, o, got, want)
		}
		if got := e.AppendText([]byte("prefix "), o); string(got) != "prefix "+want {
			t.Errorf("%+v.AppendText(%+v) after a prefix =\n%q\nwant the prefix and\n%q", e, o, got, want)
		}
		if got := e.TextWith(o); got != want {
			t.Errorf("%+v.TextWith(%+v) =\n%q\nwant\n%q", e, o, got, want)
		}
	}
}

// oneGoroutineUnderRace is why a test that calls the package from the test's goroutine alone,
// and takes seconds under -race, skips there: the race detector needs a second goroutine to find
// anything, and TestRecorderSinceWhileAnotherGoroutineForgets, which starts one, runs under it;
// the plain suite runs them.
const oneGoroutineUnderRace = "on the test's goroutine alone, nothing for the race detector"

// TestAppendTextAsBefore holds AppendText to the reference for every row of the catalogue, each
// with its functions and reasons, with short and long fields (so that the function fits, fits
// by its short name, does not fit, and the body wraps), and for the strings that need quoting or
// are not ASCII.
func TestAppendTextAsBefore(t *testing.T) {
	if raceEnabled {
		t.Skip(oneGoroutineUnderRace)
	}
	exit := 137
	long := strings.Repeat("word ", 40)
	longPod := "kube-system/" + strings.Repeat("p", 40)
	for _, en := range Catalogue {
		funcs := append([]string{"", "pkg.Type.someFunctionWithAVeryLongNameIndeed"}, en.Funcs...)
		reasons := append([]string{"BackOff"}, en.Reasons...)
		for _, fn := range funcs {
			for _, reason := range reasons {
				if reason == "*" {
					reason = "Failed"
				}
				base := Event{T: 12*time.Second + 345678*time.Microsecond, Component: en.Component, Event: en.Kind,
					Func: fn, Reason: reason}
				full := base
				full.Pod, full.UID, full.Node, full.Op = "default/web-7d4b9c-x2x5z", "0b6f3c1e-5f7a-4c2b-9d1e-3a4b5c6d7e8f", "sim0-17", "ADD"
				full.From, full.To, full.Container, full.ExitCode = "Pending", "Running", "app", &exit
				full.Delay, full.Pods, full.Source = 1500*time.Microsecond, []string{"default/a", "b/c", "d", "e"}, "file"
				full.Message = `container "app" said "bye"`
				wrapping := full
				wrapping.Pod, wrapping.Message = longPod, long
				unbroken := full
				unbroken.Message = strings.Repeat("x", 2*LineWidth)
				for _, e := range []Event{base, full, wrapping, unbroken} {
					checkAppendText(t, e)
				}
			}
		}
	}
	for _, s := range []string{"", "café", "日本語のポッド名", "tab\there", "bad\xffutf8", "\u2028", `q"`, strings.Repeat("é", 130)} {
		checkAppendText(t, Event{T: -time.Second, Component: Component(s), Event: Kind(s), Pod: s, UID: s,
			Message: s, Func: s, From: s, Pods: []string{}, Node: s})
		checkAppendText(t, Event{T: 99999 * time.Hour, Component: Status, Event: KindPatch, Pod: s, Message: s, Func: "syncPod", Delay: time.Hour})
	}
}

// FuzzAppendText fills every field the text shows, the component and kind from the catalogue
// (entry picks one), and compares AppendText with the reference rendering. pods is split at
// commas; without hasPods the event has no Pods, and with it an empty pods is an empty list.
func FuzzAppendText(f *testing.F) {
	f.Add(uint(0), "default/a", "u-1", "ADD", "api", "Pending", "Running", "app", "BackOff", "said \"bye\"", "syncPod", "n", "a,b/c",
		int64(1500), int64(0), 0, true, true, false, false)
	f.Add(uint(7), "\xff", "", "", "", "", "", "", "", strings.Repeat("long words ", 20), "kubeGenericRuntimeManager.startContainer", "", "",
		int64(-1), int64(-3), -3, false, false, true, false)
	f.Add(uint(1<<20), "日本", "\u2028", "RECONCILE", "file", strings.Repeat("z", 40), "", "c\t", "*", strings.Repeat("y", 300), "x.y.z", "sim0-1", "",
		int64(1)<<50, int64(1)<<40, 7, true, true, false, true)
	f.Fuzz(func(t *testing.T, entry uint, pod, uid, op, source, from, to, container, reason, message, fn, node, pods string,
		t0, delay int64, exit int, hasExit, hasPods, showUID, wide bool) {
		en := Catalogue[entry%uint(len(Catalogue))]
		e := Event{T: time.Duration(t0), Component: en.Component, Event: en.Kind, Pod: pod, UID: uid, Op: op, Source: source,
			From: from, To: to, Container: container, Reason: reason, Message: message, Func: fn, Node: node, Delay: time.Duration(delay)}
		if hasExit {
			e.ExitCode = &exit
		}
		if hasPods {
			e.Pods = []string{}
			if pods != "" {
				e.Pods = strings.Split(pods, ",")
			}
		}
		o := TextOptions{UID: showUID, Wide: wide}
		want := textWithReference(e, o)
		if got := e.AppendText(nil, o); !bytes.Equal(got, []byte(want)) {
			t.Errorf("AppendText() =\n%q\nwant\n%q", got, want)
		}
	})
}
