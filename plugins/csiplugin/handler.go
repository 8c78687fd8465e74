package csiplugin

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	utilversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Timeout bounds NodeGetInfo during registration: the kubelet's csiTimeout.
const Timeout = 2 * time.Minute

// NodeInfo is what NodeGetInfo tells the kubelet about the node.
type NodeInfo struct {
	NodeID            string
	MaxVolumesPerNode int64
	// Topology is the accessible topology's segments, nil when the driver reports none.
	Topology map[string]string
}

// NodeInfoGetter calls a driver's Node service.
type NodeInfoGetter interface {
	NodeGetInfo(ctx context.Context, endpoint string) (NodeInfo, error)
}

// NodeInfoManager records drivers on the Node and the CSINode.
type NodeInfoManager interface {
	InstallCSIDriver(ctx context.Context, driver string, info NodeInfo) error
	UninstallCSIDriver(ctx context.Context, driver string) error
}

// Options configure a Handler.
type Options struct {
	Nodes  NodeInfoManager
	Driver NodeInfoGetter
	Tracer trace.Tracer
}

// driver is a registered driver: the kubelet's csiDrivers entry.
type driver struct {
	endpoint string
	version  *utilversion.Version
}

// Handler is the plugin manager's CSIPlugin handler.
type Handler struct {
	opts Options

	mu      sync.Mutex // guards drivers
	drivers map[string]driver
}

// New returns a Handler with no drivers.
func New(opts Options) (*Handler, error) {
	var missing []string
	if opts.Nodes == nil {
		missing = append(missing, "Nodes")
	}
	if opts.Driver == nil {
		missing = append(missing, "Driver")
	}
	if opts.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("new csi handler: options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	return &Handler{opts: opts, drivers: map[string]driver{}}, nil
}

// ValidatePlugin refuses a driver without a supported version (the highest version of major 1
// or lower), or one already registered with the same or a higher version.
func (h *Handler) ValidatePlugin(name, endpoint string, versions []string) error {
	if _, err := h.validateVersions("ValidatePlugin", name, endpoint, versions); err != nil {
		err = &csiError{msg: fmt.Sprintf("validation failed for CSI Driver %s at endpoint %s: %v", name, endpoint, err)}
		h.opts.Tracer.Emit(trace.Event{Component: trace.CSI, Event: trace.KindError, Reason: "ValidatePlugin", Func: "ValidatePlugin", Message: trace.Quote(err.Error())})
		return err
	}
	return nil
}

func (h *Handler) validateVersions(call, name, _ string, versions []string) (*utilversion.Version, error) {
	if len(versions) == 0 {
		return nil, &csiError{msg: logf("%s for CSI driver %q failed. Plugin returned an empty list for supported versions", call, name)}
	}
	v, err := utilversion.HighestSupportedVersion(versions)
	if err != nil {
		return nil, &csiError{msg: logf("%s for CSI driver %q failed. None of the versions specified %q are supported. err=%v", call, name, versions, err)}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if old, ok := h.drivers[name]; ok && !old.version.LessThan(v) {
		return nil, &csiError{msg: logf("%s for CSI driver %q failed. Another driver with the same name is already registered with a higher supported version: %q", call, name, old.version)}
	}
	return v, nil
}

// RegisterPlugin remembers the driver, asks it for its node info and installs it on the node.
func (h *Handler) RegisterPlugin(name, endpoint string, versions []string, timeout *time.Duration) error {
	v, err := h.validateVersions("RegisterPlugin", name, endpoint, versions)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.drivers[name] = driver{endpoint: endpoint, version: v}
	h.mu.Unlock()

	t := Timeout
	if timeout != nil {
		t = *timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), t)
	defer cancel()
	info, err := h.opts.Driver.NodeGetInfo(ctx, endpoint)
	if err != nil {
		h.forget(ctx, name)
		h.opts.Tracer.Emit(trace.Event{Component: trace.CSI, Event: trace.KindError, Reason: "NodeGetInfo", Func: "RegisterPlugin", Message: fmt.Sprintf("driver=%s: %s", trace.Quote(name), trace.Quote(err.Error()))})
		return err
	}
	if err := h.opts.Nodes.InstallCSIDriver(ctx, name, info); err != nil {
		h.forget(ctx, name)
		h.opts.Tracer.Emit(trace.Event{Component: trace.CSI, Event: trace.KindError, Reason: "InstallCSIDriver", Func: "RegisterPlugin", Message: fmt.Sprintf("driver=%s: %s", trace.Quote(name), trace.Quote(err.Error()))})
		return err
	}
	h.opts.Tracer.Emit(trace.Event{Component: trace.CSI, Event: trace.KindRegistered, Func: "RegisterPlugin",
		Message: fmt.Sprintf("driver=%s nodeID=%s endpoint=%s version=%s", trace.Quote(name), trace.Quote(info.NodeID), trace.Quote(endpoint), v)})
	return nil
}

// DeRegisterPlugin forgets the driver and uninstalls it from the node.
func (h *Handler) DeRegisterPlugin(name, _ string) {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	h.forget(ctx, name)
	h.opts.Tracer.Emit(trace.Event{Component: trace.CSI, Event: trace.KindUnregistered, Func: "DeRegisterPlugin", Message: "driver=" + trace.Quote(name)})
}

// forget is unregisterDriver: an uninstall failure is only reported.
func (h *Handler) forget(ctx context.Context, name string) {
	h.mu.Lock()
	delete(h.drivers, name)
	h.mu.Unlock()
	if err := h.opts.Nodes.UninstallCSIDriver(ctx, name); err != nil {
		h.opts.Tracer.Emit(trace.Event{Component: trace.CSI, Event: trace.KindError, Reason: "UninstallCSIDriver", Func: "DeRegisterPlugin", Message: err.Error()})
	}
}

// Drivers lists the registered drivers' names, for tests and expectations.
func (h *Handler) Drivers() map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]string{}
	for n, d := range h.drivers {
		out[n] = d.endpoint
	}
	return out
}
