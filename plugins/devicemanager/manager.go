package devicemanager

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// EndpointStopGracePeriod is how long a stopped plugin's resource stays in the node's capacity.
const EndpointStopGracePeriod = 5 * time.Minute

// Plugin is the part of a device plugin's API the manager calls after registration.
type Plugin interface {
	Allocate(ctx context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error)
	GetPreferredAllocation(ctx context.Context, req *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error)
}

// Checkpointer stores the checkpoint file.
type Checkpointer interface {
	Write(data []byte) error
	// Read returns the stored bytes; a missing file is (nil, nil).
	Read() ([]byte, error)
}

// Options configure a Manager.
type Options struct {
	// Clock is the time of stops and expiries. Required.
	Clock clock.PassiveClock
	// Tracer receives the manager's events. Required; trace.Discard drops them.
	Tracer trace.Tracer
	// Checkpoint stores the checkpoint. Required.
	Checkpoint Checkpointer
}

func (o Options) validate() error {
	var missing []string
	if o.Clock == nil {
		missing = append(missing, "Clock")
	}
	if o.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	if o.Checkpoint == nil {
		missing = append(missing, "Checkpoint")
	}
	if len(missing) > 0 {
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	return nil
}

// endpoint is one resource's connected plugin, the kubelet's endpointInfo.
type endpoint struct {
	plugin   Plugin // nil for an endpoint restored from the checkpoint
	options  *pluginapi.DevicePluginOptions
	address  string
	stopTime time.Time // zero while connected
}

func (e *endpoint) stopped() bool { return !e.stopTime.IsZero() }

// Manager is the device manager's core.
type Manager struct {
	opts      Options
	endpoints map[string]*endpoint
	// healthy and unhealthy hold each resource's device ids; devices its full device list.
	healthy, unhealthy map[string]map[string]bool
	devices            map[string]map[string]*pluginapi.Device
	// pods holds the devices allocated to each container: pod UID → container → resource → ids.
	pods map[string]map[string]map[string]allocation
}

// New returns a Manager with no plugins.
func New(opts Options) (*Manager, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new device manager: %w", err)
	}
	return &Manager{
		opts:      opts,
		endpoints: map[string]*endpoint{},
		healthy:   map[string]map[string]bool{},
		unhealthy: map[string]map[string]bool{},
		devices:   map[string]map[string]*pluginapi.Device{},
		pods:      map[string]map[string]map[string]allocation{},
	}, nil
}

// PluginConnected records a connected plugin for a resource, replacing any endpoint it had: the
// kubelet's PluginConnected. Its devices come with the first ListAndWatch message.
func (m *Manager) PluginConnected(res, address string, p Plugin, options *pluginapi.DevicePluginOptions) {
	m.endpoints[res] = &endpoint{plugin: p, options: options, address: address}
	m.opts.Tracer.Emit(trace.Event{Component: trace.DeviceManager, Event: trace.KindRegistered, Func: "PluginConnected",
		Message: fmt.Sprintf("resource=%s endpoint=%s", res, address)})
}

// PluginDisconnected marks every device of the resource unhealthy and stops its endpoint; the
// resource is removed after EndpointStopGracePeriod. A disconnect from another address than the
// resource's current endpoint (an old plugin's stream ending late) is ignored.
func (m *Manager) PluginDisconnected(res, address string) {
	e, ok := m.endpoints[res]
	if !ok || e.stopped() || e.address != address {
		return
	}
	e.stopTime = m.opts.Clock.Now()
	for id := range m.healthy[res] {
		m.unhealthy[res][id] = true
	}
	m.healthy[res] = map[string]bool{}
	m.opts.Tracer.Emit(trace.Event{Component: trace.DeviceManager, Event: trace.KindStopped, Func: "PluginDisconnected",
		Message: fmt.Sprintf("resource=%s unhealthy=%d grace=%s", res, len(m.unhealthy[res]), EndpointStopGracePeriod)})
}

// Update is genericDeviceUpdateCallback: a ListAndWatch message replaces the resource's devices.
func (m *Manager) Update(res string, devs []*pluginapi.Device) {
	healthy, unhealthy := map[string]bool{}, map[string]bool{}
	all := map[string]*pluginapi.Device{}
	for _, d := range devs {
		all[d.ID] = d
		if d.Health == pluginapi.Healthy {
			healthy[d.ID] = true
		} else {
			unhealthy[d.ID] = true
		}
	}
	m.healthy[res], m.unhealthy[res], m.devices[res] = healthy, unhealthy, all
	m.opts.Tracer.Emit(trace.Event{Component: trace.DeviceManager, Event: trace.KindDevices, Func: "genericDeviceUpdateCallback",
		Message: fmt.Sprintf("resource=%s healthy=%d unhealthy=%d", res, len(healthy), len(unhealthy))})
	m.writeCheckpoint()
}

// GetCapacity returns each device plugin resource's capacity (healthy + unhealthy) and allocatable
// (healthy), and the resources removed now because their endpoint's grace period is over (or
// they have no endpoint), which it forgets.
func (m *Manager) GetCapacity() (capacity, allocatable v1.ResourceList, removed []string) {
	now := m.opts.Clock.Now()
	capacity, allocatable = v1.ResourceList{}, v1.ResourceList{}
	changed := false
	for _, res := range slices.Sorted(maps.Keys(m.resources())) {
		e, ok := m.endpoints[res]
		if !ok || (e.stopped() && now.Sub(e.stopTime) >= EndpointStopGracePeriod) {
			delete(m.endpoints, res)
			delete(m.healthy, res)
			delete(m.unhealthy, res)
			delete(m.devices, res)
			removed = append(removed, res)
			changed = true
			m.opts.Tracer.Emit(trace.Event{Component: trace.DeviceManager, Event: trace.KindExpired, Func: "GetCapacity", Message: "resource=" + res})
			continue
		}
		h, u := len(m.healthy[res]), len(m.unhealthy[res])
		capacity[v1.ResourceName(res)] = *resource.NewQuantity(int64(h+u), resource.DecimalSI)
		allocatable[v1.ResourceName(res)] = *resource.NewQuantity(int64(h), resource.DecimalSI)
	}
	if changed {
		m.writeCheckpoint()
	}
	return capacity, allocatable, removed
}

// resources is every resource with devices or an endpoint.
func (m *Manager) resources() map[string]bool {
	out := map[string]bool{}
	for r := range m.healthy {
		out[r] = true
	}
	for r := range m.unhealthy {
		out[r] = true
	}
	for r := range m.endpoints {
		out[r] = true
	}
	return out
}

// Resources lists the device plugin resources and their endpoints' addresses, sorted.
func (m *Manager) Resources() []string {
	return slices.Sorted(maps.Keys(m.resources()))
}

// NextWake returns when the earliest stopped endpoint's grace period ends.
func (m *Manager) NextWake() (time.Time, bool) {
	var at time.Time
	for _, e := range m.endpoints {
		if e.stopped() {
			if end := e.stopTime.Add(EndpointStopGracePeriod); at.IsZero() || end.Before(at) {
				at = end
			}
		}
	}
	return at, !at.IsZero()
}
