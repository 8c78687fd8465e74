package runtimestate

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// The kubelet's runtime state timing.
const (
	// UpPeriod is how often updateRuntimeUp asks the runtime for its status.
	UpPeriod = 5 * time.Second
	// MaxWaitForContainerRuntime is how long the runtime may go unanswered before the kubelet
	// reports it down.
	MaxWaitForContainerRuntime = 30 * time.Second
)

// Runtime answers the CRI Status call.
type Runtime interface {
	// Status returns nil while the runtime answers.
	Status() error
}

// HealthChecker is the PLEG's health check, one of the runtime state's checks.
type HealthChecker interface {
	// Healthy reports whether the PLEG relisted recently enough, with an error saying why not.
	Healthy() (bool, error)
}

// Options configure a State.
type Options struct {
	// Clock is the time of every check. Required.
	Clock clock.PassiveClock
	// Tracer receives the failed status checks. Required; trace.Discard drops them.
	Tracer trace.Tracer
	// Runtime is asked for its status. Required.
	Runtime Runtime
	// PLEG is the health check that joins the runtime's. Required.
	PLEG HealthChecker
}

func (o Options) validate() error {
	var missing []string
	if o.Clock == nil {
		missing = append(missing, "Clock")
	}
	if o.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	if o.Runtime == nil {
		missing = append(missing, "Runtime")
	}
	if o.PLEG == nil {
		missing = append(missing, "PLEG")
	}
	if len(missing) > 0 {
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	return nil
}

// State is the part of the kubelet's runtimeState the sync loop and the node status consult.
type State struct {
	opts Options
	// lastSync is when the runtime last answered, zero until the first successful check.
	lastSync time.Time
	// nextCheck is when the next check is due, zero before the first check.
	nextCheck time.Time
}

// New returns a State whose first check is due at once.
func New(opts Options) (*State, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new runtime state: %w", err)
	}
	return &State{opts: opts}, nil
}

// Advance is the kubelet's updateRuntimeUp: when a check is due it asks the runtime for its status
// and records when it answered. A failed check is traced, not returned: the kubelet logs it and
// tries again in UpPeriod.
func (s *State) Advance() {
	now := s.opts.Clock.Now()
	if !s.nextCheck.IsZero() && now.Before(s.nextCheck) {
		return
	}
	s.nextCheck = now.Add(UpPeriod)
	s.check(now)
}

// Check is an updateRuntimeUp call outside the 5s loop: fastStatusUpdateOnce makes one before
// each poll that finds the node not Ready. It asks the runtime now and leaves the loop's schedule
// as it is.
func (s *State) Check() {
	s.check(s.opts.Clock.Now())
}

// check asks the runtime for its status and records when it answered; a failure is traced.
func (s *State) check(now time.Time) {
	if err := s.opts.Runtime.Status(); err != nil {
		s.opts.Tracer.Emit(trace.Event{Component: trace.SyncLoop, Event: trace.KindError, Reason: "RuntimeStatus", Message: err.Error(), Func: "updateRuntimeUp"})
		return
	}
	s.lastSync = now
}

// NextWake returns when the next status check is due; false before the first Advance, which is
// due at once.
func (s *State) NextWake() (time.Time, bool) {
	return s.nextCheck, !s.nextCheck.IsZero()
}

// Errors is the kubelet's runtimeState.runtimeErrors: nil when the runtime answered within
// MaxWaitForContainerRuntime and the PLEG is healthy, else every reason joined.
func (s *State) Errors() error {
	var errs []error
	now := s.opts.Clock.Now()
	switch {
	case s.lastSync.IsZero():
		errs = append(errs, errors.New("container runtime status check may not have completed yet"))
	case !s.lastSync.Add(MaxWaitForContainerRuntime).After(now):
		errs = append(errs, errors.New("container runtime is down"))
	}
	if ok, err := s.opts.PLEG.Healthy(); !ok {
		if err == nil {
			err = errors.New("pleg is not healthy")
		}
		errs = append(errs, fmt.Errorf("PLEG is not healthy: %w", err))
	}
	return errors.Join(errs...)
}
