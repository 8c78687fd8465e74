package pluginmanager

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Runner runs a Manager on the real clock: the reconciler on its own goroutine, each operation on
// a goroutine of its own, as the kubelet's goroutinemap does.
type Runner struct {
	m       *Manager
	clock   clock.Clock
	dialer  Dialer
	tracer  trace.Tracer
	metrics func([]Sample)

	mu sync.Mutex // guards m and everything it holds (both caches, the executor, the handlers)
	wg sync.WaitGroup
}

// RunnerOptions configure a Runner.
type RunnerOptions struct {
	Manager *Manager
	Clock   clock.Clock
	Dialer  Dialer
	Tracer  trace.Tracer
	// Metrics receives plugin_manager_total_plugins after every reconciler pass and every
	// finished operation, under the runner's lock. Nil records none.
	Metrics func([]Sample)
}

// NewRunner returns a Runner; nothing runs before Run.
func NewRunner(opts RunnerOptions) (*Runner, error) {
	if opts.Manager == nil || opts.Clock == nil || opts.Dialer == nil || opts.Tracer == nil {
		return nil, fmt.Errorf("new plugin manager runner: options Manager, Clock, Dialer and Tracer: %w", minikubelet.ErrMissingOption)
	}
	return &Runner{m: opts.Manager, clock: opts.Clock, dialer: opts.Dialer, tracer: opts.Tracer, metrics: opts.Metrics}, nil
}

// Lock holds the runner's lock and returns its release: the watcher (pluginwatcher.Run) takes it
// around its calls into the Manager's desired state.
func (r *Runner) Lock() func() {
	r.mu.Lock()
	return r.mu.Unlock
}

// Registered returns the registered plugins.
func (r *Runner) Registered() []PluginInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m.Actual().GetRegisteredPlugins()
}

// books is the actual state under the runner's lock, for operations on their goroutines.
type books struct{ r *Runner }

func (b books) AddPlugin(p PluginInfo) error {
	b.r.mu.Lock()
	defer b.r.mu.Unlock()
	return b.r.m.Actual().AddPlugin(p)
}

func (b books) RemovePlugin(path string) {
	b.r.mu.Lock()
	defer b.r.mu.Unlock()
	b.r.m.Actual().RemovePlugin(path)
}

// Run runs reconciler passes every LoopPeriod until ctx is done, then waits for the operations
// still running.
func (r *Runner) Run(ctx context.Context) error {
	defer r.wg.Wait()
	env := Env{Dialer: r.dialer, Books: books{r}, Tracer: r.tracer}
	logger := klog.FromContext(ctx)
	for {
		r.mu.Lock()
		ops := r.m.Reconcile()
		next, _ := r.m.NextWake()
		r.record()
		r.mu.Unlock()
		for _, op := range ops {
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				err := RunOperation(ctx, op, env)
				if err != nil {
					logger.V(2).Info("Plugin operation failed", "operation", op.Kind, "socket", op.Plugin.SocketPath, "err", err)
				}
				r.mu.Lock()
				r.m.Finish(op, err)
				r.record()
				r.mu.Unlock()
			}()
		}
		t := r.clock.NewTimer(next.Sub(r.clock.Now()))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
		}
	}
}

// record hands the caches' counts to the metrics; r.mu is held.
func (r *Runner) record() {
	if r.metrics != nil {
		r.metrics(r.m.TotalPlugins())
	}
}
