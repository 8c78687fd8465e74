package teach

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/minikubelet/minikubelet/sim/replay"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// maxInstants bounds how many instants one step's paragraph narrates; the rest is counted.
const maxInstants = 14

// Explain writes a narrated walk-through of a replay: the scenario's description, then one
// paragraph per step saying what the step changed and, instant by instant, what each component
// did because of it, found by following the causes forward from the step's event. Instants that
// repeat an earlier one of the same paragraph are folded into it ("the same again at ..."). The
// text depends only on the trace, so it is as deterministic as the replay.
func Explain(w io.Writer, s *replay.Scenario, res *replay.Result) error {
	x := newExplainer(res.Events)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s\n\n", s.Name, strings.Repeat("=", len(s.Name)))
	if d := strings.TrimSpace(s.Description); d != "" {
		b.WriteString(wrap(d) + "\n\n")
	}
	verdicts := map[int]replay.Outcome{}
	notReached := map[int]bool{}
	for _, o := range res.Outcomes {
		verdicts[o.Step] = o
	}
	for _, o := range res.NotReached {
		verdicts[o.Step], notReached[o.Step] = o, true
	}
	for i := range s.Steps {
		st := &s.Steps[i]
		head := fmt.Sprintf("Step %d at %s, %s.", i+1, dur(st.At.Duration), st.Action())
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
			body = x.step(res.StepSeqs[i])
		} else {
			body = "Nothing in the trace answers this step."
		}
		first, rest, _ := strings.Cut(body, "\n")
		b.WriteString(wrap(head+" "+first) + "\n")
		if rest != "" {
			b.WriteString(rest + "\n")
		}
		b.WriteString("\n")
	}
	passed := "every expectation was met"
	if !res.Passed() {
		passed = "some expectations failed or steps could not be carried out"
	}
	fmt.Fprintf(&b, "The replay ended at %s; %s.\n", dur(res.End), passed)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("explain %s: %w", s.Name, err)
	}
	return nil
}

type explainer struct {
	events []trace.Event
	bySeq  map[uint64]int
	kids   map[uint64][]uint64
}

func newExplainer(events []trace.Event) *explainer {
	x := &explainer{events: events, bySeq: map[uint64]int{}, kids: map[uint64][]uint64{}}
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

// digits hides the numbers of a clause, to tell an instant that repeats an earlier one.
var digits = regexp.MustCompile(`[0-9]+(\.[0-9]+)?(ms|s|m)?`)

func (x *explainer) step(seq uint64) string {
	i, ok := x.bySeq[seq]
	if !ok {
		return "Its event is not in the trace."
	}
	ev := x.events[i]
	var b strings.Builder
	b.WriteString(stepSentence(ev))
	type instant struct {
		t       time.Duration
		clauses []string
		again   []time.Duration
	}
	var instants []*instant
	seen := map[string]*instant{}
	lastExit := map[string]time.Duration{}
	backoff := map[string]time.Duration{}
	var cur *instant
	for _, e := range x.effects(seq) {
		c := clause(e, lastExit, backoff)
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
		// A restart says how long the back-off held it; each one is told.
		if strings.Contains(strings.Join(in.clauses, ";"), "runs again") {
			if told < maxInstants {
				told++
				kept = append(kept, in)
			} else {
				folded++
			}
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
		if in.t != ev.T {
			when = fmt.Sprintf("%s later, at %s", dur(in.t-ev.T), dur(in.t))
		}
		line := fmt.Sprintf("%s: %s.", when, strings.Join(in.clauses, "; "))
		if len(in.again) > 0 {
			line += fmt.Sprintf(" The same happens again at %s.", times(in.again))
		}
		b.WriteString("\n" + indent(wrap(line), "  - ", "    "))
	}
	if folded > 0 {
		fmt.Fprintf(&b, "\n  Its effects go on at %d more instants.", folded)
	}
	if len(kept) == 0 {
		b.WriteString(" Nothing follows from it in the trace.")
	}
	return b.String()
}

func times(ts []time.Duration) string {
	const most = 8
	var parts []string
	for i, t := range ts {
		if i == most {
			parts = append(parts, fmt.Sprintf("and %d more times", len(ts)-most))
			break
		}
		parts = append(parts, dur(t))
	}
	return strings.Join(parts, ", ")
}

// stepSentence says what a scenario step did to the node's world.
func stepSentence(e trace.Event) string {
	pod := e.Pod
	switch e.Event {
	case trace.KindError:
		return fmt.Sprintf("The %s step could not be carried out: %s.", e.Reason, e.Message)
	case trace.KindWriteManifest:
		return fmt.Sprintf("The manifest %s is written into the static pod directory.", e.Message)
	case trace.KindRemoveManifest:
		return fmt.Sprintf("The manifest %s is removed from the static pod directory.", e.Message)
	case trace.KindRenameManifest:
		return fmt.Sprintf("A manifest is renamed: %s.", e.Message)
	case trace.KindServeHTTP:
		return fmt.Sprintf("The manifest URL now answers %s.", e.Message)
	case trace.KindAPICreatePod:
		return fmt.Sprintf("The pod %s is created in the API server.", pod)
	case trace.KindAPIUpdatePod:
		return fmt.Sprintf("The pod %s is updated in the API server.", pod)
	case trace.KindAPIUpdatePodStatus:
		return fmt.Sprintf("The status of %s is changed in the API server.", pod)
	case trace.KindAPIDeletePod:
		return fmt.Sprintf("The pod %s is deleted through the API%s.", pod, paren(e.Message))
	case trace.KindAPIDeleteMirrorPod:
		return fmt.Sprintf("The mirror pod %s is deleted through the API, %s.", pod, e.Message)
	case trace.KindRestartKubelet:
		return "The kubelet process restarts; the runtime's containers live on."
	}
	what := string(e.Event)
	if pod != "" {
		what += " on " + pod
	}
	return fmt.Sprintf("The scenario injects %s%s.", what, paren(e.Message))
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func fn(e trace.Event) string {
	if e.Func == "" {
		return ""
	}
	return " (" + e.Func + ")"
}

func list(pods []string) string {
	if len(pods) == 0 {
		return "no pods"
	}
	if len(pods) > 3 {
		return fmt.Sprintf("%s and %d more pods", strings.Join(pods[:3], ", "), len(pods)-3)
	}
	return strings.Join(pods, ", ")
}

// clause is what one event contributes to the narration, "" for the bookkeeping a reader does
// not need (status round trips, mirror reconciles that change nothing, Normal events that
// repeat the runtime's own).
func clause(e trace.Event, lastExit, backoff map[string]time.Duration) string {
	ctr := e.Pod + "/" + e.Container
	switch e.Component {
	case trace.Sources:
		if e.Event == trace.KindSet && e.Source != "api" {
			return fmt.Sprintf("the %s source sends a SET of %s%s", e.Source, list(e.Pods), fn(e))
		}
	case trace.PodConfig:
		if e.Event == trace.KindUpdate && e.Op != "RECONCILE" {
			return fmt.Sprintf("PodConfig merges it into %s of %s from %s%s", article(e.Op), list(e.Pods), e.Source, fn(e))
		}
	case trace.SyncLoop:
		switch e.Event {
		case trace.KindConfig:
			if e.Op != "RECONCILE" {
				return fmt.Sprintf("the sync loop hands the %s to its handler%s", e.Op, fn(e))
			}
		case trace.KindSync:
			return fmt.Sprintf("the sync loop's tick finds %s due and wakes its worker%s", list(e.Pods), fn(e))
		case trace.KindSkip:
			return fmt.Sprintf("the sync loop leaves %s alone: %s%s", e.Pod, e.Reason, fn(e))
		}
	case trace.PodManager:
		switch e.Event {
		case trace.KindAdd:
			return fmt.Sprintf("the pod manager adds %s%s", e.Pod, fn(e))
		case trace.KindRemove:
			return fmt.Sprintf("the pod manager removes %s%s", e.Pod, fn(e))
		}
	case trace.PodWorkers:
		switch e.Event {
		case trace.KindState:
			switch {
			case e.From == "":
				return fmt.Sprintf("a pod worker starts for %s in state %s%s", e.Pod, e.To, fn(e))
			case e.To == "":
				return fmt.Sprintf("the pod worker of %s is forgotten%s", e.Pod, fn(e))
			}
			return fmt.Sprintf("the pod worker of %s goes from %s to %s%s", e.Pod, e.From, e.To, fn(e))
		case trace.KindSync:
			return fmt.Sprintf("the worker runs %s for %s (%s)", e.Func, e.Pod, e.Op)
		case trace.KindRequeue:
			if e.Delay > 0 && e.Delay < time.Minute {
				return fmt.Sprintf("the worker requeues %s for %s later%s", e.Pod, dur(e.Delay), fn(e))
			}
		case trace.KindError:
			msg := e.Message
			if i := strings.LastIndex(msg, ": "); i >= 0 {
				msg = msg[i+2:]
			}
			return fmt.Sprintf("the sync of %s fails with %s", e.Pod, msg)
		case trace.KindCancel, trace.KindBlocked, trace.KindRestartRequested:
			return fmt.Sprintf("the worker of %s: %s%s%s", e.Pod, e.Event, paren(e.Reason), fn(e))
		}
	case trace.Runtime:
		switch e.Event {
		case trace.KindSync:
			return fmt.Sprintf("SyncPod decides: %s", e.Message)
		case trace.KindSandbox:
			if e.To == "ready" {
				return fmt.Sprintf("the sandbox of %s is ready", e.Pod)
			}
			return fmt.Sprintf("the sandbox of %s is stopped", e.Pod)
		case trace.KindPull:
			return fmt.Sprintf("the runtime pulls %s for %s", e.Message, e.Container)
		case trace.KindPulled:
			if e.Reason == "AlreadyPresent" {
				return fmt.Sprintf("the image %s is already present", e.Message)
			}
			return fmt.Sprintf("the image %s is pulled", e.Message)
		case trace.KindStarted:
			if t, ok := lastExit[ctr]; ok {
				why := "with no back-off yet"
				if d, ok := backoff[ctr]; ok {
					why = fmt.Sprintf("once the crash-loop back-off of %s has run out", dur(d))
				}
				return fmt.Sprintf("container %s runs again, %s after it exited, %s", e.Container, dur(e.T-t), why)
			}
			return fmt.Sprintf("container %s runs", e.Container)
		case trace.KindExited:
			lastExit[ctr] = e.T
			code := "?"
			if e.ExitCode != nil {
				code = strconv.Itoa(*e.ExitCode)
			}
			return fmt.Sprintf("container %s exits with code %s (%s)", e.Container, code, e.Reason)
		case trace.KindKilling:
			return fmt.Sprintf("the runtime stops container %s with a grace period of %s%s", e.Container, dur(e.Delay), fn(e))
		case trace.KindBackOff:
			if e.Reason == "ImagePullBackOff" {
				return fmt.Sprintf("the pull of %s for %s is held back by the image pull back-off, now %s%s", e.Message, e.Container, dur(e.Delay), fn(e))
			}
			backoff[ctr] = e.Delay
			return fmt.Sprintf("the restart of %s is held back by the crash-loop back-off, now %s%s", e.Container, dur(e.Delay), fn(e))
		case trace.KindFailed:
			return fmt.Sprintf("the runtime fails: %s (%s)", e.Message, e.Reason)
		case trace.KindRemoved:
			if e.Container != "" {
				return fmt.Sprintf("the dead container %s is removed", e.Container)
			}
		}
	case trace.PLEG:
		if e.Event != trace.KindHealth {
			what := "the sandbox"
			if e.Container != "" {
				what = e.Container
			}
			return fmt.Sprintf("the PLEG's relist reports %s for %s", e.Event, what)
		}
	case trace.Status:
		if e.Event == trace.KindSet && e.From != e.To {
			return fmt.Sprintf("the status manager moves %s from %s to %s", e.Pod, or(e.From, "nothing"), e.To)
		}
		if e.Event == trace.KindDelete {
			return fmt.Sprintf("the status manager deletes the finished pod %s from the API server", e.Pod)
		}
	case trace.APIServer:
		switch e.Event {
		case trace.KindCreate:
			return fmt.Sprintf("the API server stores the new pod %s", e.Pod)
		case trace.KindDeleting:
			return fmt.Sprintf("the API server marks %s for deletion", e.Pod)
		case trace.KindDelete:
			return fmt.Sprintf("the API server deletes %s", e.Pod)
		}
	case trace.Mirror:
		switch e.Event {
		case trace.KindCreate:
			return fmt.Sprintf("the kubelet creates the mirror pod of %s%s", e.Pod, fn(e))
		case trace.KindDelete:
			return fmt.Sprintf("the kubelet deletes the mirror pod of %s%s", e.Pod, fn(e))
		}
	case trace.PodStartup:
		if e.Event == trace.KindMeasured {
			return fmt.Sprintf("the pod startup latency tracker measures %s's start: %s", e.Pod, e.Message)
		}
	case trace.Events:
		if e.Event == trace.KindWarning {
			return fmt.Sprintf("the kubelet records a Warning event %s", e.Reason)
		}
	default:
		if e.Event == trace.KindError {
			return fmt.Sprintf("%s fails: %s", e.Component, e.Message)
		}
		if e.Component == trace.Node || e.Component == trace.Housekeeping || e.Component == trace.WorkQueue {
			return ""
		}
		// Plugins, and components this narration has no words for.
		s := fmt.Sprintf("%s: %s", e.Component, e.Event)
		if e.Pod != "" {
			s += " " + e.Pod
		}
		return s + paren(e.Message) + fn(e)
	}
	return ""
}

// article puts "a" or "an" before an operation's name, as it is read aloud.
func article(op string) string {
	if op != "" && strings.ContainsRune("AEIOU", rune(op[0])) {
		return "an " + op
	}
	return "a " + op
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
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

// dur writes a duration as a person would: 20s, 1.5s, 2m30s.
func dur(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	s := d.Round(time.Millisecond).String()
	s = strings.Replace(s, "m0s", "m", 1)
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
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
