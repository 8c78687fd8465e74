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
	e.reachStep(st, n)
	for ev := range e.rec.Since(mark) {
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

// reachStep tells the schedule which nodes step st, played on n, reached: they are settled at
// this instant whether or not they are due. A check and a write to the API server reach n, the
// node they name (what the write does to other nodes' pods reaches those through the shared
// watch); any other change (a file, the runtime, the link, a plugin, the kubelet process, the
// probes' script every node shares) reaches every node, as a scenario step is rare beside the
// instants the kubelets wake at.
func (e *engine) reachStep(st *Step, n *node) {
	switch st.act.(type) {
	case expectation, *APICreatePod, *APIUpdatePod, *stowedPod, *APIUpdatePodStatus, *APIDeletePod, *APIDeleteMirrorPod,
		*APICreateNamespace, *APIDeleteNamespace, *APICreateObject, *APIDeleteNode, *APIPatchNode, *APIPatchPod,
		*APIResizePod:
		e.sched.reach(n.index)
	default:
		for i := range e.nodes {
			e.sched.reach(i)
		}
	}
	e.routed()
}
