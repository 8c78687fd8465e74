package teach

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/minikubelet/minikubelet/sim/replay"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// sourceBase is where a func's source is linked: the kubelet's v1.35.0 tag.
const sourceBase = "https://github.com/kubernetes/kubernetes/blob/v1.35.0/"

// FuncURL returns the link to the kubelet function an event of component names, at its line in
// the v1.35.0 source, or "" when the function is not in the table (an API request, a name the
// simulator made up).
func FuncURL(component trace.Component, fn string) string {
	loc, ok := funcSource[string(component)+"/"+fn]
	if !ok {
		if loc, ok = funcSource[fn]; !ok {
			return ""
		}
	}
	file, line, _ := strings.Cut(loc, ":")
	return sourceBase + file + "#L" + line
}

// Step is one scenario step as the timeline shows it.
type Step struct {
	// N is the step's number in the file, from 1.
	N      int     `json:"n"`
	At     float64 `json:"at"`
	Action string  `json:"action"`
	// Seq is the trace event the step emitted, 0 for an observing step.
	Seq uint64 `json:"seq,omitempty"`
	// What and Met are an expectation's description and verdict (none when the replay stopped
	// before it); Seen what was found instead.
	What string `json:"what,omitempty"`
	Met  *bool  `json:"met,omitempty"`
	Seen string `json:"seen,omitempty"`
}

// Timeline is what the HTML view draws: the scenario, its steps and verdicts, and the trace.
type Timeline struct {
	Name        string  `json:"name"`
	Description string  `json:"description,omitempty"`
	End         float64 `json:"end"`
	Steps       []Step  `json:"steps"`
	// Live says the view is fed by server-sent events rather than Events.
	Live bool `json:"live,omitempty"`
	// Funcs maps "component/func" of the events to their source links.
	Funcs map[string]string `json:"funcs"`
	// Diffs holds, by the seq of a sync loop config event for an UPDATE or RECONCILE of one pod,
	// the line diff of the pod it handed over.
	Diffs map[uint64]string `json:"diffs,omitempty"`
	// Strings and Events are the trace, compactly: each event is an array of
	// [seq, cause, t, component, event, pod, uid, container, op, source, from, to, exitCode,
	// delay, reason, message, func, pods], strings as indexes into Strings (0 is ""), exitCode
	// null when unset, pods a list of indexes or null.
	Strings []string `json:"strings"`
	Events  [][]any  `json:"events"`
	// Glossary is the kubelet's vocabulary, which the page links lanes and fields to.
	Glossary []Term `json:"glossary,omitempty"`
}

// NewTimeline builds the timeline of a replay of s that gave res, its events kept.
func NewTimeline(s *replay.Scenario, res *replay.Result) *Timeline {
	tl := &Timeline{Name: s.Name, End: res.End.Seconds(), Funcs: map[string]string{}}
	tl.withGlossary(strings.TrimSpace(s.Description))
	verdicts := map[int]replay.Outcome{}
	for _, o := range res.Outcomes {
		verdicts[o.Step] = o
	}
	notReached := map[int]string{}
	for _, o := range res.NotReached {
		notReached[o.Step] = o.What
	}
	for i := range s.Steps {
		st := Step{N: i + 1, At: s.Steps[i].At.Seconds(), Action: s.Steps[i].Action()}
		if i < len(res.StepSeqs) {
			st.Seq = res.StepSeqs[i]
		}
		if o, ok := verdicts[i+1]; ok {
			met := o.Met
			st.What, st.Met, st.Seen = o.What, &met, o.Seen
		}
		if what, ok := notReached[i+1]; ok {
			// Not judged: no verdict, and the page says so.
			st.What = what
		}
		tl.Steps = append(tl.Steps, st)
	}
	tl.Diffs = res.PodDiffs
	tl.Add(res.Events...)
	return tl
}

// withGlossary sets the timeline's glossary and its description, the glossary's abbreviations
// expanded where it first uses them. The glossary is built in; a timeline without one only has
// fewer links.
func (tl *Timeline) withGlossary(description string) {
	g, err := BuiltinGlossary()
	if err != nil {
		g = nil
	}
	tl.Description = NewExpander(g).Expand(description)
	if g != nil {
		tl.Glossary = g.Terms
	}
}

// Add appends events to the timeline.
func (tl *Timeline) Add(events ...trace.Event) {
	index := map[string]int{}
	for i, s := range tl.Strings {
		index[s] = i
	}
	if len(tl.Strings) == 0 {
		tl.Strings = []string{""}
		index[""] = 0
	}
	str := func(s string) int {
		if i, ok := index[s]; ok {
			return i
		}
		index[s] = len(tl.Strings)
		tl.Strings = append(tl.Strings, s)
		return index[s]
	}
	for _, e := range events {
		tl.Events = append(tl.Events, compact(e, str))
		if e.Func != "" {
			key := string(e.Component) + "/" + e.Func
			if _, ok := tl.Funcs[key]; !ok {
				if u := FuncURL(e.Component, e.Func); u != "" {
					tl.Funcs[key] = u
				}
			}
		}
	}
}

func compact(e trace.Event, str func(string) int) []any {
	var exit any
	if e.ExitCode != nil {
		exit = *e.ExitCode
	}
	var pods any
	if e.Pods != nil {
		ids := make([]int, len(e.Pods))
		for i, p := range e.Pods {
			ids[i] = str(p)
		}
		pods = ids
	}
	return []any{e.Seq, e.Cause, seconds(e.T), str(string(e.Component)), str(string(e.Event)), str(e.Pod), str(e.UID),
		str(e.Container), str(e.Op), str(e.Source), str(e.From), str(e.To), exit, seconds(e.Delay), str(e.Reason),
		str(e.Message), str(e.Func), pods}
}

// seconds is d in seconds, rounded to the microsecond so that the data stays short.
func seconds(d time.Duration) float64 {
	return float64(d.Round(time.Microsecond)) / float64(time.Second)
}

// JSON returns the timeline as JSON, safe to embed in a script element (encoding/json escapes <, >
// and &).
func (tl *Timeline) JSON() ([]byte, error) {
	b, err := json.Marshal(tl)
	if err != nil {
		return nil, fmt.Errorf("timeline %s: %w", tl.Name, err)
	}
	return b, nil
}
