package pluginmanager

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// LoopPeriod is the reconciler's sliding period.
const LoopPeriod = time.Second

// Options configure a Manager.
type Options struct {
	// Clock is the time of every pass, id and back-off. Required.
	Clock clock.PassiveClock
	// Tracer receives the manager's events. Required; trace.Discard drops them.
	Tracer trace.Tracer
	// NewID returns a fresh id for every socket create event: a random UUID in run, a counter in
	// replay. Required.
	NewID func() string
}

func (o Options) validate() error {
	var missing []string
	if o.Clock == nil {
		missing = append(missing, "Clock")
	}
	if o.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	if o.NewID == nil {
		missing = append(missing, "NewID")
	}
	if len(missing) > 0 {
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	return nil
}

// Manager is the plugin manager's core: both caches, the handlers, the reconciler and the
// executor's books.
type Manager struct {
	opts     Options
	dsw      *DesiredState
	asw      *ActualState
	exec     *Executor
	handlers map[string]Handler
	// nextPass is when the reconciler runs next; zero before the first pass, which is due at once.
	nextPass time.Time
}

// New returns a Manager with empty caches and no handlers.
func New(opts Options) (*Manager, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new plugin manager: %w", err)
	}
	return &Manager{
		opts:     opts,
		dsw:      &DesiredState{now: opts.Clock.Now, newID: opts.NewID, byPath: map[string]PluginInfo{}},
		asw:      &ActualState{byPath: map[string]PluginInfo{}},
		exec:     NewExecutor(),
		handlers: map[string]Handler{},
	}, nil
}

// AddHandler registers the handler of a plugin type (CSIPlugin, DevicePlugin, ...).
func (m *Manager) AddHandler(pluginType string, h Handler) { m.handlers[pluginType] = h }

// Desired is the desired state, which the watcher fills.
func (m *Manager) Desired() *DesiredState { return m.dsw }

// Actual is the actual state, which operations write through Books.
func (m *Manager) Actual() *ActualState { return m.asw }

// NextWake returns when the reconciler wants to run next.
func (m *Manager) NextWake() (time.Time, bool) { return m.nextPass, true }

// Reconcile runs a pass when one is due, the reconciler's reconcile: unregistrations first, then
// registrations, in socket path order. It returns the operations it started; the caller runs each
// with RunOperation and reports its end to Finish. Operations the executor refuses (one is still
// running, or the back-off window is open) are skipped silently, as in the kubelet: the next pass
// asks again.
func (m *Manager) Reconcile() []Operation {
	now := m.opts.Clock.Now()
	if !m.nextPass.IsZero() && now.Before(m.nextPass) {
		return nil
	}
	m.nextPass = now.Add(LoopPeriod)
	var started []Operation
	for _, p := range m.asw.GetRegisteredPlugins() {
		want, ok := m.dsw.byPath[p.SocketPath]
		if ok && want.ID == p.ID {
			continue
		}
		if ok {
			m.opts.Tracer.Emit(trace.Event{Component: trace.PluginManager, Event: trace.KindUpdated, Func: "reconcile",
				Message: fmt.Sprintf("socket=%s id=%s new-id=%s", p.SocketPath, p.ID, want.ID)})
		}
		if op, ok := m.start(Operation{Kind: Unregister, Plugin: p}, now); ok {
			started = append(started, op)
		}
	}
	for _, p := range m.dsw.GetPluginsToRegister() {
		if m.asw.PluginExistsWithCorrectID(p) {
			continue
		}
		if op, ok := m.start(Operation{Kind: Register, Plugin: p, Handlers: maps.Clone(m.handlers)}, now); ok {
			started = append(started, op)
		}
	}
	return started
}

func (m *Manager) start(op Operation, now time.Time) (Operation, bool) {
	if err := m.exec.Start(op.Plugin.SocketPath, now); err != nil {
		var b *BackoffError
		if !errors.Is(err, ErrAlreadyExists) && !errors.As(err, &b) {
			m.opts.Tracer.Emit(trace.Event{Component: trace.PluginManager, Event: trace.KindError, Reason: "Operation", Func: "reconcile", Message: err.Error()})
		}
		return Operation{}, false
	}
	f, kind := "RegisterPlugin", trace.KindRegister
	if op.Kind == Unregister {
		f, kind = "UnregisterPlugin", trace.KindUnregister
	}
	m.opts.Tracer.Emit(trace.Event{Component: trace.PluginManager, Event: kind, Func: f,
		Message: fmt.Sprintf("socket=%s id=%s", op.Plugin.SocketPath, op.Plugin.ID)})
	return op, true
}

// Finish records the end of an operation Reconcile started. A failure opens the socket's back-off
// window, which the trace shows as the delay.
func (m *Manager) Finish(op Operation, err error) {
	d := m.exec.Finish(op.Plugin.SocketPath, m.opts.Clock.Now(), err)
	if err != nil {
		m.opts.Tracer.Emit(trace.Event{Component: trace.PluginManager, Event: trace.KindBackOff, Func: "operationComplete", Delay: d,
			Message: fmt.Sprintf("socket=%s", op.Plugin.SocketPath)})
	}
}

// Pending reports whether any operation is running.
func (m *Manager) Pending() bool { return m.exec.Pending() > 0 }
