package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// This file is what a replay reports besides its trace: the scenario's header, each verdict at
// its instant, the steps that could not be carried out, the expectations --until did not reach,
// and the closing summary, in the trace's format. In the JSON format every line is one JSON
// object, so that the whole output is JSON Lines: trace events carry "component", the report's
// own lines carry "kind" (docs/scenarios.md).

// StepError is a step that could not be carried out, such as a containerExit naming a container
// the pod does not have. It fails the replay.
type StepError struct {
	// Step is the step's number in the file, from 1.
	Step int
	At   time.Duration
	// Action is the step's action name, such as containerExit.
	Action string
	Err    error
}

// Error names the step, its instant and its action.
func (s StepError) Error() string {
	return fmt.Sprintf("step %d (%s at %v) could not be carried out: %v", s.Step, s.Action, s.At, s.Err)
}

// Unwrap returns the reason.
func (s StepError) Unwrap() error { return s.Err }

// reporter writes the inline lines of a replay's report to RunOptions.Report. A nil writer
// writes nothing.
type reporter struct {
	w      io.Writer
	format trace.Format
}

// outcome reports an expectation's verdict at the instant it is judged.
func (r reporter) outcome(o Outcome) {
	if r.w == nil {
		return
	}
	if r.format == trace.JSON {
		r.line(jsonOutcome("verdict", o))
		return
	}
	verdict := "ok  "
	tail := ""
	if !o.Met {
		verdict, tail = "FAIL", "; saw "+o.Seen
	}
	fmt.Fprintf(r.w, "%9ss  %-12s  %s step %d: %s%s\n", seconds(o.At), "verdict", verdict, o.Step, o.What, tail)
}

// stepError reports a step that could not be carried out, at its instant.
func (r reporter) stepError(s StepError) {
	if r.w == nil {
		return
	}
	if r.format == trace.JSON {
		r.line(jsonStepErr(s))
		return
	}
	fmt.Fprintf(r.w, "%9ss  %-12s  FAIL step %d: %s could not be carried out: %v\n", seconds(s.At), "verdict", s.Step, s.Action, s.Err)
}

func (r reporter) line(v any) {
	raw, _ := json.Marshal(v) // the report's structs of strings and numbers always marshal
	r.w.Write(append(raw, '\n'))
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

// The JSON objects of the report. Their field names are a contract (docs/scenarios.md).
type (
	jsonHeaderLine struct {
		Kind        string `json:"kind"`
		Name        string `json:"name"`
		File        string `json:"file"`
		Description string `json:"description"`
	}
	jsonVerdictLine struct {
		Kind string  `json:"kind,omitempty"`
		T    float64 `json:"t"`
		Step int     `json:"step"`
		What string  `json:"what"`
		Met  *bool   `json:"met,omitempty"`
		Seen string  `json:"seen,omitempty"`
	}
	jsonStepErrorLine struct {
		Kind   string  `json:"kind,omitempty"`
		T      float64 `json:"t"`
		Step   int     `json:"step"`
		Action string  `json:"action"`
		Error  string  `json:"error"`
	}
	jsonGoldenCheck struct {
		File       string `json:"file"`
		Updated    bool   `json:"updated"`
		Matches    bool   `json:"matches"`
		Difference string `json:"difference,omitempty"`
	}
	jsonSummaryLine struct {
		Kind       string              `json:"kind"`
		Name       string              `json:"name"`
		End        float64             `json:"end"`
		Passed     bool                `json:"passed"`
		Met        int                 `json:"met"`
		Failed     int                 `json:"failed"`
		Outcomes   []jsonVerdictLine   `json:"outcomes"`
		NotReached []jsonVerdictLine   `json:"notReached"`
		StepErrors []jsonStepErrorLine `json:"stepErrors"`
		Golden     *jsonGoldenCheck    `json:"golden,omitempty"`
	}
)

func jsonOutcome(kind string, o Outcome) jsonVerdictLine {
	met := o.Met
	return jsonVerdictLine{Kind: kind, T: o.At.Seconds(), Step: o.Step, What: o.What, Met: &met, Seen: o.Seen}
}

func jsonStepErr(s StepError) jsonStepErrorLine {
	return jsonStepErrorLine{Kind: "stepError", T: s.At.Seconds(), Step: s.Step, Action: s.Action, Error: s.Err.Error()}
}

// WriteHeader prints the scenario's name, file and description before its trace: as comment
// lines in the text format, as one object of kind "scenario" in JSON.
func WriteHeader(w io.Writer, s *Scenario, format trace.Format) {
	desc := strings.TrimSpace(s.Description)
	if format == trace.JSON {
		reporter{w: w}.line(jsonHeaderLine{Kind: "scenario", Name: s.Name, File: s.path, Description: desc})
		return
	}
	fmt.Fprintf(w, "# scenario %s (%s)\n", s.Name, s.path)
	if desc == "" {
		return
	}
	for _, l := range strings.Split(desc, "\n") {
		fmt.Fprintln(w, strings.TrimRight("# "+l, " "))
	}
}

// GoldenCheck is the comparison of a replay's trace with a golden file, for the summary.
type GoldenCheck struct {
	File string
	// Difference is the first difference, "" when the trace matches.
	Difference string
	// Updated says the golden file was rewritten instead of compared.
	Updated bool
}

// WriteSummaryFormat prints the summary in format: WriteSummary's lines in text, one object of
// kind "summary" in JSON. golden, when not nil, adds the comparison with a golden file.
func (r *Result) WriteSummaryFormat(w io.Writer, format trace.Format, golden *GoldenCheck) {
	if format != trace.JSON {
		r.WriteSummary(w)
		switch {
		case golden == nil:
		case golden.Updated:
			fmt.Fprintf(w, "golden %s updated\n", golden.File)
		case golden.Difference == "":
			fmt.Fprintf(w, "trace matches %s\n", golden.File)
		default:
			fmt.Fprintf(w, "trace differs from %s: %s\n", golden.File, golden.Difference)
		}
		return
	}
	m := jsonSummaryLine{Kind: "summary", Name: r.Name, End: r.End.Seconds(), Passed: r.Passed(),
		Outcomes: []jsonVerdictLine{}, NotReached: []jsonVerdictLine{}, StepErrors: []jsonStepErrorLine{}}
	for _, o := range r.Outcomes {
		if o.Met {
			m.Met++
		} else {
			m.Failed++
		}
		m.Outcomes = append(m.Outcomes, jsonOutcome("", o))
	}
	for _, o := range r.NotReached {
		m.NotReached = append(m.NotReached, jsonVerdictLine{T: o.At.Seconds(), Step: o.Step, What: o.What})
	}
	for _, s := range r.StepErrors {
		l := jsonStepErr(s)
		l.Kind = ""
		m.StepErrors = append(m.StepErrors, l)
	}
	if golden != nil {
		m.Golden = &jsonGoldenCheck{File: golden.File, Updated: golden.Updated, Matches: !golden.Updated && golden.Difference == "", Difference: golden.Difference}
	}
	reporter{w: w}.line(m)
}

// RenderTrace renders events as the Recorder writes them in format, one line each. It lets a
// replay compare its trace with a golden file in either format.
func RenderTrace(events []trace.Event, format trace.Format) []byte {
	var b bytes.Buffer
	for _, e := range events {
		if format == trace.JSON {
			line, _ := e.MarshalJSON()
			b.Write(line)
		} else {
			b.WriteString(e.Text())
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// GoldenFormat guesses a golden file's format from its content: JSON Lines when its first
// non-blank byte opens an object, text otherwise. An empty file is text.
func GoldenFormat(content []byte) trace.Format {
	if t := bytes.TrimLeft(content, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return trace.JSON
	}
	return trace.Text
}

// GoldenFormatForPath is the format a golden file is written in: JSON Lines for a .json or
// .jsonl file, text otherwise.
func GoldenFormatForPath(path string) trace.Format {
	if strings.HasSuffix(path, ".jsonl") || strings.HasSuffix(path, ".json") {
		return trace.JSON
	}
	return trace.Text
}

// GoldenPath is the golden file beside a scenario file: web.yaml's is web.golden.
func GoldenPath(scenarioPath string) string {
	for _, ext := range []string{".yaml", ".yml"} {
		if strings.HasSuffix(scenarioPath, ext) {
			return strings.TrimSuffix(scenarioPath, ext) + ".golden"
		}
	}
	return scenarioPath + ".golden"
}

// notReached lists the expectations among the steps from index next on: those a replay stopped
// by --until did not judge.
func (e *engine) notReached(next int) []Outcome {
	var out []Outcome
	for i := next; i < len(e.s.Steps); i++ {
		st := &e.s.Steps[i]
		if x, ok := st.act.(expectation); ok {
			out = append(out, Outcome{Step: i + 1, At: st.At.Duration, What: x.describe()})
		}
	}
	return out
}

// failStep records and reports a step that could not be carried out.
func (e *engine) failStep(action string, err error) {
	st := StepError{Step: e.step + 1, At: e.s.Steps[e.step].At.Duration, Action: action, Err: err}
	e.result.StepErrors = append(e.result.StepErrors, st)
	e.report.stepError(st)
}

// unknownPodHint explains an expectation on a pod the node never saw: most often a name without
// the node suffix of a static pod. It lists the pods the node did see.
func (n *node) unknownPodHint(key string) string {
	if _, ok := n.uids[key]; ok {
		return ""
	}
	ns, name, _ := strings.Cut(key, "/")
	if _, ok := n.kubelet.Pods.GetPodByName(ns, name); ok {
		return ""
	}
	known := make([]string, 0, len(n.uids))
	for k := range n.uids {
		known = append(known, k)
	}
	if len(known) == 0 {
		return fmt.Sprintf(" (no pod %s was ever seen, nor any other pod yet)", key)
	}
	sort.Strings(known)
	return fmt.Sprintf(" (no pod %s was ever seen; known pods: %s)", key, strings.Join(known, ", "))
}

// judged records an expectation's verdict and reports it at once.
func (e *engine) judged(o Outcome) {
	e.result.Outcomes = append(e.result.Outcomes, o)
	e.report.outcome(o)
}
