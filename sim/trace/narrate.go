package trace

import (
	"fmt"
	"regexp"
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
// how long a restart waited and why. Those belong to one paragraph; a Story also knows the whole
// trace it narrates (Trace), which every paragraph of it shares (Paragraph): which pods were
// measured, which UIDs are mirror pods', what an event is followed by.
type Story struct {
	lastExit map[string]time.Duration // by pod/container
	backoff  map[string]time.Duration // by pod/container
	*world
}

// world is what the paragraphs of one narration share.
type world struct {
	events   []Event
	bySeq    map[uint64]int
	mirrors  map[string]bool   // the UIDs of mirror pods
	measured map[string]string // by pod: the UID whose start was last measured
}

// NewStory returns a Story that has told nothing yet and knows no trace.
func NewStory() *Story {
	return &Story{lastExit: map[string]time.Duration{}, backoff: map[string]time.Duration{},
		world: &world{bySeq: map[uint64]int{}, mirrors: map[string]bool{}, measured: map[string]string{}}}
}

// Trace lets the story know the whole trace it narrates, in seq order.
func (s *Story) Trace(events []Event) *Story {
	s.events = events
	for i, e := range events {
		s.bySeq[e.Seq] = i
		if e.Component == PodManager && e.Reason == "mirror" && e.UID != "" {
			s.mirrors[e.UID] = true
		}
	}
	return s
}

// Paragraph returns a Story for the next paragraph: what the last one told of containers is
// forgotten, what the narration knows of the trace is kept.
func (s *Story) Paragraph() *Story {
	return &Story{lastExit: map[string]time.Duration{}, backoff: map[string]time.Duration{}, world: s.world}
}

// followedAtOnce reports whether the next event of component c about e's pod, at e's instant,
// is of kind k.
func (s *Story) followedAtOnce(e Event, c Component, k Kind) bool {
	i, ok := s.bySeq[e.Seq]
	if !ok {
		return false
	}
	for _, n := range s.events[i+1:] {
		if n.T != e.T {
			break
		}
		if n.Component == c && n.Pod == e.Pod {
			return n.Event == k
		}
	}
	return false
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

	saySyncPodActions = func(e Event, _ *Story) string {
		if words, ok := podActions(e.Message); ok {
			return "SyncPod decides to " + words
		}
		return "SyncPod decides: " + e.Message
	}

	sayMeasured = func(e Event, s *Story) string {
		before, seen := s.measured[e.Pod]
		s.measured[e.Pod] = e.UID
		if seen && before != e.UID {
			// The tracker measures a pod object once; an object made again is a new pod to it.
			what := "a new object under the name " + e.Pod
			if s.mirrors[e.UID] {
				what = "the new mirror pod of " + e.Pod
			}
			return fmt.Sprintf("the pod startup latency tracker sees %s and measures it as a pod that just started: %s", what, e.Message)
		}
		return fmt.Sprintf("the pod startup latency tracker measures %s's start: %s", e.Pod, e.Message)
	}

	sayDeleting = func(e Event, s *Story) string {
		// A delete with grace period 0 is a deleting and a delete at once: the delete tells it.
		if s.followedAtOnce(e, APIServer, KindDelete) {
			return ""
		}
		return fmt.Sprintf("the API server marks %s for deletion, gracefully: it sets the deletionTimestamp and keeps the object", e.Pod)
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

// The kubelet's start-up.
var (
	sayNew = says("NewMainKubelet builds the kubelet process: the pod manager, the status manager, the work queue and the pod workers, the runtime manager, the PLEG and its cache, the probe manager and the admit handlers")

	saySources = func(e Event, _ *Story) string {
		if e.Message == "" {
			return "makePodSourceConfig builds PodConfig with no source"
		}
		names := strings.Fields(e.Message)
		noun := "source"
		if len(names) > 1 {
			noun = "sources"
		}
		return fmt.Sprintf("makePodSourceConfig builds PodConfig and registers the %s %s with it", words(names), noun)
	}

	sayRuntimeModules = func(e Event, _ *Story) string {
		if e.Message == "" {
			return "initializeRuntimeDependentModules starts the container manager (this node runs no plugin pipeline)"
		}
		return fmt.Sprintf("initializeRuntimeDependentModules starts the container manager with its device manager, adds the plugin manager's %s handlers and starts the plugin manager, whose watcher looks into the plugin registry", words(strings.Fields(e.Message)))
	}

	sayPLEGHealth = func(e Event, _ *Story) string {
		if e.To == "healthy" {
			return "the PLEG has relisted: it is healthy"
		}
		return "the PLEG is " + e.To + paren(e.Message)
	}
)

// words joins names as a sentence does: "a", "a and b", "a, b and c".
func words(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

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

// podAction is one action of SyncPod as the trace writes it.
var podAction = regexp.MustCompile(`killContainers=\[[^\]]*\]|kill|sandbox\(attempt=\d+\)|init=\S+|resize=\[[^\]]*\]|start=\[[^\]]*\]|\S+`)

// podActions says in words what the runtime manager's SyncPod decided, from the actions as the
// trace writes them ("kill sandbox(attempt=0) init=setup"); false for words it does not know.
func podActions(msg string) (string, bool) {
	var kill bool
	attempt := -1
	var parts []string
	list := func(s string) string {
		names := strings.Fields(strings.NewReplacer("[", "", "]", "", ",", " ").Replace(s))
		switch len(names) {
		case 0:
			return ""
		case 1:
			return names[0]
		}
		return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	toks := podAction.FindAllString(msg, -1)
	if strings.Join(strings.Fields(strings.Join(toks, " ")), " ") != strings.Join(strings.Fields(msg), " ") {
		return "", false
	}
	for _, tok := range toks {
		switch {
		case tok == "kill":
			kill = true
		case strings.HasPrefix(tok, "sandbox(attempt=") && strings.HasSuffix(tok, ")"):
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(tok, "sandbox(attempt="), ")"))
			if err != nil {
				return "", false
			}
			attempt = n
		case strings.HasPrefix(tok, "killContainers="):
			parts = append(parts, "stop "+list(strings.TrimPrefix(tok, "killContainers=")))
		case strings.HasPrefix(tok, "init="):
			parts = append(parts, "start the init container "+list(strings.TrimPrefix(tok, "init=")))
		case strings.HasPrefix(tok, "resize=["):
			parts = append(parts, "resize "+list(strings.TrimPrefix(tok, "resize="))+" in place")
		case strings.HasPrefix(tok, "start=["):
			parts = append(parts, "start "+list(strings.TrimPrefix(tok, "start=")))
		default:
			return "", false
		}
	}
	var head string
	switch {
	case attempt == 0:
		// A new sandbox always comes with a kill of the pod; for a pod that never ran it finds
		// nothing to stop.
		head = "create the pod's first sandbox"
	case attempt > 0:
		head = fmt.Sprintf("stop the pod and create a new sandbox, attempt %d", attempt)
	case kill:
		head = "stop every container and the sandbox"
	}
	if head != "" {
		parts = append([]string{head}, parts...)
	}
	if len(parts) == 0 {
		return "", false
	}
	return strings.Join(parts, ", then "), true
}

// paren is " (s)", or "" for an empty s.
func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
