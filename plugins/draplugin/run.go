package draplugin

import (
	"context"
	"fmt"
	"time"

	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
)

// Waker wakes a Runner when the Handler's next wipe may have come forward. Its Wake is the
// Handler's HandlerOptions.Wake.
type Waker struct{ c chan struct{} }

// NewWaker returns a Waker.
func NewWaker() *Waker { return &Waker{c: make(chan struct{}, 1)} }

// Wake wakes the Runner, or leaves a wake-up for it; it never blocks.
func (w *Waker) Wake() {
	select {
	case w.c <- struct{}{}:
	default:
	}
}

// Runner carries out a Handler's wipes on the real clock: the wipe at start, then each wipe when
// it is due, as the kubelet's timed worker queue fires them.
type Runner struct {
	h     *Handler
	clock clock.WithTicker
	waker *Waker
}

// RunnerOptions configure a Runner.
type RunnerOptions struct {
	Handler *Handler
	Clock   clock.WithTicker
	// Waker is the one the Handler was given. Required.
	Waker *Waker
}

// NewRunner returns a Runner; nothing runs before Run.
func NewRunner(opts RunnerOptions) (*Runner, error) {
	if opts.Handler == nil || opts.Clock == nil || opts.Waker == nil {
		return nil, fmt.Errorf("new dra plugin runner: options Handler, Clock and Waker: %w", minikubelet.ErrMissingOption)
	}
	return &Runner{h: opts.Handler, clock: opts.Clock, waker: opts.Waker}, nil
}

// Run starts the handler (the wipe of the node's slices) and carries out wipes until ctx is
// done; then it closes every plugin's connection.
func (r *Runner) Run(ctx context.Context) error {
	defer r.h.Stop()
	r.h.Start()
	for {
		r.h.Advance(ctx)
		var t clock.Timer
		var due <-chan time.Time
		if at, ok := r.h.NextWake(); ok {
			t = r.clock.NewTimer(at.Sub(r.clock.Now()))
			due = t.C()
		}
		select {
		case <-ctx.Done():
		case <-due:
		case <-r.waker.c:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}
