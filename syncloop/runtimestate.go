package syncloop

import (
	"errors"
	"fmt"
	"time"

	"github.com/minikubelet/minikubelet/trace"
)

// The kubelet's runtime state timing.
const (
	// RuntimeUpPeriod is how often updateRuntimeUp asks the runtime for its status.
	RuntimeUpPeriod = 5 * time.Second
	// MaxWaitForContainerRuntime is how long the runtime may go unanswered before the kubelet
	// reports it down.
	MaxWaitForContainerRuntime = 30 * time.Second
)

// runtimeState is the part of the kubelet's runtimeState the sync loop consults: when the runtime
// last answered its status check, and when the next check is due.
type runtimeState struct {
	lastSync  time.Time // zero until the first successful check
	nextCheck time.Time // zero before the first check
}

// updateRuntimeUp is the kubelet's updateRuntimeUp: every RuntimeUpPeriod it asks the runtime
// for its status and records when it last answered.
func (l *Loop) updateRuntimeUp(now time.Time) {
	if !l.rt.nextCheck.IsZero() && now.Before(l.rt.nextCheck) {
		return
	}
	l.rt.nextCheck = now.Add(RuntimeUpPeriod)
	if err := l.opts.Runtime.Status(); err != nil {
		l.emit(trace.Event{Event: "error", Reason: "RuntimeStatus", Message: err.Error(), Func: "updateRuntimeUp"})
		return
	}
	l.rt.lastSync = now
}

// runtimeErrors is the kubelet's runtimeState.runtimeErrors: the reasons the sync loop skips its
// iterations and the node reports NotReady. The runtime is down when its status check has not
// succeeded for MaxWaitForContainerRuntime, and the PLEG's health check is one of the runtime's.
func (l *Loop) runtimeErrors() error {
	var errs []error
	now := l.opts.Clock.Now()
	switch {
	case l.rt.lastSync.IsZero():
		errs = append(errs, errors.New("container runtime status check may not have completed yet"))
	case !l.rt.lastSync.Add(MaxWaitForContainerRuntime).After(now):
		errs = append(errs, errors.New("container runtime is down"))
	}
	if ok, err := l.plegHealthy(); !ok {
		if err == nil {
			err = errors.New("pleg is not healthy")
		}
		errs = append(errs, fmt.Errorf("PLEG is not healthy: %w", err))
	}
	return errors.Join(errs...)
}
