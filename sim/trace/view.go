package trace

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Level is a tier of the trace, from the fewest events to all of them (--trace-level). Each
// (component, event) pair has one level, its Catalogue rows' (LevelOf); a view at level L shows the events of level
// L and below. The zero Level is no choice, which shows every event, as LevelPipeline does; on
// the command line the levels are numbered from 0.
type Level int

// The levels.
const (
	_ Level = iota
	// LevelProblems is what went wrong or was held back: errors, refusals, back-offs, Warning
	// events, skips, the node's readiness, and the scenario's steps.
	LevelProblems
	// LevelLifecycle adds what happens to pods and plugins: worker states, containers, the
	// PLEG's events, status changes and writes, mirror pods, config updates.
	LevelLifecycle
	// LevelPipeline adds every step in between: source SETs, the sync loop's dispatch, the
	// pod workers' sync calls and requeues, the API server's writes. The default.
	LevelPipeline
)

var levelNames = []string{"problems", "lifecycle", "pipeline"}

// String returns the level's flag value.
func (l Level) String() string {
	if l >= LevelProblems && l <= LevelPipeline {
		return levelNames[l-LevelProblems]
	}
	return "Level(" + strconv.Itoa(int(l)) + ")"
}

// ParseLevel parses a --trace-level value: a level's name or its number, from 0 (problems) to
// 2 (pipeline).
func ParseLevel(s string) (Level, error) {
	if i := slices.Index(levelNames, s); i >= 0 {
		return LevelProblems + Level(i), nil
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 0 && n < len(levelNames) {
		return LevelProblems + Level(n), nil
	}
	return 0, fmt.Errorf("unknown trace level %q: want %s, or 0 to %d", s, strings.Join(levelNames, ", "), len(levelNames)-1)
}

// LevelOf returns the level of an event: its Catalogue row's (Entry.Level), and lifecycle for an
// event the catalogue does not know.
func LevelOf(e Event) Level {
	if idx := rows[rowKey{e.Component, e.Event}]; len(idx) > 0 {
		return Catalogue[idx[0]].Level
	}
	return LevelLifecycle
}

// noiseOf returns the Noise of an event's Catalogue row.
func noiseOf(e Event) Noise {
	if idx := rows[rowKey{e.Component, e.Event}]; len(idx) > 0 {
		return Catalogue[idx[0]].Noise
	}
	return NotNoise
}

// ViewOptions choose which events a View shows.
type ViewOptions struct {
	// Pods, when not empty, keeps only the events about one of these pods: an event whose pod
	// or pod list names one of them, as namespace/name or as a name in the default namespace.
	// A pod's events without its name (a dead container's removal failing) are lost.
	Pods []string
	// Components, when not empty, keeps only the events of these components.
	Components []Component
	// Quiet hides what repeats without news: the pod workers' requeues, a source's SET that
	// carries the same pods as its last one (the file source's periodic relist, the API
	// source's echo of every write), and the rest of the echo of the kubelet's own status
	// writes (the API server's status event, the RECONCILE update it becomes, the pod
	// manager's update of the mirror pod).
	Quiet bool
	// Level shows the events of this level and below; zero shows every level.
	Level Level
}

// View decides which events are shown. It is a filter on the output only: a Recorder keeps
// every event whatever its view shows. A View has state (Quiet compares a SET with the last
// one), so each output needs its own; it is not safe for concurrent use, and a Recorder calls
// it under its lock.
type View struct {
	opts       ViewOptions
	pods       map[string]bool
	components map[Component]bool
	lastSet    map[string][]string // by source: the pods of its last SET
	echo       map[string]bool     // pods whose RECONCILE the pod manager will echo
}

// NewView returns the View of opts. The zero ViewOptions show every event.
func NewView(opts ViewOptions) *View {
	if opts.Level == 0 {
		opts.Level = LevelPipeline
	}
	v := &View{opts: opts, lastSet: map[string][]string{}, echo: map[string]bool{}}
	if len(opts.Pods) > 0 {
		v.pods = map[string]bool{}
		for _, p := range opts.Pods {
			if !strings.Contains(p, "/") {
				p = "default/" + p
			}
			v.pods[p] = true
		}
	}
	if len(opts.Components) > 0 {
		v.components = map[Component]bool{}
		for _, c := range opts.Components {
			v.components[c] = true
		}
	}
	return v
}

// Show reports whether e is shown. Every event must go through Show, in order, shown or not:
// Quiet remembers what it saw.
func (v *View) Show(e Event) bool {
	quiet := v.opts.Quiet && v.isNoise(e)
	if quiet || LevelOf(e) > v.opts.Level {
		return false
	}
	if v.components != nil && !v.components[e.Component] {
		return false
	}
	if v.pods != nil {
		if v.pods[e.Pod] {
			return true
		}
		return slices.ContainsFunc(e.Pods, func(p string) bool { return v.pods[p] })
	}
	return true
}

// isNoise tells the events Quiet hides (Entry.Noise), and keeps the state it needs.
func (v *View) isNoise(e Event) bool {
	switch noiseOf(e) {
	case NoiseAlways:
		return true
	case NoiseRepeat:
		last, seen := v.lastSet[e.Source]
		v.lastSet[e.Source] = slices.Clone(e.Pods)
		return seen && slices.Equal(last, e.Pods)
	case NoiseEcho:
		return e.Op == "RECONCILE"
	case NoiseEchoStart:
		if e.Op == "RECONCILE" {
			for _, p := range e.Pods {
				v.echo[p] = true
			}
			return true
		}
		// Any other update of these pods ends the echo: the pod manager's update that follows
		// is news.
		for _, p := range e.Pods {
			delete(v.echo, p)
		}
	case NoiseEchoed:
		if v.echo[e.Pod] {
			delete(v.echo, e.Pod)
			return true
		}
	}
	return false
}
