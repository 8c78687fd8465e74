package devicemanager

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Connector connects the device manager to the plugin serving an endpoint: the dialing half of
// the kubelet's plugin/v1beta1 client. `run` connects over gRPC (GRPC, grpc.go); a replay's
// simulated plugins answer in memory. The registration steps around it are the same in both.
type Connector interface {
	// Connect dials the plugin serving endpoint.
	Connect(ctx context.Context, endpoint string) (Conn, error)
}

// Conn is a connection to one device plugin's DevicePlugin service. It has five methods where
// the house keeps interfaces to four: they are the calls the device manager makes on one
// connection, and splitting them would hand the same connection around twice.
type Conn interface {
	Plugin
	// GetDevicePluginOptions asks the plugin for its options.
	GetDevicePluginOptions(ctx context.Context) (*pluginapi.DevicePluginOptions, error)
	// ListAndWatch starts the plugin's stream of device lists: every message goes to s.Update,
	// and a stream that ends on its own (the plugin went away) reports why to s.End. It returns
	// at once; a connection may deliver its first message before it does.
	ListAndWatch(s Stream)
	// Close ends the connection and its stream without a call to Stream.End, and returns once
	// the stream can deliver nothing more.
	Close() error
}

// Stream receives one connection's ListAndWatch messages.
type Stream interface {
	// Update is one message: the plugin's whole device list.
	Update(devs []*pluginapi.Device)
	// End says the stream ended, and why.
	End(err error)
}

// HandlerOptions configure a Handler.
type HandlerOptions struct {
	// Manager is the device manager's core. Required.
	Manager *Manager
	// Connector connects to plugins' endpoints. Required.
	Connector Connector
	// Dir is the device plugin directory, in which a Register request on kubelet.sock names its
	// endpoint. Required.
	Dir string
	// Tracer receives refused registrations and broken streams. Required.
	Tracer trace.Tracer
}

// ErrStopped is returned by a registration that arrives after Close.
var ErrStopped = errors.New("device manager stopped")

// Handler is the device manager's registration side: the kubelet's plugin/v1beta1 server
// without its gRPC listener. The plugin manager's DevicePlugin handler (ValidatePlugin,
// RegisterPlugin, DeRegisterPlugin) and the classic Register on kubelet.sock (which Server
// serves) take a plugin in by the same steps: validate, connect, ask for its options, record
// the endpoint, watch its devices. It is also the device manager as the sync side sees it
// (GetCapacity, Admit, RemovePods).
//
// In `run` it is shared by the plugin manager's operations, kubelet.sock's requests, each
// plugin's stream and the sync loop, so its one mutex guards the Manager; it is never held
// across a call to a plugin's connection setup. A replay drives it from one goroutine.
type Handler struct {
	opts HandlerOptions

	mu     sync.Mutex // guards opts.Manager, conns and closed
	conns  map[string]Conn
	closed bool
}

// NewHandler returns a Handler with no plugins.
func NewHandler(opts HandlerOptions) (*Handler, error) {
	var missing []string
	for _, o := range []struct {
		name  string
		unset bool
	}{{"Manager", opts.Manager == nil}, {"Connector", opts.Connector == nil}, {"Dir", opts.Dir == ""}, {"Tracer", opts.Tracer == nil}} {
		if o.unset {
			missing = append(missing, o.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("new device plugin handler: options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	return &Handler{opts: opts, conns: map[string]Conn{}}, nil
}

// Start is the manager's Start: it reads the checkpoint back, as a kubelet does at every start.
// A checkpoint that cannot be read is returned, and the kubelet carries on without it.
func (h *Handler) Start() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.opts.Manager.ReadCheckpoint()
}

// ValidatePlugin is the plugin manager path's validation.
func (h *Handler) ValidatePlugin(name, _ string, versions []string) error {
	return ValidatePlugin(name, versions)
}

// RegisterPlugin connects a plugin the plugin manager found. The plugin manager gives no
// context; the connection's dial has its own timeout.
func (h *Handler) RegisterPlugin(name, endpoint string, _ []string, _ *time.Duration) error {
	return h.connect(context.Background(), name, endpoint)
}

// DeRegisterPlugin disconnects the plugin registered under name.
func (h *Handler) DeRegisterPlugin(name, endpoint string) {
	h.mu.Lock()
	conn, ok := h.conns[name]
	delete(h.conns, name)
	h.opts.Manager.PluginDisconnected(name, endpoint)
	h.mu.Unlock()
	if ok {
		_ = conn.Close()
	}
}

// Register is the classic registration on kubelet.sock: the request names the resource and the
// plugin's socket in the device plugin directory.
func (h *Handler) Register(ctx context.Context, r *pluginapi.RegisterRequest) error {
	err := validateRegisterRequest(r.Version, r.ResourceName)
	if err == nil {
		err = h.connect(ctx, r.ResourceName, filepath.Join(h.opts.Dir, r.Endpoint))
	}
	if err != nil {
		h.opts.Tracer.Emit(trace.Event{Component: trace.DeviceManager, Event: trace.KindError, Reason: "Register", Func: "Register", Message: trace.Quote(err.Error())})
	}
	return err
}

// connect dials the plugin, asks for its options, records it and starts its ListAndWatch.
func (h *Handler) connect(ctx context.Context, res, endpoint string) error {
	conn, err := h.opts.Connector.Connect(ctx, endpoint)
	if err != nil {
		return fmt.Errorf("failed to dial device plugin: %w", err)
	}
	options, err := conn.GetDevicePluginOptions(ctx)
	if err != nil {
		_ = conn.Close()
		return fmt.Errorf("failed to get device plugin options: %w", err)
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		_ = conn.Close()
		return ErrStopped
	}
	old := h.conns[res]
	h.conns[res] = conn
	h.opts.Manager.PluginConnected(res, endpoint, conn, options)
	h.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	conn.ListAndWatch(&stream{h: h, res: res, endpoint: endpoint, conn: conn})
	return nil
}

// Close disconnects every plugin without marking its devices unhealthy, as a kubelet that stops
// does, and refuses registrations from then on.
func (h *Handler) Close() {
	h.mu.Lock()
	h.closed = true
	conns := h.conns
	h.conns = map[string]Conn{}
	h.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// GetCapacity is Manager.GetCapacity, for the node status.
func (h *Handler) GetCapacity() (capacity, allocatable v1.ResourceList, removed []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.opts.Manager.GetCapacity()
}

// Admit is Manager.Admit, for pod admission.
func (h *Handler) Admit(ctx context.Context, pod *v1.Pod) (bool, string, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.opts.Manager.Admit(ctx, pod)
}

// RemovePods is Manager.RemovePods.
func (h *Handler) RemovePods(active map[string]bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.opts.Manager.RemovePods(active)
}

// stream is the device manager's end of one connection's ListAndWatch.
type stream struct {
	h             *Handler
	res, endpoint string
	conn          Conn
}

// Update is genericDeviceUpdateCallback, for the resource's current connection only: a stream
// of a connection already replaced has nothing more to say.
func (s *stream) Update(devs []*pluginapi.Device) {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	if s.h.conns[s.res] == s.conn {
		s.h.opts.Manager.Update(s.res, devs)
	}
}

// End disconnects the plugin when its current connection's stream ended: its devices turn
// unhealthy and the endpoint stops.
func (s *stream) End(err error) {
	s.h.opts.Tracer.Emit(trace.Event{Component: trace.DeviceManager, Event: trace.KindError, Reason: "ListAndWatch", Func: "ListAndWatch", Message: fmt.Sprintf("resource=%s: %v", s.res, err)})
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	if s.h.conns[s.res] == s.conn {
		delete(s.h.conns, s.res)
		s.h.opts.Manager.PluginDisconnected(s.res, s.endpoint)
	}
}
