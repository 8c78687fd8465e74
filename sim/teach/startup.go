package teach

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// StartUpLesson is the lesson whose point is the kubelet's start-up: Explain narrates the
// start-up of its scenarios event by event, and of every other scenario in one paragraph.
const StartUpLesson = "start-up"

// startUpIsThePoint reports whether the scenario named name belongs to the built-in start-up
// lesson.
func startUpIsThePoint(name string) bool {
	c, err := Builtin()
	if err != nil {
		return false
	}
	l, ok := c.Lesson(StartUpLesson)
	return ok && slices.Contains(l.Scenarios, name)
}

// startUp narrates the start-up of the first kubelet process: its new event and what follows
// from it before the first step (firstStep, the first step's event, 0 for none). In full, it is
// told event by event, one line each, function by function; otherwise in one paragraph that names the start-up's
// functions in order and when the node registered, the PLEG turned healthy and the sync loop
// began to dispatch. "" when the trace has no start-up.
func (x *explainer) startUp(firstStep uint64, full bool) string {
	i := slices.IndexFunc(x.events, func(e trace.Event) bool {
		return e.Component == trace.Kubelet && e.Event == trace.KindNew
	})
	if i < 0 {
		return ""
	}
	ev := x.events[i]
	var effects []trace.Event
	for _, e := range x.effects(ev.Seq) {
		if firstStep == 0 || e.Seq < firstStep {
			effects = append(effects, e)
		}
	}
	head := fmt.Sprintf("Start-up at %s.", trace.Human(ev.T))
	if full {
		var b strings.Builder
		story := x.story.Paragraph()
		b.WriteString(wrap(x.words.Expand(head + " " + story.Tell(ev) + ".")))
		for _, e := range effects {
			c := story.Tell(e)
			if c == "" {
				continue
			}
			if e.T != ev.T {
				c = fmt.Sprintf("%s later, at %s: %s", trace.Human(e.T-ev.T), trace.Human(e.T), c)
			}
			b.WriteString("\n" + indent(wrap(x.words.Expand(c+".")), "  - ", "    "))
		}
		return b.String()
	}
	var sources string
	var run []string
	milestones := map[string]time.Duration{}
	for _, e := range append([]trace.Event{ev}, effects...) {
		switch {
		case e.Component == trace.Kubelet && e.Event == trace.KindSources:
			sources = e.Message
		case e.Component == trace.Kubelet && e.Event != trace.KindNew && e.Event != trace.KindRun:
			run = append(run, e.Func)
		case e.Component == trace.Node && e.Event == trace.KindRegister:
			milestones["register"] = e.T
		case e.Component == trace.Node && e.Event == trace.KindReady && e.To == "True":
			if _, ok := milestones["ready"]; !ok {
				milestones["ready"] = e.T
			}
		case e.Component == trace.PLEG && e.Event == trace.KindHealth:
			milestones["healthy"] = e.T
		case e.Component == trace.SyncLoop && e.Event == trace.KindResume:
			milestones["resume"] = e.T
		}
	}
	var b strings.Builder
	b.WriteString(head + " NewMainKubelet builds the kubelet process")
	if names := strings.Fields(sources); len(names) > 0 {
		noun := "source"
		if len(names) > 1 {
			noun += "s"
		}
		fmt.Fprintf(&b, " with the %s %s (makePodSourceConfig)", joinWords(names), noun)
	}
	b.WriteString(" and records the event Starting, \"Starting kubelet.\"; Kubelet.Run runs, in order, ")
	b.WriteString(joinWords(run))
	var after []string
	if t, ok := milestones["healthy"]; ok {
		after = append(after, "the PLEG has relisted at "+trace.Human(t))
	}
	if t, ok := milestones["resume"]; ok {
		after = append(after, "the sync loop dispatches from "+trace.Human(t))
	}
	// Registration sleeps 100ms first, and the node turns Ready once its CSINode exists.
	if t, ok := milestones["register"]; ok {
		reg := "the node registers at " + trace.Human(t)
		if r, ok := milestones["ready"]; ok {
			reg += " and turns Ready at " + trace.Human(r)
		}
		after = append(after, reg)
	}
	if len(after) > 0 {
		b.WriteString("; " + joinWords(after))
	}
	b.WriteString(". (The lesson start-up tells it event by event.)")
	return wrap(x.words.Expand(b.String()))
}

// joinWords joins words as a sentence does: "a", "a and b", "a, b and c".
func joinWords(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
