package replay

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/world"
)

// The plugin steps: plugins come and go in the registry and fail on cue (plugins.go simulates
// them); only a single node runs the plugin pipeline. expectNode reads the node object the
// device plugins change.

// CreatePluginSocket makes a plugin appear: its registration socket is created in
// plugins_registry and the plugin answers GetInfo with Type, PluginName, Endpoint and Versions.
// A DevicePlugin offers Devices healthy devices named <resource base name>-<i>; a CSIPlugin
// answers NodeGetInfo with NodeID, MaxVolumesPerNode and AccessibleTopology (the segments the
// kubelet writes as node labels and CSINode topology keys); a DRAPlugin serves its DRA service on
// Endpoint (or its registration socket) until its socket is removed, and with Devices, publishes
// one ResourceSlice of that many devices (device-<i>) for the node through the API server, as a
// DRA driver's kubelet plugin does when it starts.
type CreatePluginSocket struct {
	Name               string            `json:"name"`
	Type               string            `json:"type"`
	PluginName         string            `json:"pluginName"`
	Endpoint           string            `json:"endpoint,omitempty"`
	Versions           []string          `json:"versions"`
	Devices            int               `json:"devices,omitempty"`
	NodeID             string            `json:"nodeID,omitempty"`
	MaxVolumesPerNode  int64             `json:"maxVolumesPerNode,omitempty"`
	AccessibleTopology map[string]string `json:"accessibleTopology,omitempty"`
}

// RemovePluginSocket removes a registration socket, as a plugin does when it stops.
type RemovePluginSocket struct {
	Name string `json:"name"`
}

// DeviceHealth changes one device's health; the plugin sends its new device list at once.
type DeviceHealth struct {
	Resource string `json:"resource"`
	Device   string `json:"device"`
	Healthy  bool   `json:"healthy"`
}

// PluginFails makes the next Times calls of Call to the plugin behind socket Name fail.
type PluginFails struct {
	Name  string `json:"name"`
	Call  string `json:"call"`
	Times int    `json:"times"`
}

// ExpectPlugin asserts whether the socket Name is registered (in the plugin manager's actual
// state of the world).
type ExpectPlugin struct {
	Name       string `json:"name"`
	Registered bool   `json:"registered"`
}

// ExpectNode asserts the node object's capacity and allocatable for one resource, as kubectl
// would show them; -1 means the resource is absent.
type ExpectNode struct {
	Resource    string `json:"resource"`
	Capacity    *int64 `json:"capacity,omitempty"`
	Allocatable *int64 `json:"allocatable,omitempty"`
}

// PluginsRegistryPath is the plugin registry directory of every replay, the kubelet's default.
// It is virtual: replay keeps its sockets in memory (package world).
const PluginsRegistryPath = "/var/lib/kubelet/plugins_registry"

// The calls pluginFails may name.
var pluginCalls = world.Calls

// The kinds of this file and what they declare.
var (
	_ change      = (*CreatePluginSocket)(nil)
	_ change      = (*RemovePluginSocket)(nil)
	_ change      = (*DeviceHealth)(nil)
	_ change      = (*PluginFails)(nil)
	_ expectation = (*ExpectPlugin)(nil)
	_ expectation = (*ExpectNode)(nil)
	_ pluginUser  = (*CreatePluginSocket)(nil)
	_ pluginUser  = (*RemovePluginSocket)(nil)
	_ pluginUser  = (*DeviceHealth)(nil)
	_ pluginUser  = (*PluginFails)(nil)
	_ pluginUser  = (*ExpectPlugin)(nil)
	_ sourceUser  = (*CreatePluginSocket)(nil)
	_ sourceUser  = (*ExpectNode)(nil)
)

func (*CreatePluginSocket) usesPlugins() {}
func (*RemovePluginSocket) usesPlugins() {}
func (*DeviceHealth) usesPlugins()       {}
func (*PluginFails) usesPlugins()        {}
func (*ExpectPlugin) usesPlugins()       {}

// source: a CSI driver's registration records the driver on the Node and its CSINode through
// the API server, and a DRA driver with devices publishes them there.
func (c *CreatePluginSocket) source() string {
	if c.Type == registerapi.CSIPlugin || c.Type == registerapi.DRAPlugin && c.Devices > 0 {
		return podconfig.APISource
	}
	return ""
}

func (*ExpectNode) source() string { return podconfig.APISource }

func (c *CreatePluginSocket) validate() error {
	errs := []error{socketName(c.Name), required("pluginName", c.PluginName)}
	switch c.Type {
	case registerapi.DevicePlugin:
		switch {
		case c.Devices < 0:
			errs = append(errs, errors.New("devices must not be negative"))
		case c.Devices > MaxPluginDevices:
			errs = append(errs, fmt.Errorf("devices %d: a simulated device plugin offers at most %d", c.Devices, MaxPluginDevices))
		}
	case registerapi.CSIPlugin:
		errs = append(errs, validateTopology(c.AccessibleTopology))
	case registerapi.DRAPlugin:
		switch {
		case c.Devices < 0:
			errs = append(errs, errors.New("devices must not be negative"))
		case c.Devices > MaxDRADevices:
			errs = append(errs, fmt.Errorf("devices %d: a ResourceSlice holds at most %d", c.Devices, MaxDRADevices))
		}
		if c.NodeID != "" || c.MaxVolumesPerNode != 0 || c.AccessibleTopology != nil {
			errs = append(errs, errors.New("nodeID, maxVolumesPerNode and accessibleTopology are a CSIPlugin's"))
		}
	default:
		errs = append(errs, fmt.Errorf("type %q: want %s, %s or %s", c.Type, registerapi.DevicePlugin, registerapi.CSIPlugin, registerapi.DRAPlugin))
	}
	return errors.Join(errs...)
}

// validateTopology checks a CSI driver's topology segments as the node labels they become: each
// key a qualified name and each value a label value, or the kubelet's patch would be refused.
func validateTopology(segments map[string]string) error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(segments)) {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, fmt.Errorf("accessibleTopology key %q: %s", k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(segments[k]) {
			errs = append(errs, fmt.Errorf("accessibleTopology[%q] %q: %s", k, segments[k], msg))
		}
	}
	return errors.Join(errs...)
}

func (r *RemovePluginSocket) validate() error { return socketName(r.Name) }

func (d *DeviceHealth) validate() error {
	return errors.Join(required("resource", d.Resource), required("device", d.Device))
}

func (f *PluginFails) validate() error {
	errs := []error{socketName(f.Name)}
	if !slices.Contains(pluginCalls, f.Call) {
		errs = append(errs, fmt.Errorf("call %q: want one of %s", f.Call, strings.Join(pluginCalls, ", ")))
	}
	if f.Times <= 0 {
		errs = append(errs, errors.New("pluginFails.times must be positive"))
	}
	return errors.Join(errs...)
}

func (x *ExpectPlugin) validate() error { return socketName(x.Name) }

func (x *ExpectNode) validate() error {
	var err error
	if x.Capacity == nil && x.Allocatable == nil {
		err = errors.New("expectNode checks nothing: give capacity or allocatable")
	}
	return errors.Join(required("resource", x.Resource), err)
}

// apply starts the plugin and hands the kubelet's watcher the socket's create event.
func (c *CreatePluginSocket) apply(ctx context.Context, e *engine, n *node) {
	e.stepEvent(trace.KindCreatePluginSocket, "", fmt.Sprintf("%s type=%s name=%s versions=%v", socketPath(c.Name), c.Type, c.PluginName, c.Versions))
	sock := n.plugins.Create(c.Name, world.PluginSpec{Type: c.Type, Name: c.PluginName, Endpoint: c.Endpoint, Versions: c.Versions, Devices: c.Devices,
		NodeID: c.NodeID, MaxVolumesPerNode: c.MaxVolumesPerNode, AccessibleTopology: c.AccessibleTopology})
	if c.Type == registerapi.DRAPlugin && c.Devices > 0 {
		if err := e.publishSlice(ctx, n.name, c.PluginName, c.Devices); err != nil {
			e.stepError(trace.KindCreatePluginSocket, err)
		}
	}
	if err := n.kubelet.Plugins.SocketCreated(sock); err != nil {
		e.stepError(trace.KindCreatePluginSocket, err)
	}
}

// MaxDRADevices is how many devices a simulated DRA driver may publish: one ResourceSlice's.
const MaxDRADevices = 128

// publishSlice creates the driver's ResourceSlice of the node, as the ResourceSlice controller of
// a driver's kubelet plugin does: a pool named after the node, in one slice whose name the API
// server generates from <node>-<driver>-.
func (e *engine) publishSlice(ctx context.Context, nodeName, driver string, devices int) error {
	slice := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{GenerateName: nodeName + "-" + driver + "-"},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   driver,
			Pool:     resourcev1.ResourcePool{Name: nodeName, Generation: 1, ResourceSliceCount: 1},
			NodeName: &nodeName,
		},
	}
	for i := range devices {
		slice.Spec.Devices = append(slice.Spec.Devices, resourcev1.Device{Name: "device-" + strconv.Itoa(i)})
	}
	if _, err := e.client.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("publish the ResourceSlice of driver %s: %w", driver, err)
	}
	return nil
}

// apply stops the plugin and hands the kubelet's watcher the socket's remove event.
func (r *RemovePluginSocket) apply(_ context.Context, e *engine, n *node) {
	e.stepEvent(trace.KindRemovePluginSocket, "", socketPath(r.Name))
	sock, err := n.plugins.Remove(r.Name)
	if err != nil {
		e.stepError(trace.KindRemovePluginSocket, err)
		return
	}
	n.kubelet.Plugins.SocketRemoved(sock)
}

func (d *DeviceHealth) apply(_ context.Context, e *engine, n *node) {
	e.stepEvent(trace.KindDeviceHealth, "", fmt.Sprintf("%s %s healthy=%v", d.Resource, d.Device, d.Healthy))
	if err := n.plugins.SetHealth(d.Resource, d.Device, d.Healthy); err != nil {
		e.stepError(trace.KindDeviceHealth, err)
	}
}

func (f *PluginFails) apply(_ context.Context, e *engine, n *node) {
	e.stepEvent(trace.KindPluginFails, "", fmt.Sprintf("the next %d %s calls to %s fail", f.Times, f.Call, socketPath(f.Name)))
	if err := n.plugins.FailNext(f.Name, f.Call, f.Times); err != nil {
		e.stepError(trace.KindPluginFails, err)
	}
}

// judge reads the plugin manager's actual state.
func (x *ExpectPlugin) judge(_ context.Context, _ *engine, n *node) Outcome {
	o := Outcome{What: x.describe()}
	got := false
	for _, p := range n.kubelet.Plugins.Manager.Actual().GetRegisteredPlugins() {
		if p.SocketPath == socketPath(x.Name) {
			got = true
		}
	}
	o.Met = got == x.Registered
	if !o.Met {
		o.Seen = fmt.Sprintf("registered=%v", got)
	}
	return o
}

func (x *ExpectPlugin) describe() string {
	return fmt.Sprintf("expectPlugin %s registered=%v", x.Name, x.Registered)
}

// judge reads the node object in the API server.
func (x *ExpectNode) judge(ctx context.Context, e *engine, n *node) Outcome {
	var o Outcome
	var what, seen []string
	obj, err := e.client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
	value := func(l v1.ResourceList) int64 {
		if obj == nil {
			return -1
		}
		q, ok := l[v1.ResourceName(x.Resource)]
		if !ok {
			return -1
		}
		return q.Value()
	}
	o.Met = err == nil
	if x.Capacity != nil {
		what = append(what, "capacity="+strconv.FormatInt(*x.Capacity, 10))
		got := value(obj.Status.Capacity)
		seen = append(seen, "capacity="+strconv.FormatInt(got, 10))
		o.Met = o.Met && got == *x.Capacity
	}
	if x.Allocatable != nil {
		what = append(what, "allocatable="+strconv.FormatInt(*x.Allocatable, 10))
		got := value(obj.Status.Allocatable)
		seen = append(seen, "allocatable="+strconv.FormatInt(got, 10))
		o.Met = o.Met && got == *x.Allocatable
	}
	o.What = "expectNode " + x.Resource + " " + strings.Join(what, " ")
	if !o.Met {
		o.Seen = strings.Join(seen, " ")
		if err != nil {
			o.Seen = err.Error()
		}
	}
	return o
}

func (x *ExpectNode) describe() string { return "expectNode " + x.Resource }

func socketPath(name string) string { return path.Join(PluginsRegistryPath, name) }

func socketName(name string) error {
	if name == "" || path.IsAbs(name) || path.Clean(name) != name || strings.HasPrefix(name, "..") {
		return fmt.Errorf("socket name %q must be a relative path inside plugins_registry", name)
	}
	return nil
}
