package replay

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// Outcome is the verdict on one expect or expectEvent step.
type Outcome struct {
	// Step is the step's number in the file, from 1.
	Step int
	At   time.Duration
	// What describes the expectation, such as `expect default/web-node-1 phase=Running`.
	What string
	Met  bool
	// Seen says what was found instead when the expectation failed.
	Seen string
}

// Result is what a replay produced besides its trace.
type Result struct {
	Name     string
	Outcomes []Outcome
	// End is the virtual time the replay stopped at.
	End time.Duration
	// NotReached lists the expectations after the time a replay stopped at (RunOptions.Until),
	// which were not judged. They do not fail the replay, but the summary says so.
	NotReached []Outcome
	// StepErrors lists the steps that could not be carried out. Each fails the replay.
	StepErrors []StepError
	// StepSeqs holds, per step in file order, the seq of the trace event the step emitted (its
	// action, or the error when it could not be carried out), 0 for steps that only observe.
	StepSeqs []uint64
	// PodDiffs holds, with RunOptions.PodDiffs, by the seq of the sync loop's config event for an
	// UPDATE or RECONCILE, a line diff of each pod it carries against the pod's previous version.
	PodDiffs map[uint64]string
	// StatusSkips counts, with RunOptions.CheckStatusSkip, the syncs that skipped building an
	// unchanged status (each checked).
	StatusSkips int
	// Events is the whole trace with RunOptions.KeepEvents, for a comparison with a golden file
	// in either format (RenderTrace); without it only the last events.
	Events []trace.Event
}

// Passed reports whether every expectation judged was met and every step was carried out.
func (r *Result) Passed() bool {
	if len(r.StepErrors) > 0 {
		return false
	}
	for _, o := range r.Outcomes {
		if !o.Met {
			return false
		}
	}
	return true
}

// WriteSummary prints one line per expectation and a closing count.
func (r *Result) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "scenario %s: replayed to %v\n", r.Name, r.End)
	met := 0
	for _, o := range r.Outcomes {
		if o.Met {
			met++
			fmt.Fprintf(w, "  ok    step %d at %v: %s\n", o.Step, o.At, o.What)
			continue
		}
		fmt.Fprintf(w, "  FAIL  step %d at %v: %s; saw %s\n", o.Step, o.At, o.What, o.Seen)
	}
	for _, o := range r.NotReached {
		fmt.Fprintf(w, "  NOT REACHED  step %d at %v: %s\n", o.Step, o.At, o.What)
	}
	for _, s := range r.StepErrors {
		fmt.Fprintf(w, "  FAIL  %v\n", s)
	}
	tail := ""
	if len(r.NotReached) > 0 {
		tail = fmt.Sprintf(", %d not reached (stopped at %v)", len(r.NotReached), r.End)
	}
	fmt.Fprintf(w, "expectations: %d met, %d failed%s\n", met, len(r.Outcomes)-met, tail)
	if len(r.StepErrors) > 0 {
		fmt.Fprintf(w, "steps not carried out: %d\n", len(r.StepErrors))
	}
}

// FirstDifference compares two traces line by line and describes the first line where they
// differ, or returns "" when they are identical.
func FirstDifference(want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	// A final newline ends the last line; it does not start another.
	wl := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
	gl := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w == g {
			continue
		}
		switch {
		case i >= len(wl):
			return fmt.Sprintf("line %d: unexpected extra line %q", i+1, g)
		case i >= len(gl):
			return fmt.Sprintf("line %d: missing line %q", i+1, w)
		}
		return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, w, g)
	}
	return "traces differ in their line endings"
}
