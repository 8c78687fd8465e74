package pluginmanager

import (
	"errors"
	"fmt"
	"time"
)

// The back-off of pkg/util/goroutinemap/exponentialbackoff.
const (
	// InitialDurationBeforeRetry is the wait after an operation's first failure.
	InitialDurationBeforeRetry = 500 * time.Millisecond
	// MaxDurationBeforeRetry caps the doubling wait.
	MaxDurationBeforeRetry = 2*time.Minute + 2*time.Second
)

// ErrAlreadyExists is wrapped when an operation for the socket is still running.
var ErrAlreadyExists = errors.New("an operation with that name is already executing")

// BackoffError is returned when the socket's last operation failed and its back-off window is
// still open: goroutinemap's exponential back-off error.
type BackoffError struct {
	// Key is the socket path.
	Key string
	// Until is the first instant a new operation is permitted.
	Until time.Time
	// DurationBeforeRetry is the current window.
	DurationBeforeRetry time.Duration
	// Last is the last failure.
	Last error
}

func (e *BackoffError) Error() string {
	return fmt.Sprintf("operation for %q failed: no retries permitted until %s (durationBeforeRetry %s): %v",
		e.Key, e.Until.UTC().Format(time.RFC3339Nano), e.DurationBeforeRetry, e.Last)
}

// operation is goroutinemap's per-key record.
type operation struct {
	pending             bool
	lastErrorTime       time.Time
	durationBeforeRetry time.Duration
	lastErr             error
}

// Executor is the operation executor's goroutinemap: at most one operation per socket path,
// exponential back-off after failures. It only keeps the books; the caller runs the operation.
type Executor struct {
	ops map[string]*operation
}

// NewExecutor returns an empty Executor.
func NewExecutor() *Executor { return &Executor{ops: map[string]*operation{}} }

// Start marks an operation for key as running, or says why it may not start: ErrAlreadyExists
// (wrapped) while one runs, a *BackoffError while the back-off window of the last failure is open.
func (e *Executor) Start(key string, now time.Time) error {
	op, ok := e.ops[key]
	if ok {
		if op.pending {
			return fmt.Errorf("operation for %q: %w", key, ErrAlreadyExists)
		}
		if until := op.lastErrorTime.Add(op.durationBeforeRetry); now.Before(until) {
			return &BackoffError{Key: key, Until: until, DurationBeforeRetry: op.durationBeforeRetry, Last: op.lastErr}
		}
		op.pending = true
		return nil
	}
	e.ops[key] = &operation{pending: true}
	return nil
}

// Finish records the end of key's operation. Success forgets the key and its back-off; a failure
// grows the back-off (500ms, then doubling up to 2m2s) from now and returns the new window.
func (e *Executor) Finish(key string, now time.Time, err error) time.Duration {
	op, ok := e.ops[key]
	if !ok {
		return 0
	}
	if err == nil {
		delete(e.ops, key)
		return 0
	}
	op.pending = false
	op.lastErr = err
	op.lastErrorTime = now
	switch {
	case op.durationBeforeRetry == 0:
		op.durationBeforeRetry = InitialDurationBeforeRetry
	default:
		op.durationBeforeRetry = min(2*op.durationBeforeRetry, MaxDurationBeforeRetry)
	}
	return op.durationBeforeRetry
}

// IsOperationPending reports whether an operation for key is running.
func (e *Executor) IsOperationPending(key string) bool {
	op, ok := e.ops[key]
	return ok && op.pending
}

// Pending returns how many operations are running.
func (e *Executor) Pending() int {
	n := 0
	for _, op := range e.ops {
		if op.pending {
			n++
		}
	}
	return n
}
