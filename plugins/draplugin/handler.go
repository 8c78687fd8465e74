package draplugin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/fields"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Connector makes the kubelet's connection to a DRA plugin's endpoint: `run` with gRPC (GRPC,
// grpc.go), a replay with its simulated plugins.
type Connector interface {
	// Connect creates the connection without waiting for it, as grpc.NewClient does. The
	// connection reports every change of its state to watch, true when it is up and false when
	// it went down, never before Start was called and never during a call into Handler.
	Connect(endpoint string, watch func(connected bool)) (Conn, error)
}

// Conn is one plugin's connection.
type Conn interface {
	// Start makes the connection try to connect now, without waiting for a call that needs it
	// (the kubelet's conn.Connect), so that a plugin that is not there shows early.
	Start()
	// Close closes the connection; one that was up reports that it went down.
	Close() error
}

// Slices deletes ResourceSlices in the API server.
type Slices interface {
	// DeleteSlices deletes every ResourceSlice the field selector selects.
	DeleteSlices(ctx context.Context, selector fields.Set) error
}

// HandlerOptions configure a Handler.
type HandlerOptions struct {
	// Manager is the core. Required.
	Manager *Manager
	// Connector connects to plugins' endpoints. Required.
	Connector Connector
	// Slices deletes ResourceSlices; required when the Manager wipes.
	Slices Slices
	// Tracer receives refused registrations. Required.
	Tracer trace.Tracer
	// Wake, if set, is called when a change may have brought the next wipe forward: the
	// Runner's wake-up (Waker.Wake).
	Wake func()
}

// ErrStopped is returned by a registration that arrives after Stop.
var ErrStopped = errors.New("dra plugin manager stopped")

// Handler is the plugin manager's DRAPlugin handler: the DRAPluginManager's registration side
// around its core. In `run` it is shared by the plugin manager's operations, the connections'
// state callbacks and the Runner's wipes, so its one mutex guards the Manager and conns; it is
// never held across a call to a connection or the API server. A replay drives it from one
// goroutine, and its simulated connections call back synchronously.
type Handler struct {
	opts HandlerOptions

	mu      sync.Mutex // guards opts.Manager, conns and stopped
	conns   map[*Plugin]Conn
	stopped bool
}

// NewHandler returns a Handler with no plugins.
func NewHandler(opts HandlerOptions) (*Handler, error) {
	var missing []string
	for _, o := range []struct {
		name  string
		unset bool
	}{{"Manager", opts.Manager == nil}, {"Connector", opts.Connector == nil}, {"Tracer", opts.Tracer == nil},
		{"Slices", opts.Slices == nil && opts.Manager != nil && opts.Manager.opts.Wipes}} {
		if o.unset {
			missing = append(missing, o.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("new dra plugin handler: options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	return &Handler{opts: opts, conns: map[*Plugin]Conn{}}, nil
}

// Start queues the wipe of every ResourceSlice of the node, as the DRA manager's start does.
func (h *Handler) Start() {
	h.mu.Lock()
	h.opts.Manager.Start()
	h.mu.Unlock()
	h.wake()
}

// ValidatePlugin refuses a plugin that serves none of the kubelet's DRA services.
func (h *Handler) ValidatePlugin(name, endpoint string, versions []string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.opts.Manager.Validate(name, endpoint, versions)
	if err != nil {
		h.trace("ValidatePlugin", "ValidatePlugin", err)
	}
	return err
}

// RegisterPlugin validates the plugin again, makes its connection and records it under the
// driver's name; then the connection starts to connect. A driver may have several plugins (a
// new one registering while the old one still runs), on different endpoints.
func (h *Handler) RegisterPlugin(name, endpoint string, versions []string, _ *time.Duration) error {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return ErrStopped
	}
	service, err := h.opts.Manager.Validate(name, endpoint, versions)
	if err == nil {
		err = h.opts.Manager.CheckEndpoint(name, endpoint)
	}
	var conn Conn
	var p *Plugin
	if err == nil {
		var watched *Plugin // set before the connection can report anything
		conn, err = h.opts.Connector.Connect(endpoint, func(connected bool) { h.connectionChanged(watched, connected) })
		if err != nil {
			err = fmt.Errorf("create gRPC connection to DRA driver %s plugin at endpoint %s: %w", name, endpoint, err)
		} else {
			p = h.opts.Manager.Add(name, endpoint, service)
			watched = p
			h.conns[p] = conn
		}
	}
	if err != nil {
		h.trace("RegisterPlugin", "RegisterPlugin", err)
	}
	h.mu.Unlock()
	if err != nil {
		return err
	}
	h.wake()
	conn.Start()
	return nil
}

// DeRegisterPlugin forgets the driver's plugin on endpoint and closes its connection.
func (h *Handler) DeRegisterPlugin(name, endpoint string) {
	h.mu.Lock()
	p := h.opts.Manager.Remove(name, endpoint)
	conn := h.conns[p]
	delete(h.conns, p)
	h.mu.Unlock()
	h.wake()
	if conn != nil {
		// The kubelet closes it outside its lock, as here: the close reports the end.
		_ = conn.Close()
	}
}

// connectionChanged is a connection's report; after Stop nothing is recorded any more.
func (h *Handler) connectionChanged(p *Plugin, connected bool) {
	h.mu.Lock()
	if h.stopped || p == nil {
		h.mu.Unlock()
		return
	}
	h.opts.Manager.ConnectionChanged(p, connected)
	h.mu.Unlock()
	h.wake()
}

// Advance carries out the wipes due now, each delete outside the lock; it reports whether any
// was due.
func (h *Handler) Advance(ctx context.Context) bool {
	h.mu.Lock()
	due := h.opts.Manager.Due()
	h.mu.Unlock()
	for _, w := range due {
		err := h.opts.Slices.DeleteSlices(ctx, w.Selector)
		h.mu.Lock()
		h.opts.Manager.Done(w, err)
		h.mu.Unlock()
	}
	return len(due) > 0
}

// NextWake returns when the next wipe is due, if one is.
func (h *Handler) NextWake() (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.opts.Manager.NextWake()
}

// Stop closes every connection, as the DRA plugin manager's Stop does: nothing more is recorded
// and no plugin registers any more.
func (h *Handler) Stop() {
	h.mu.Lock()
	h.stopped = true
	conns := h.conns
	h.conns = map[*Plugin]Conn{}
	h.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// Drivers lists the registered drivers and their plugins' endpoints.
func (h *Handler) Drivers() map[string][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.opts.Manager.Drivers()
}

func (h *Handler) trace(reason, fn string, err error) {
	h.opts.Tracer.Emit(trace.Event{Component: trace.DRA, Event: trace.KindError, Reason: reason, Func: fn, Message: trace.Quote(err.Error())})
}

func (h *Handler) wake() {
	if h.opts.Wake != nil {
		h.opts.Wake()
	}
}
