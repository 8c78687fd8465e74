package teach

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/minikubelet/minikubelet/sim/replay"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// maxInstants bounds how many instants one step's paragraph narrates, restarts aside; the rest is
// counted.
const maxInstants = 14

// Explain writes a narrated walk-through of a replay: the scenario's description, the kubelet's
// start-up (in one paragraph, or event by event in the start-up lesson's scenarios), then one
// paragraph per step saying what the step changed and, instant by instant, what each component
// did because of it, found by following the causes forward from the step's event. Instants that
// repeat an earlier one of the same paragraph are folded into it ("the same again at ..."). The
// text depends only on the trace, so it is as deterministic as the replay.
func Explain(w io.Writer, s *replay.Scenario, res *replay.Result) error {
	x := newExplainer(res.Events)
	g, err := BuiltinGlossary()
	if err != nil {
		return fmt.Errorf("explain %s: %w", s.Name, err)
	}
	x.words = NewExpander(g)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s\n\n", s.Name, strings.Repeat("=", len(s.Name)))
	if d := strings.TrimSpace(s.Description); d != "" {
		b.WriteString(wrap(x.words.Expand(d)) + "\n\n")
	}
	verdicts := map[int]replay.Outcome{}
	notReached := map[int]bool{}
	for _, o := range res.Outcomes {
		verdicts[o.Step] = o
	}
	for _, o := range res.NotReached {
		verdicts[o.Step], notReached[o.Step] = o, true
	}
	var firstStep uint64
	for _, seq := range res.StepSeqs {
		if seq != 0 {
			firstStep = seq
			break
		}
	}
	if p := x.startUp(firstStep, startUpIsThePoint(s.Name)); p != "" {
		b.WriteString(p + "\n\n")
	}
	adopted, handedTo := x.adoptions(res.StepSeqs)
	for i := range s.Steps {
		st := &s.Steps[i]
		head := fmt.Sprintf("Step %d at %s, %s.", i+1, trace.Human(st.At.Duration), st.Action())
		var body string
		if o, ok := verdicts[i+1]; ok {
			switch {
			case notReached[i+1]:
				body = fmt.Sprintf("The scenario would check %s, but the replay stopped before.", o.What)
			case o.Met:
				body = fmt.Sprintf("The scenario checks %s: met.", o.What)
			default:
				body = fmt.Sprintf("The scenario checks %s: FAILED, it saw %s.", o.What, o.Seen)
			}
		} else if i < len(res.StepSeqs) && res.StepSeqs[i] != 0 {
			body = x.step(res.StepSeqs[i], adopted[i], handedTo[i])
		} else {
			body = "Nothing in the trace answers this step."
		}
		first, rest, _ := strings.Cut(body, "\n")
		b.WriteString(wrap(x.words.Expand(head+" "+first)) + "\n")
		if rest != "" {
			b.WriteString(rest + "\n")
		}
		b.WriteString("\n")
	}
	passed := "every expectation was met"
	if !res.Passed() {
		passed = "some expectations failed or steps could not be carried out"
	}
	fmt.Fprintf(&b, "The replay ended at %s; %s.\n", trace.Human(res.End), passed)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("explain %s: %w", s.Name, err)
	}
	return nil
}

type explainer struct {
	events []trace.Event
	bySeq  map[uint64]int
	kids   map[uint64][]uint64
	// words expands the abbreviations of the glossary where the narration first uses them.
	words *Expander
	// story is what the narration knows of the trace, shared by its paragraphs.
	story *trace.Story
}

func newExplainer(events []trace.Event) *explainer {
	x := &explainer{events: events, bySeq: map[uint64]int{}, kids: map[uint64][]uint64{}, words: NewExpander(nil),
		story: trace.NewStory().Trace(events)}
	for i, e := range events {
		x.bySeq[e.Seq] = i
		if e.Cause != 0 {
			x.kids[e.Cause] = append(x.kids[e.Cause], e.Seq)
		}
	}
	return x
}

// effects returns the events whose cause chain passes through seq, in seq order.
func (x *explainer) effects(seq uint64) []trace.Event {
	var out []trace.Event
	queue := []uint64{seq}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, k := range x.kids[s] {
			out = append(out, x.events[x.bySeq[k]])
			queue = append(queue, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// adoptions finds the steps applied to a pod before it exists, such as a crashLoop or a probe
// rule given before the pod is created: what follows from them happens to the pod, so it is told
// in the paragraph of the step that made the pod, with that step's own effects, rather than
// under a step that, at its time, changed nothing. adopted[j] lists the events of the steps whose
// effects step j tells; handedTo[i] is the step (from 0) that tells step i's, -1 for none.
func (x *explainer) adoptions(stepSeqs []uint64) (adopted map[int][]uint64, handedTo map[int]int) {
	adopted, handedTo = map[int][]uint64{}, map[int]int{}
	stepOf := map[uint64]int{}
	for i, seq := range stepSeqs {
		if seq != 0 {
			stepOf[seq] = i
		}
	}
	for i, seq := range stepSeqs {
		handedTo[i] = -1
		at, ok := x.bySeq[seq]
		if seq == 0 || !ok || x.events[at].Pod == "" {
			continue
		}
		pod := x.events[at].Pod
		// The pod's first event from the kubelet or the API server, and the step at the root of
		// its causes; none before this step's event, or the pod existed already.
		first := -1
		for j, e := range x.events {
			if e.Component == trace.Scenario || !names(e, pod) {
				continue
			}
			first = j
			break
		}
		if first < at {
			continue
		}
		root := x.events[first]
		for root.Cause != 0 {
			k, ok := x.bySeq[root.Cause]
			if !ok {
				break
			}
			root = x.events[k]
		}
		if j, ok := stepOf[root.Seq]; ok && j != i {
			adopted[j] = append(adopted[j], seq)
			handedTo[i] = j
		}
	}
	return adopted, handedTo
}

// names reports whether an event is about pod.
func names(e trace.Event, pod string) bool {
	return e.Pod == pod || slices.Contains(e.Pods, pod)
}

// digits hides the numbers of a clause, to tell an instant that repeats an earlier one.
var digits = regexp.MustCompile(`[0-9]+(\.[0-9]+)?(ms|s|m)?`)

// step narrates a step's paragraph: what its event did, then what followed from it and from the
// adopted steps' events, instant by instant. handedTo is the step (from 0) that tells what
// follows from this one instead, -1 for none.
func (x *explainer) step(seq uint64, adopted []uint64, handedTo int) string {
	i, ok := x.bySeq[seq]
	if !ok {
		return "Its event is not in the trace."
	}
	ev := x.events[i]
	var b strings.Builder
	story := x.story.Paragraph()
	b.WriteString(x.words.Expand(story.Tell(ev)))
	if handedTo >= 0 {
		fmt.Fprintf(&b, " The pod does not exist yet: what follows from it is told with step %d, which creates it.", handedTo+1)
		return b.String()
	}
	effects := x.effects(seq)
	for _, a := range adopted {
		effects = append(effects, x.effects(a)...)
	}
	sort.Slice(effects, func(i, j int) bool { return effects[i].Seq < effects[j].Seq })
	x.instants(&b, story, ev.T, effects)
	return b.String()
}

// instants narrates effects instant by instant after an event at t: one line per instant, an
// instant that repeats an earlier one folded into it, at most maxInstants told.
func (x *explainer) instants(b *strings.Builder, story *trace.Story, t time.Duration, effects []trace.Event) {
	type instant struct {
		t       time.Duration
		clauses []string
		again   []time.Duration
	}
	var instants []*instant
	seen := map[string]*instant{}
	var cur *instant
	for _, e := range effects {
		c := story.Tell(e)
		if c == "" {
			continue
		}
		if cur == nil || cur.t != e.T {
			cur = &instant{t: e.T}
			instants = append(instants, cur)
		}
		if n := len(cur.clauses); n == 0 || cur.clauses[n-1] != c {
			cur.clauses = append(cur.clauses, c)
		}
	}
	told, folded := 0, 0
	var kept []*instant
	for _, in := range instants {
		// A restart says how long the back-off held it; each one is told, past the limit too.
		if strings.Contains(strings.Join(in.clauses, ";"), "runs again") {
			kept = append(kept, in)
			continue
		}
		sig := digits.ReplaceAllString(strings.Join(in.clauses, "; "), "#")
		if first, ok := seen[sig]; ok {
			first.again = append(first.again, in.t)
			continue
		}
		seen[sig] = in
		if told == maxInstants {
			folded++
			continue
		}
		told++
		kept = append(kept, in)
	}
	for _, in := range kept {
		when := "at once"
		if in.t != t {
			when = fmt.Sprintf("%s later, at %s", trace.Human(in.t-t), trace.Human(in.t))
		}
		line := fmt.Sprintf("%s: %s.", when, strings.Join(in.clauses, "; "))
		if len(in.again) > 0 {
			line += fmt.Sprintf(" The same happens again at %s.", times(in.again))
		}
		b.WriteString("\n" + indent(wrap(x.words.Expand(line)), "  - ", "    "))
	}
	if folded > 0 {
		fmt.Fprintf(b, "\n  Its effects go on at %d more instants.", folded)
	}
	if len(kept) == 0 {
		b.WriteString(" Nothing follows from it in the trace.")
	}
}

func times(ts []time.Duration) string {
	const most = 8
	var parts []string
	for i, t := range ts {
		if i == most {
			parts = append(parts, fmt.Sprintf("and %d more times", len(ts)-most))
			break
		}
		parts = append(parts, trace.Human(t))
	}
	return strings.Join(parts, ", ")
}

// indent prefixes the first line of text with first and the others with rest.
func indent(text, first, rest string) string {
	lines := strings.Split(text, "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = rest + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// wrap folds text at 100 columns, keeping the paragraphs it has.
func wrap(text string) string {
	var out []string
	for _, para := range strings.Split(text, "\n\n") {
		words := strings.Fields(para)
		var line strings.Builder
		var lines []string
		for _, w := range words {
			if line.Len() > 0 && line.Len()+1+len(w) > 100 {
				lines = append(lines, line.String())
				line.Reset()
			}
			if line.Len() > 0 {
				line.WriteByte(' ')
			}
			line.WriteString(w)
		}
		if line.Len() > 0 {
			lines = append(lines, line.String())
		}
		out = append(out, strings.Join(lines, "\n"))
	}
	return strings.Join(out, "\n\n")
}
