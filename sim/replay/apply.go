package replay

import (
	"context"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// apply carries out step i on the node it acts on: a change is applied, an expectation judged.
// Expectations are judged on the state after everything due before them at this instant has
// settled.
func (e *engine) apply(ctx context.Context, i int) {
	st := &e.s.Steps[i]
	e.step = i
	mark := e.rec.Len()
	n := e.nodeFor(ctx, st)
	switch a := st.act.(type) {
	case expectation:
		o := a.judge(ctx, e, n)
		o.Step, o.At = i+1, st.At.Duration
		e.judged(o)
	case change:
		a.apply(ctx, e, n)
	}
	for _, ev := range e.rec.EventsSince(mark) {
		if ev.Component == trace.Scenario {
			e.result.StepSeqs[i] = ev.Seq
			break
		}
	}
	// An expectEvent looks at the events since the step before it began, that step's own events
	// included. expectEvents in a row at one instant share the window of the first of them:
	// nothing happens between them, and they check what the same earlier steps caused.
	if i+1 == len(e.s.Steps) || !sameCheck(st, &e.s.Steps[i+1]) {
		e.window = mark
	}
}

// sameCheck reports whether b, the step after a, is an event check judged on a's window: both
// are expectEvents or expectNoEvents at the same instant.
func sameCheck(a, b *Step) bool {
	return a.checksEvents() && b.checksEvents() && a.At == b.At
}
