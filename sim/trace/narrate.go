package trace

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Say narrates one event for a reader (`minikubelet explain`): a clause such as "the pod manager
// adds default/web (AddPod)", or "" for an event a narration leaves out, the bookkeeping a reader
// does not need (status round trips, mirror reconciles that change nothing, Normal events that
// repeat the runtime's own). It may read and update the Story told so far. A nil Say leaves the
// event out. Each row of the Catalogue holds the Say of its event; most are a template (says).
type Say func(e Event, s *Story) string

// Story is what a narration remembers from the events it told before, for the sentences that
// need it: when a container last exited, and the crash-loop back-off that last held it, to say
// how long a restart waited and why.
type Story struct {
	lastExit map[string]time.Duration // by pod/container
	backoff  map[string]time.Duration // by pod/container
}

// NewStory returns a Story that has told nothing yet.
func NewStory() *Story {
	return &Story{lastExit: map[string]time.Duration{}, backoff: map[string]time.Duration{}}
}

// Tell narrates e with the Say of its Catalogue row (Lookup), "" when the row has none or there
// is no row.
func (s *Story) Tell(e Event) string {
	en, ok := Lookup(e)
	if !ok || en.Say == nil {
		return ""
	}
	return en.Say(e, s)
}

// Human writes a duration as a person would: 20s, 1.5s, 2m30s, 1h.
func Human(d time.Duration) string {
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

// says returns the Say of a template: the text, with each {field} replaced by the event's field.
// The fields are pod, container, op, source, from, to, reason, message, event, component and func
// as they are; pods as a short list ("a, b, c and 4 more pods"); delay as Human writes it; "an op"
// is the op with its article ("an ADD"). A field written with its leading space, "{ pod}", or in
// parentheses, "{(func)}", brings the space or the parentheses only when it is set.
func says(template string) Say {
	type part struct {
		text, field string
		space, par  bool
	}
	var parts []part
	for rest := template; rest != ""; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			parts = append(parts, part{text: rest})
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			panic("trace: unclosed field in narration template " + strconv.Quote(template))
		}
		p := part{text: rest[:i], field: rest[i+1 : i+j]}
		if f, ok := strings.CutPrefix(p.field, " "); ok {
			p.field, p.space = f, true
		}
		if f, ok := strings.CutPrefix(p.field, "("); ok {
			p.field, p.par = strings.TrimSuffix(f, ")"), true
		}
		if _, ok := fieldOf(Event{}, p.field); !ok {
			panic("trace: unknown field {" + p.field + "} in narration template " + strconv.Quote(template))
		}
		parts = append(parts, p)
		rest = rest[i+j+1:]
	}
	return func(e Event, _ *Story) string {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.text)
			if p.field == "" {
				continue
			}
			v, _ := fieldOf(e, p.field)
			switch {
			case v == "" && (p.space || p.par):
			case p.par:
				b.WriteString(" (" + v + ")")
			case p.space:
				b.WriteString(" " + v)
			default:
				b.WriteString(v)
			}
		}
		return b.String()
	}
}

// fieldOf is the value of a template's field.
func fieldOf(e Event, field string) (string, bool) {
	switch field {
	case "pod":
		return e.Pod, true
	case "container":
		return e.Container, true
	case "op":
		return e.Op, true
	case "an op":
		return article(e.Op), true
	case "source":
		return e.Source, true
	case "from":
		return e.From, true
	case "to":
		return e.To, true
	case "reason":
		return e.Reason, true
	case "message":
		return e.Message, true
	case "event":
		return string(e.Event), true
	case "component":
		return string(e.Component), true
	case "func":
		return e.Func, true
	case "pods":
		return list(e.Pods), true
	case "delay":
		return Human(e.Delay), true
	}
	return "", false
}

// list names the pods of a batch, the first three and how many more.
func list(pods []string) string {
	if len(pods) == 0 {
		return "no pods"
	}
	if len(pods) > 3 {
		return fmt.Sprintf("%s and %d more pods", strings.Join(pods[:3], ", "), len(pods)-3)
	}
	return strings.Join(pods, ", ")
}

// article puts "a" or "an" before an operation's name, as it is read aloud.
func article(op string) string {
	if op != "" && strings.ContainsRune("AEIOU", rune(op[0])) {
		return "an " + op
	}
	return "a " + op
}

// unlessReconcile leaves out a RECONCILE: the echo of the kubelet's own status writes.
func unlessReconcile(s Say) Say {
	return func(e Event, st *Story) string {
		if e.Op == "RECONCILE" {
			return ""
		}
		return s(e, st)
	}
}

// The narrations that need more than a template.
var (
	// sayFails is the words of an error of a component the narration has no other words for.
	sayFails = says("{component} fails: {message}")
	// sayPlain is the words of an event of a component the narration has no other words for:
	// the plugin pipeline and the controllers.
	sayPlain = says("{component}: {event}{ pod}{(message)}{(func)}")

	saySourceSet = func(e Event, s *Story) string {
		// The api source's SETs echo the API server's writes, which the narration tells.
		if e.Source == "api" {
			return ""
		}
		return sourceSet(e, s)
	}
	sourceSet = says("the {source} source sends a SET of {pods}{(func)}")

	sayWorkerState = func(e Event, _ *Story) string {
		switch {
		case e.From == "":
			return fmt.Sprintf("a pod worker starts for %s in state %s%s", e.Pod, e.To, paren(e.Func))
		case e.To == "":
			return fmt.Sprintf("the pod worker of %s is forgotten%s", e.Pod, paren(e.Func))
		}
		return fmt.Sprintf("the pod worker of %s goes from %s to %s%s", e.Pod, e.From, e.To, paren(e.Func))
	}
	sayRequeue = func(e Event, _ *Story) string {
		// The 60-90s resync after a good sync is routine; a short wait is news.
		if e.Delay > 0 && e.Delay < time.Minute {
			return fmt.Sprintf("the worker requeues %s for %s later%s", e.Pod, Human(e.Delay), paren(e.Func))
		}
		return ""
	}
	saySyncError = func(e Event, _ *Story) string {
		// The last part of a wrapped error is what went wrong.
		msg := e.Message
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		return fmt.Sprintf("the sync of %s fails with %s", e.Pod, msg)
	}
	sayWorkerNote = says("the worker of {pod}: {event}{(reason)}{(func)}")

	saySandbox = func(e Event, _ *Story) string {
		if e.To == "ready" {
			return fmt.Sprintf("the sandbox of %s is ready", e.Pod)
		}
		return fmt.Sprintf("the sandbox of %s is stopped", e.Pod)
	}
	sayPulled = func(e Event, _ *Story) string {
		if e.Reason == "AlreadyPresent" {
			return fmt.Sprintf("the image %s is already present", e.Message)
		}
		return fmt.Sprintf("the image %s is pulled", e.Message)
	}
	sayRuntimeFails = says("the runtime fails: {message} ({reason})")
	sayStarted      = func(e Event, s *Story) string {
		ctr := e.Pod + "/" + e.Container
		if t, ok := s.lastExit[ctr]; ok {
			why := "with no back-off yet"
			if d, ok := s.backoff[ctr]; ok {
				why = fmt.Sprintf("once the crash-loop back-off of %s has run out", Human(d))
			}
			return fmt.Sprintf("container %s runs again, %s after it exited, %s", e.Container, Human(e.T-t), why)
		}
		return fmt.Sprintf("container %s runs", e.Container)
	}
	sayExited = func(e Event, s *Story) string {
		s.lastExit[e.Pod+"/"+e.Container] = e.T
		code := "?"
		if e.ExitCode != nil {
			code = strconv.Itoa(*e.ExitCode)
		}
		return fmt.Sprintf("container %s exits with code %s (%s)", e.Container, code, e.Reason)
	}
	sayCrashLoopBackOff = func(e Event, s *Story) string {
		s.backoff[e.Pod+"/"+e.Container] = e.Delay
		return crashLoopBackOff(e, s)
	}
	crashLoopBackOff = says("the restart of {container} is held back by the crash-loop back-off, now {delay}{(func)}")
	sayRemoved       = func(e Event, s *Story) string {
		// A stopped sandbox's removal is bookkeeping; a dead container's is news.
		if e.Container == "" {
			return ""
		}
		return fmt.Sprintf("the dead container %s is removed", e.Container)
	}

	sayRelist = func(e Event, _ *Story) string {
		what := "the sandbox"
		if e.Container != "" {
			what = e.Container
		}
		return fmt.Sprintf("the PLEG's relist reports %s for %s", e.Event, what)
	}

	sayStatusSet = func(e Event, _ *Story) string {
		if e.From == e.To {
			return ""
		}
		from := e.From
		if from == "" {
			from = "nothing"
		}
		return fmt.Sprintf("the status manager moves %s from %s to %s", e.Pod, from, e.To)
	}
)

// Scenario steps: what a step did to the node's world, as the first sentence of its paragraph.
var (
	sayStepFailed = says("The {reason} step could not be carried out: {message}.")
	sayInjects    = func(e Event, _ *Story) string {
		what := string(e.Event)
		if e.Pod != "" {
			what += " on " + e.Pod
		}
		return fmt.Sprintf("The scenario injects %s%s.", what, paren(e.Message))
	}
)

// paren is " (s)", or "" for an empty s.
func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
