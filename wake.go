package minikubelet

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// Wake is a runner's timer for its core's next wake-up, the one wait every run.go repeats: arm
// it for the time the core's NextWake names and select on it beside the runner's other inputs.
// It keeps one timer, re-armed before every wait, so an idle runner allocates no timer per wait.
// A Wake belongs to one runner's goroutine.
type Wake struct {
	clk clock.WithTicker
	t   clock.Timer // nil until the first At
}

// NewWake returns a Wake on clk.
func NewWake(clk clock.WithTicker) *Wake { return &Wake{clk: clk} }

// At arms the timer for at (at once when at is not after the clock's now, a zero at included)
// and returns its channel. A value the last arming left in the channel is dropped first.
func (w *Wake) At(at time.Time) <-chan time.Time {
	d := max(at.Sub(w.clk.Now()), 0)
	if w.t == nil {
		w.t = w.clk.NewTimer(d)
		return w.t.C()
	}
	if !w.t.Stop() {
		select {
		case <-w.t.C():
		default:
		}
	}
	w.t.Reset(d)
	return w.t.C()
}

// Sleep waits until at, a receive on signal (nil for none) or the end of ctx, and reports false
// when ctx ended.
func (w *Wake) Sleep(ctx context.Context, at time.Time, signal <-chan struct{}) bool {
	select {
	case <-ctx.Done():
		return false
	case <-signal:
	case <-w.At(at):
	}
	return ctx.Err() == nil
}

// Stop stops the timer; Run defers it.
func (w *Wake) Stop() {
	if w.t != nil {
		w.t.Stop()
	}
}

// Signal is a core's wake-up of its runner, the kubelet's podStatusChannel: its buffer holds one,
// so a signal sent while the runner is busy is kept, and the signals sent meanwhile are that one.
// A runner waits on it beside its Wake.
type Signal chan struct{}

// NewSignal returns a Signal with nothing pending.
func NewSignal() Signal { return make(Signal, 1) }

// Notify signals without blocking.
func (s Signal) Notify() {
	select {
	case s <- struct{}{}:
	default:
	}
}
