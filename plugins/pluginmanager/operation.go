package pluginmanager

import (
	"context"
	"errors"
	"fmt"
	"time"

	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/minikubelet/minikubelet/sim/trace"
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
		return fail(env, path, "Dial", "", opError(ErrDial, err, "RegisterPlugin error -- dial failed at socket %s, err: %v", path, err))
	}
	defer func() { _ = client.Close() }()

	info, err := client.GetInfo(ctx)
	if err != nil {
		return fail(env, path, "GetInfo", "", opError(ErrGetInfo, err, "RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket %s, err: %v", path, err))
	}
	env.Tracer.Emit(trace.Event{Component: trace.PluginManager, Event: trace.KindInfo, Func: "GetInfo",
		Message: fmt.Sprintf("socket=%s type=%s name=%s endpoint=%s versions=%s", path, trace.Quote(info.Type), trace.Quote(info.Name),
			trace.Quote(info.Endpoint), trace.Quote(fmt.Sprint(info.SupportedVersions)))})
	handler, ok := op.Handlers[info.Type]
	if !ok {
		told := fmt.Sprintf("RegisterPlugin error -- no handler registered for plugin type: %s at socket %s", info.Type, path)
		if err := notify(ctx, client, false, told); err != nil {
			return fail(env, path, "NoHandler", told, opError(ErrNotify, err, "RegisterPlugin error -- failed to send error at socket %s, err: %v", path, err))
		}
		return fail(env, path, "NoHandler", told, opError(ErrNoHandler, nil, "%s", told))
	}
	endpoint := info.Endpoint
	if endpoint == "" {
		endpoint = path
	}
	if err := handler.ValidatePlugin(info.Name, endpoint, info.SupportedVersions); err != nil {
		told := fmt.Sprintf("RegisterPlugin error -- plugin validation failed with err: %v", err)
		if err := notify(ctx, client, false, told); err != nil {
			return fail(env, path, "ValidatePlugin", told, opError(ErrNotify, err, "RegisterPlugin error -- failed to send error at socket %s, err: %v", path, err))
		}
		// The kubelet returns a generic error here; what went wrong is only in the notification.
		return fail(env, path, "ValidatePlugin", told, opError(ErrValidation, err, "RegisterPlugin error -- pluginHandler.ValidatePluginFunc failed"))
	}
	// The actual state learns of the plugin before the handler does, so that a delete arriving
	// meanwhile is an ordinary unregistration. An error here is only logged in the kubelet.
	p := op.Plugin
	p.Handler, p.Name, p.Endpoint = handler, info.Name, endpoint
	if err := env.Books.AddPlugin(p); err != nil {
		env.Tracer.Emit(trace.Event{Component: trace.PluginManager, Event: trace.KindError, Reason: "AddPlugin", Message: err.Error(), Func: "RegisterPlugin"})
	}
	if err := handler.RegisterPlugin(info.Name, endpoint, info.SupportedVersions, nil); err != nil {
		told := fmt.Sprintf("RegisterPlugin error -- plugin registration failed with err: %v", err)
		// The operation fails with the notification's text, whether or not it was delivered.
		if nerr := notify(ctx, client, false, told); nerr != nil {
			return fail(env, path, "RegisterPlugin", told, opError(ErrRegistration, nerr, "%s: %v", told, nerr))
		}
		return fail(env, path, "RegisterPlugin", told, opError(ErrRegistration, err, "%s", told))
	}
	// The notification comes after RegisterPlugin, so that a handler always sees Validate then
	// Register even when the notification fails.
	if err := notify(ctx, client, true, ""); err != nil {
		// notifyPlugin formats its error as "<errStr>: <err>", with an empty errStr here.
		return fail(env, path, "NotifyRegistrationStatus", "", opError(ErrNotify, err, "RegisterPlugin error -- failed to send registration status at socket %s, err: : %v", path, err))
	}
	env.Tracer.Emit(trace.Event{Component: trace.PluginManager, Event: trace.KindRegistered, Func: "RegisterPlugin",
		Message: fmt.Sprintf("socket=%s type=%s name=%s endpoint=%s id=%s", path, trace.Quote(info.Type), trace.Quote(info.Name), trace.Quote(endpoint), p.ID)})
	return nil
}

// notify sends the registration status, the kubelet's notifyPlugin without its error formatting.
func notify(ctx context.Context, client Client, registered bool, errStr string) error {
	return client.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: registered, Error: errStr})
}

// opError is an operation's error: the kubelet's text, matching kind (and cause, when given) with
// errors.Is.
func opError(kind, cause error, format string, args ...any) error {
	return &operationError{msg: fmt.Sprintf(format, args...), kind: kind, cause: cause}
}

type operationError struct {
	msg         string
	kind, cause error
}

func (e *operationError) Error() string        { return e.msg }
func (e *operationError) Is(target error) bool { return target == e.kind }
func (e *operationError) Unwrap() error        { return e.cause }

// fail traces a failed register operation: what the plugin was told, when it was told something,
// else the operation's error. Either may quote what the plugin answered, so it is capped.
func fail(env Env, path, reason, told string, err error) error {
	msg := told
	if msg == "" {
		msg = err.Error()
	}
	env.Tracer.Emit(trace.Event{Component: trace.PluginManager, Event: trace.KindError, Reason: reason, Func: "RegisterPlugin",
		Message: fmt.Sprintf("socket=%s: %s", path, trace.Quote(msg))})
	return err
}

func unregister(p PluginInfo, env Env) error {
	if p.Handler == nil {
		err := opError(ErrNoPluginEntry, nil, "UnregisterPlugin error -- failed to get plugin handler for %s", p.SocketPath)
		env.Tracer.Emit(trace.Event{Component: trace.PluginManager, Event: trace.KindError, Reason: "NoHandler", Func: "UnregisterPlugin", Message: err.Error()})
		return err
	}
	env.Books.RemovePlugin(p.SocketPath)
	p.Handler.DeRegisterPlugin(p.Name, p.Endpoint)
	env.Tracer.Emit(trace.Event{Component: trace.PluginManager, Event: trace.KindUnregistered, Func: "UnregisterPlugin",
		Message: fmt.Sprintf("socket=%s name=%s endpoint=%s id=%s", p.SocketPath, trace.Quote(p.Name), trace.Quote(p.Endpoint), p.ID)})
	return nil
}
