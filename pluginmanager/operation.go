package pluginmanager

import (
	"context"
	"errors"
	"fmt"
	"time"

	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/minikubelet/minikubelet/trace"
)

// Handler is what a plugin type registers with the plugin manager: the kubelet's
// cache.PluginHandler. Calls for one socket are strictly sequential.
type Handler interface {
	// ValidatePlugin says whether the plugin may register.
	ValidatePlugin(name, endpoint string, versions []string) error
	// RegisterPlugin takes the plugin in. The plugin manager always passes a nil timeout.
	RegisterPlugin(name, endpoint string, versions []string, timeout *time.Duration) error
	// DeRegisterPlugin lets the plugin go after its socket disappeared.
	DeRegisterPlugin(name, endpoint string)
}

// Client is a connection to a plugin's registration socket: the pluginregistration v1
// Registration service.
type Client interface {
	GetInfo(ctx context.Context) (*registerapi.PluginInfo, error)
	NotifyRegistrationStatus(ctx context.Context, status *registerapi.RegistrationStatus) error
	Close() error
}

// Dialer connects to a registration socket.
type Dialer interface {
	Dial(ctx context.Context, socketPath string) (Client, error)
}

// Books is the part of the actual state an operation writes: the register sequence adds the
// plugin before the handler's RegisterPlugin, the unregister sequence removes it first.
type Books interface {
	AddPlugin(p PluginInfo) error
	RemovePlugin(path string)
}

// OperationKind is register or unregister.
type OperationKind int

// The operation kinds.
const (
	Register OperationKind = iota
	Unregister
)

func (k OperationKind) String() string {
	switch k {
	case Register:
		return "register"
	case Unregister:
		return "unregister"
	}
	return fmt.Sprintf("OperationKind(%d)", int(k))
}

// Operation is one started operation, keyed by its socket path.
type Operation struct {
	Kind OperationKind
	// Plugin is the desired state's entry for a register, the actual state's for an unregister.
	Plugin PluginInfo
	// Handlers is a copy of the handler map at the time the operation started (register only).
	Handlers map[string]Handler
}

// Env is what operations need from outside.
type Env struct {
	Dialer Dialer
	Books  Books
	Tracer trace.Tracer
}

// Sentinels for the failures of the register sequence, wrapped by RunOperation's errors.
var (
	ErrDial          = errors.New("dial failed")
	ErrGetInfo       = errors.New("failed to get plugin info using RPC GetInfo")
	ErrNoHandler     = errors.New("no handler registered for plugin type")
	ErrValidation    = errors.New("plugin validation failed")
	ErrRegistration  = errors.New("plugin registration failed")
	ErrNotify        = errors.New("failed to send registration status")
	ErrNoPluginEntry = errors.New("failed to get plugin handler")
)

// RunOperation runs one operation to its end: the operation generator's
// GenerateRegisterPluginFunc or GenerateUnregisterPluginFunc. The caller reports the result to
// Manager.Finish.
func RunOperation(ctx context.Context, op Operation, env Env) error {
	if op.Kind == Unregister {
		return unregister(op.Plugin, env)
	}
	return register(ctx, op, env)
}

func register(ctx context.Context, op Operation, env Env) error {
	path := op.Plugin.SocketPath
	client, err := env.Dialer.Dial(ctx, path)
	if err != nil {
		return fail(env, path, "Dial", fmt.Errorf("RegisterPlugin error -- %w at socket %s, err: %w", ErrDial, path, err))
	}
	defer func() { _ = client.Close() }()

	info, err := client.GetInfo(ctx)
	if err != nil {
		return fail(env, path, "GetInfo", fmt.Errorf("RegisterPlugin error -- %w at socket %s, err: %w", ErrGetInfo, path, err))
	}
	env.Tracer.Emit(trace.Event{Component: trace.PluginManager, Event: trace.KindInfo, Func: "GetInfo",
		Message: fmt.Sprintf("socket=%s type=%s name=%s endpoint=%s versions=%v", path, info.Type, info.Name, info.Endpoint, info.SupportedVersions)})
	handler, ok := op.Handlers[info.Type]
	if !ok {
		e := fmt.Errorf("RegisterPlugin error -- %w: %s at socket %s", ErrNoHandler, info.Type, path)
		return notifyFailure(ctx, env, client, path, "NoHandler", e)
	}
	endpoint := info.Endpoint
	if endpoint == "" {
		endpoint = path
	}
	if err := handler.ValidatePlugin(info.Name, endpoint, info.SupportedVersions); err != nil {
		e := fmt.Errorf("RegisterPlugin error -- %w with err: %w", ErrValidation, err)
		return notifyFailure(ctx, env, client, path, "ValidatePlugin", e)
	}
	// The actual state learns of the plugin before the handler does, so that a delete arriving
	// meanwhile is an ordinary unregistration. An error here is only logged in the kubelet.
	p := op.Plugin
	p.Handler, p.Name, p.Endpoint = handler, info.Name, endpoint
	if err := env.Books.AddPlugin(p); err != nil {
		env.Tracer.Emit(trace.Event{Component: trace.PluginManager, Event: trace.KindError, Reason: "AddPlugin", Message: err.Error(), Func: "RegisterPlugin"})
	}
	if err := handler.RegisterPlugin(info.Name, endpoint, info.SupportedVersions, nil); err != nil {
		e := fmt.Errorf("RegisterPlugin error -- %w with err: %w", ErrRegistration, err)
		return notifyFailure(ctx, env, client, path, "RegisterPlugin", e)
	}
	if err := client.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: true}); err != nil {
		return fail(env, path, "NotifyRegistrationStatus", fmt.Errorf("RegisterPlugin error -- %w: %w", ErrNotify, err))
	}
	env.Tracer.Emit(trace.Event{Component: trace.PluginManager, Event: trace.KindRegistered, Func: "RegisterPlugin",
		Message: fmt.Sprintf("socket=%s type=%s name=%s endpoint=%s id=%s", path, info.Type, info.Name, endpoint, p.ID)})
	return nil
}

// notifyFailure tells the plugin it was not registered. The operation fails whatever the
// notification's own result, so every failure path backs off.
func notifyFailure(ctx context.Context, env Env, client Client, path, reason string, cause error) error {
	if err := client.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: false, Error: cause.Error()}); err != nil {
		cause = errors.Join(cause, fmt.Errorf("%w: %w", ErrNotify, err))
	}
	return fail(env, path, reason, cause)
}

func fail(env Env, path, reason string, err error) error {
	env.Tracer.Emit(trace.Event{Component: trace.PluginManager, Event: trace.KindError, Reason: reason, Func: "RegisterPlugin",
		Message: fmt.Sprintf("socket=%s: %v", path, err)})
	return err
}

func unregister(p PluginInfo, env Env) error {
	if p.Handler == nil {
		err := fmt.Errorf("UnregisterPlugin error -- %w for %s", ErrNoPluginEntry, p.SocketPath)
		env.Tracer.Emit(trace.Event{Component: trace.PluginManager, Event: trace.KindError, Reason: "NoHandler", Func: "UnregisterPlugin", Message: err.Error()})
		return err
	}
	env.Books.RemovePlugin(p.SocketPath)
	p.Handler.DeRegisterPlugin(p.Name, p.Endpoint)
	env.Tracer.Emit(trace.Event{Component: trace.PluginManager, Event: trace.KindUnregistered, Func: "UnregisterPlugin",
		Message: fmt.Sprintf("socket=%s name=%s endpoint=%s id=%s", p.SocketPath, p.Name, p.Endpoint, p.ID)})
	return nil
}
