package replay

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// ExpectEvent asserts that a matching trace event happened since the previous step began (its
// own events included) and by this one. expectEvents in a row at one instant all look back to
// the step before the first of them. Empty optional fields match anything.
type ExpectEvent struct {
	Component string `json:"component"`
	Event     string `json:"event"`
	Op        string `json:"op,omitempty"`
	Source    string `json:"source,omitempty"`
	Pod       string `json:"pod,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Container string `json:"container,omitempty"`
	// Message must equal the event's message: for a Kubernetes event (component events), the
	// Event's own message.
	Message string `json:"message,omitempty"`
}

// ExpectNoEvent has the fields of ExpectEvent and asserts that no trace event matched in the
// window an expectEvent in its place would look at.
type ExpectNoEvent ExpectEvent

// The kinds of this file and what they declare.
var (
	_ expectation = (*ExpectEvent)(nil)
	_ expectation = (*ExpectNoEvent)(nil)
	_ eventCheck  = (*ExpectEvent)(nil)
	_ eventCheck  = (*ExpectNoEvent)(nil)
	_ podNamer    = (*ExpectEvent)(nil)
	_ podNamer    = (*ExpectNoEvent)(nil)
)

func (*ExpectEvent) checksEvents()   {}
func (*ExpectNoEvent) checksEvents() {}

func (x *ExpectEvent) pod() string   { return x.Pod }
func (x *ExpectNoEvent) pod() string { return x.Pod }

func (x *ExpectEvent) validate() error {
	return errors.Join(required("component", x.Component), required("event", x.Event))
}

func (x *ExpectNoEvent) validate() error { return (*ExpectEvent)(x).validate() }

// judge looks for a matching trace event in the window.
func (x *ExpectEvent) judge(_ context.Context, e *engine, _ *node) Outcome {
	o := Outcome{What: x.describe()}
	near := 0
	var other []string // messages of events that match but for the message
	for ev := range e.rec.Since(e.window) {
		if string(ev.Component) != x.Component || string(ev.Event) != x.Event {
			continue
		}
		near++
		if x.matches(*ev) {
			o.Met = true
			return o
		}
		if x.Message != "" {
			anyMessage := *x
			anyMessage.Message = ""
			if anyMessage.matches(*ev) && len(other) < 3 {
				other = append(other, strconv.Quote(ev.Message))
			}
		}
	}
	o.Seen = fmt.Sprintf("%d %s/%s events since the previous step, none matching", near, x.Component, x.Event)
	if len(other) > 0 {
		o.Seen += "; with other messages: " + strings.Join(other, ", ")
	}
	return o
}

// judge fails on the first matching trace event in the window.
func (x *ExpectNoEvent) judge(_ context.Context, e *engine, _ *node) Outcome {
	m := (*ExpectEvent)(x)
	o := Outcome{What: x.describe(), Met: true}
	for ev := range e.rec.Since(e.window) {
		if string(ev.Component) == x.Component && string(ev.Event) == x.Event && m.matches(*ev) {
			o.Met = false
			o.Seen = fmt.Sprintf("at %v: %s/%s pod=%s container=%s reason=%s message=%q", ev.T, ev.Component, ev.Event, ev.Pod, ev.Container, ev.Reason, ev.Message)
			return o
		}
	}
	return o
}

func (x *ExpectEvent) describe() string   { return "expectEvent " + x.matchers() }
func (x *ExpectNoEvent) describe() string { return "expectNoEvent " + (*ExpectEvent)(x).matchers() }

// matchers lists the fields the check matches on.
func (x *ExpectEvent) matchers() string {
	parts := []string{"component=" + x.Component, "event=" + x.Event}
	for _, f := range []struct{ k, v string }{{"op", x.Op}, {"source", x.Source}, {"pod", x.Pod}, {"container", x.Container}, {"reason", x.Reason}} {
		if f.v != "" {
			parts = append(parts, f.k+"="+f.v)
		}
	}
	if x.Message != "" {
		parts = append(parts, "message="+strconv.Quote(x.Message))
	}
	return strings.Join(parts, " ")
}

// matches reports whether ev's optional fields match x's; component and event are checked by the
// caller.
func (x *ExpectEvent) matches(ev trace.Event) bool {
	return (x.Op == "" || ev.Op == x.Op) && (x.Source == "" || ev.Source == x.Source) &&
		(x.Pod == "" || eventNamesPod(ev.Pod, ev.Pods, x.Pod)) &&
		(x.Container == "" || ev.Container == x.Container) && (x.Reason == "" || ev.Reason == x.Reason) &&
		(x.Message == "" || ev.Message == x.Message)
}

// eventNamesPod matches an event's pod, or one of the pods an update carries.
func eventNamesPod(pod string, pods []string, want string) bool {
	if pod == want {
		return true
	}
	for _, p := range pods {
		if p == want {
			return true
		}
	}
	return false
}
