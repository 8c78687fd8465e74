package prober

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Outcome is what one probe attempt returns: the outcomes of the kubelet's pkg/probe, reduced to
// what decides the kubelet's reaction.
type Outcome int

// The outcomes.
const (
	// OutcomeSuccess counts toward successThreshold.
	OutcomeSuccess Outcome = iota
	// OutcomeFailure counts toward failureThreshold and records an Unhealthy event
	// ("<Type> probe failed: <output>"): a non-2xx/3xx HTTP status, a refused TCP connection, a
	// non-zero exec exit, a timeout.
	OutcomeFailure
	// OutcomeUnknown is pkg/probe's Unknown without an error: the kubelet counts it as a failure
	// and records no event.
	OutcomeUnknown
	// OutcomeError is a probe that could not be run (retried three times): the kubelet records an
	// Unhealthy event ("<Type> probe errored and resulted in unknown state: <err>") and discards
	// the attempt, which neither advances nor resets the thresholds.
	OutcomeError
)

var outcomeNames = []string{"success", "failure", "unknown", "error"}

// String returns the outcome's name as scenario steps and annotations write it.
func (o Outcome) String() string {
	if o >= 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// ParseOutcome parses an outcome's name.
func ParseOutcome(s string) (Outcome, bool) {
	for i, n := range outcomeNames {
		if n == s {
			return Outcome(i), true
		}
	}
	return 0, false
}

// Rule scripts the outcome of a probe for a while. With neither Times nor For it holds until it is
// replaced.
type Rule struct {
	Outcome Outcome
	// Times is how many probe attempts return Outcome; zero is no limit.
	Times int
	// For is how long Outcome holds; zero is no limit.
	For time.Duration
}

// String is the rule in annotation form: "failure", "failure-times=3", "failure-for=20s".
func (r Rule) String() string {
	switch {
	case r.Times > 0:
		return r.Outcome.String() + "-times=" + strconv.Itoa(r.Times)
	case r.For > 0:
		return r.Outcome.String() + "-for=" + r.For.String()
	}
	return r.Outcome.String()
}

// scriptKey names one probe of one container of one pod ("namespace/name").
type scriptKey struct {
	pod, container string
	probe          ProbeType
}

// activeRule is a Rule set at an instant, with the attempts it has answered.
type activeRule struct {
	Rule
	since time.Time
	used  int
}

// holds reports whether the rule still answers at now.
func (a *activeRule) holds(now time.Time) bool {
	if a.Times > 0 && a.used >= a.Times {
		return false
	}
	return a.For <= 0 || now.Before(a.since.Add(a.For))
}

// Script holds the probe outcomes scripted from outside the kubelet: what the containers' health
// endpoints answer. It belongs to the simulated world, not to the kubelet, so it outlives a
// kubelet restart. A Script is used from one goroutine.
type Script struct {
	rules map[scriptKey]*activeRule
}

// NewScript returns an empty script: every probe succeeds unless a pod annotation says otherwise.
func NewScript() *Script { return &Script{rules: map[scriptKey]*activeRule{}} }

// Set makes the probe of the type of the named container of the pod "namespace/name" answer as the
// rule says, from the instant now on, replacing any rule set before. A pod's annotations are not
// read while the rule holds.
func (s *Script) Set(podKey, container string, t ProbeType, r Rule, now time.Time) {
	s.rules[scriptKey{podKey, container, t}] = &activeRule{Rule: r, since: now}
}

// answer returns the scripted outcome of one attempt at now, and consumes it; false when no rule
// holds.
func (s *Script) answer(podKey, container string, t ProbeType, now time.Time) (Outcome, bool) {
	if s == nil {
		return OutcomeSuccess, false
	}
	k := scriptKey{podKey, container, t}
	a, ok := s.rules[k]
	if !ok {
		return OutcomeSuccess, false
	}
	if !a.holds(now) {
		delete(s.rules, k)
		return OutcomeSuccess, false
	}
	a.used++
	return a.Outcome, true
}

// AnnotationPrefix starts the pod annotations that script a probe in run mode:
//
//	minikubelet.io/<type>-probe.<container>: "<outcome>[-times=<n>|-for=<duration>]"
//
// <type> is liveness, readiness or startup; <outcome> is success, failure, unknown or error.
// "-times=<n>" makes the first n attempts on each container instance answer <outcome>, "-for=<d>"
// the attempts during the first <d> of each instance's run (counted from its start, so a restarted
// container fails again); without either, every attempt does. After that the probe succeeds. A
// real kubelet ignores these annotations.
const AnnotationPrefix = "minikubelet.io/"

// ErrBadAnnotation is wrapped by the errors of ParseAnnotations.
var ErrBadAnnotation = errors.New("bad minikubelet.io probe annotation")

// ParseRule parses a rule in annotation form: "failure", "failure-times=3", "unknown-for=20s".
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	name, arg, hasArg := strings.Cut(s, "=")
	var r Rule
	var limit string
	switch {
	case hasArg && strings.HasSuffix(name, "-times"):
		name, limit = strings.TrimSuffix(name, "-times"), "times"
	case hasArg && strings.HasSuffix(name, "-for"):
		name, limit = strings.TrimSuffix(name, "-for"), "for"
	case hasArg:
		return Rule{}, fmt.Errorf("%q: want <outcome>, <outcome>-times=<n> or <outcome>-for=<duration>", s)
	}
	o, ok := ParseOutcome(name)
	if !ok {
		return Rule{}, fmt.Errorf("%q: outcome %q is not one of %s", s, name, strings.Join(outcomeNames, ", "))
	}
	r.Outcome = o
	switch limit {
	case "times":
		n, err := strconv.Atoi(arg)
		if err != nil || n <= 0 {
			return Rule{}, fmt.Errorf("%q: times wants a positive integer", s)
		}
		r.Times = n
	case "for":
		d, err := time.ParseDuration(arg)
		if err != nil || d <= 0 {
			return Rule{}, fmt.Errorf("%q: for wants a positive duration such as 20s", s)
		}
		r.For = d
	}
	return r, nil
}

// ParseAnnotations reads every probe annotation of a pod. It is strict: an annotation with the
// probe key shape whose type, container or value is wrong is an error wrapping ErrBadAnnotation,
// naming the pod and the key. containers are the names the pod's probes may address.
func ParseAnnotations(podKey string, annotations map[string]string, containers []string) (map[string]map[ProbeType]Rule, error) {
	known := map[string]bool{}
	for _, c := range containers {
		known[c] = true
	}
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := map[string]map[ProbeType]Rule{}
	var errs []error
	for _, k := range keys {
		rest, ok := strings.CutPrefix(k, AnnotationPrefix)
		if !ok {
			continue
		}
		head, container, ok := strings.Cut(rest, ".")
		kind, isProbe := strings.CutSuffix(head, "-probe")
		if !isProbe {
			continue // another minikubelet.io annotation, such as the runtime's exit-after
		}
		t, okType := ParseProbeType(kind)
		switch {
		case !okType:
			errs = append(errs, fmt.Errorf("pod %s: annotation %s: probe type %q is not liveness, readiness or startup: %w", podKey, k, kind, ErrBadAnnotation))
			continue
		case !ok || container == "":
			errs = append(errs, fmt.Errorf("pod %s: annotation %s: want %s<container>: %w", podKey, k, AnnotationPrefix+t.Name()+"-probe.", ErrBadAnnotation))
			continue
		case !known[container]:
			errs = append(errs, fmt.Errorf("pod %s: annotation %s: the pod has no container %q with probes: %w", podKey, k, container, ErrBadAnnotation))
			continue
		}
		r, err := ParseRule(annotations[k])
		if err != nil {
			errs = append(errs, fmt.Errorf("pod %s: annotation %s: %w: %w", podKey, k, err, ErrBadAnnotation))
			continue
		}
		if out[container] == nil {
			out[container] = map[ProbeType]Rule{}
		}
		out[container][t] = r
	}
	return out, errors.Join(errs...)
}

// instanceAnswer is what an annotation rule answers for the attempt-th attempt (1-based) on a
// container instance that started at started, at now; false when the rule no longer holds and the
// probe succeeds.
func instanceAnswer(r Rule, attempt int, started, now time.Time) (Outcome, bool) {
	if r.Times > 0 && attempt > r.Times {
		return OutcomeSuccess, false
	}
	if r.For > 0 && !now.Before(started.Add(r.For)) {
		return OutcomeSuccess, false
	}
	return r.Outcome, true
}
