package replay

import (
	"context"
	"errors"
	"fmt"

	"github.com/minikubelet/minikubelet/prober"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// ProbeStep scripts what a container's probe answers from now on: Result for the next Times
// attempts, or for the next For, or (with neither) until another probe step replaces it. Then
// the probe succeeds again.
type ProbeStep struct {
	Pod       string `json:"pod"`
	Container string `json:"container"`
	// Type is liveness, readiness or startup.
	Type string `json:"type"`
	// Result is success, failure, unknown or error.
	Result string   `json:"result"`
	Times  int      `json:"times,omitempty"`
	For    Duration `json:"for,omitempty"`
}

var (
	_ change   = (*ProbeStep)(nil)
	_ podNamer = (*ProbeStep)(nil)
	_ bounded  = (*ProbeStep)(nil)
)

func (p *ProbeStep) pod() string { return p.Pod }

func (p *ProbeStep) durations() []namedDuration {
	return []namedDuration{{"for", p.For.Duration}}
}

func (p *ProbeStep) validate() error {
	errs := []error{podKey(p.Pod), required("container", p.Container)}
	if _, ok := prober.ParseProbeType(p.Type); !ok {
		errs = append(errs, fmt.Errorf("probe.type %q: want liveness, readiness or startup", p.Type))
	}
	if _, ok := prober.ParseOutcome(p.Result); !ok {
		errs = append(errs, fmt.Errorf("probe.result %q: want success, failure, unknown or error", p.Result))
	}
	switch {
	case p.Times < 0:
		errs = append(errs, errors.New("probe.times must not be negative"))
	case p.For.Duration < 0:
		errs = append(errs, errors.New("probe.for must not be negative"))
	case p.Times > 0 && p.For.Duration > 0:
		errs = append(errs, errors.New("probe: give times or for, not both"))
	}
	return errors.Join(errs...)
}

// apply scripts what the container's probe answers from now on. The script belongs to the
// world, shared by every node, so it outlives a kubelet restart.
func (p *ProbeStep) apply(_ context.Context, e *engine, _ *node) {
	t, _ := prober.ParseProbeType(p.Type)
	o, _ := prober.ParseOutcome(p.Result)
	r := prober.Rule{Outcome: o, Times: p.Times, For: p.For.Duration}
	e.stepEvent(trace.KindProbe, p.Pod, fmt.Sprintf("container %s %s probe answers %s", p.Container, p.Type, r))
	e.probes.Set(p.Pod, p.Container, t, r, e.clk.Now())
}
