package replay

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/plugins/csiplugin"
	"github.com/minikubelet/minikubelet/plugins/devicemanager"
	"github.com/minikubelet/minikubelet/plugins/pluginmanager"
	"github.com/minikubelet/minikubelet/plugins/pluginwatcher"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// PluginsRegistryPath is the plugin registry directory of every replay, the kubelet's default.
// It is virtual: replay keeps its sockets in memory.
const PluginsRegistryPath = "/var/lib/kubelet/plugins_registry"

// simPlugin is one simulated plugin: its registration answers and, for a device plugin, its
// devices.
type simPlugin struct {
	info    *registerapi.PluginInfo
	devices []*pluginapi.Device
	csi     csiplugin.NodeInfo
	fails   map[string]int
}

// fail consumes one scripted failure of call.
func (p *simPlugin) fail(call string) error {
	if p.fails[call] == 0 {
		return nil
	}
	p.fails[call]--
	return fmt.Errorf("%s: scripted failure", call)
}

// pluginWorld is the plugin registration pipeline of a replay: the watcher over an in-memory
// registry, the plugin manager, the device manager and the CSI handler, with simulated plugins
// behind the sockets. Operations run at once, after the reconciler pass that started them.
type pluginWorld struct {
	sockets  map[string]*simPlugin // registration socket path → plugin
	watcher  *pluginwatcher.Watcher
	pm       *pluginmanager.Manager
	dm       *devicemanager.Manager
	tracer   trace.Tracer
	stepFail func(trace.Kind, error)
}

func newPluginWorld(clk clock.PassiveClock, tracer trace.Tracer, client kubernetes.Interface, node string) (*pluginWorld, error) {
	w := &pluginWorld{sockets: map[string]*simPlugin{}, tracer: tracer}
	n := 0
	var err error
	if w.pm, err = pluginmanager.New(pluginmanager.Options{Clock: clk, Tracer: tracer, NewID: func() string { n++; return "id-" + strconv.Itoa(n) }}); err != nil {
		return nil, err
	}
	if w.dm, err = devicemanager.New(devicemanager.Options{Clock: clk, Tracer: tracer, Checkpoint: &memCheckpoint{}}); err != nil {
		return nil, err
	}
	w.pm.AddHandler(registerapi.DevicePlugin, simDeviceHandler{w})
	if client != nil {
		csi, err := csiplugin.New(csiplugin.Options{Nodes: csiplugin.APINodeInfo{Client: client, NodeName: node}, Driver: simCSIDriver{w}, Tracer: tracer})
		if err != nil {
			return nil, err
		}
		w.pm.AddHandler(registerapi.CSIPlugin, csi)
	}
	if w.watcher, err = pluginwatcher.New(pluginwatcher.Options{Dir: PluginsRegistryPath, FS: memSockets{w}, Desired: w.pm.Desired(), Tracer: tracer}); err != nil {
		return nil, err
	}
	if err := w.watcher.Start(noWatches{}); err != nil {
		return nil, err
	}
	return w, nil
}

// advance runs a reconciler pass when one is due and every operation it starts; it reports
// whether a pass ran.
func (w *pluginWorld) advance(ctx context.Context, now time.Time) bool {
	if at, _ := w.pm.NextWake(); !at.IsZero() && at.After(now) {
		return false
	}
	env := pluginmanager.Env{Dialer: simDialer{w}, Books: w.pm.Actual(), Tracer: w.tracer}
	for _, op := range w.pm.Reconcile() {
		w.pm.Finish(op, pluginmanager.RunOperation(ctx, op, env))
	}
	return true
}

func (w *pluginWorld) nextWake() time.Time {
	at, _ := w.pm.NextWake()
	return at
}

func socketPath(name string) string { return path.Join(PluginsRegistryPath, name) }

func (w *pluginWorld) create(c *CreatePluginSocket) {
	p := &simPlugin{
		info:  &registerapi.PluginInfo{Type: c.Type, Name: c.PluginName, Endpoint: c.Endpoint, SupportedVersions: c.Versions},
		fails: map[string]int{},
		csi:   csiplugin.NodeInfo{NodeID: c.NodeID, MaxVolumesPerNode: c.MaxVolumesPerNode},
	}
	base := c.PluginName[strings.LastIndex(c.PluginName, "/")+1:]
	for i := range c.Devices {
		p.devices = append(p.devices, &pluginapi.Device{ID: base + "-" + strconv.Itoa(i), Health: pluginapi.Healthy})
	}
	sock := socketPath(c.Name)
	w.sockets[sock] = p
	if err := w.watcher.Create(sock, noWatches{}); err != nil {
		w.stepFail(trace.KindCreatePluginSocket, err)
	}
}

func (w *pluginWorld) remove(name string) {
	sock := socketPath(name)
	if _, ok := w.sockets[sock]; !ok {
		w.stepFail(trace.KindRemovePluginSocket, fmt.Errorf("%s: no such socket", sock))
		return
	}
	delete(w.sockets, sock)
	w.watcher.Remove(sock)
}

// byEndpoint finds the plugin serving endpoint: its own service endpoint, or its registration
// socket when it gave none.
func (w *pluginWorld) byEndpoint(endpoint string) (*simPlugin, bool) {
	if p, ok := w.sockets[endpoint]; ok {
		return p, true
	}
	for _, sock := range sortedKeys(w.sockets) {
		if p := w.sockets[sock]; p.info.Endpoint == endpoint {
			return p, true
		}
	}
	return nil, false
}

func (w *pluginWorld) deviceHealth(d *DeviceHealth) {
	for _, sock := range sortedKeys(w.sockets) {
		p := w.sockets[sock]
		if p.info.Type != registerapi.DevicePlugin || p.info.Name != d.Resource {
			continue
		}
		for _, dev := range p.devices {
			if dev.ID == d.Device {
				dev.Health = pluginapi.Unhealthy
				if d.Healthy {
					dev.Health = pluginapi.Healthy
				}
				// A connected plugin sends its whole list again on ListAndWatch.
				if w.connected(d.Resource, sock) {
					w.dm.Update(d.Resource, clone(p.devices))
				}
				return
			}
		}
	}
	w.stepFail(trace.KindDeviceHealth, fmt.Errorf("no plugin offers device %s of %s", d.Device, d.Resource))
}

// connected reports whether the plugin at sock is registered for res.
func (w *pluginWorld) connected(res, sock string) bool {
	for _, reg := range w.pm.Actual().GetRegisteredPlugins() {
		if reg.SocketPath == sock && reg.Name == res {
			return true
		}
	}
	return false
}

func (w *pluginWorld) fails(f *PluginFails) {
	p, ok := w.sockets[socketPath(f.Name)]
	if !ok {
		w.stepFail(trace.KindPluginFails, fmt.Errorf("%s: no such socket", socketPath(f.Name)))
		return
	}
	p.fails[f.Call] += f.Times
}

func clone(devs []*pluginapi.Device) []*pluginapi.Device {
	out := make([]*pluginapi.Device, len(devs))
	for i, d := range devs {
		out[i] = &pluginapi.Device{ID: d.ID, Health: d.Health}
	}
	return out
}

func sortedKeys(m map[string]*simPlugin) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// simDialer connects the plugin manager to the simulated registration sockets.
type simDialer struct{ w *pluginWorld }

func (d simDialer) Dial(_ context.Context, sock string) (pluginmanager.Client, error) {
	p, ok := d.w.sockets[sock]
	if !ok {
		return nil, fmt.Errorf("dial unix %s: connect: no such file or directory", sock)
	}
	if err := p.fail("Dial"); err != nil {
		return nil, err
	}
	return simClient{p}, nil
}

type simClient struct{ p *simPlugin }

func (c simClient) GetInfo(context.Context) (*registerapi.PluginInfo, error) {
	if err := c.p.fail("GetInfo"); err != nil {
		return nil, err
	}
	return &registerapi.PluginInfo{Type: c.p.info.Type, Name: c.p.info.Name, Endpoint: c.p.info.Endpoint, SupportedVersions: c.p.info.SupportedVersions}, nil
}

func (c simClient) NotifyRegistrationStatus(context.Context, *registerapi.RegistrationStatus) error {
	return c.p.fail("NotifyRegistrationStatus")
}

func (simClient) Close() error { return nil }

// simDeviceHandler is the device manager's DevicePlugin handler with the plugin in process: it
// connects the plugin and hands its first ListAndWatch message to the device manager at once.
type simDeviceHandler struct{ w *pluginWorld }

func (h simDeviceHandler) ValidatePlugin(name, _ string, versions []string) error {
	return devicemanager.ValidatePlugin(name, versions)
}

func (h simDeviceHandler) RegisterPlugin(name, endpoint string, _ []string, _ *time.Duration) error {
	p, ok := h.w.byEndpoint(endpoint)
	if !ok {
		return fmt.Errorf("failed to dial device plugin: dial unix %s: connect: no such file or directory", endpoint)
	}
	if err := p.fail("GetDevicePluginOptions"); err != nil {
		return fmt.Errorf("failed to get device plugin options: %w", err)
	}
	h.w.dm.PluginConnected(name, endpoint, simDevicePlugin{}, &pluginapi.DevicePluginOptions{})
	h.w.dm.Update(name, clone(p.devices))
	return nil
}

func (h simDeviceHandler) DeRegisterPlugin(name, endpoint string) {
	h.w.dm.PluginDisconnected(name, endpoint)
}

// simDevicePlugin allocates whatever the device manager picked.
type simDevicePlugin struct{}

func (simDevicePlugin) Allocate(_ context.Context, r *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{}
	for range r.ContainerRequests {
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerAllocateResponse{})
	}
	return resp, nil
}

func (simDevicePlugin) GetPreferredAllocation(context.Context, *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	return nil, errors.New("GetPreferredAllocation is not offered")
}

// simCSIDriver answers NodeGetInfo for the simulated CSI drivers.
type simCSIDriver struct{ w *pluginWorld }

func (d simCSIDriver) NodeGetInfo(_ context.Context, endpoint string) (csiplugin.NodeInfo, error) {
	p, ok := d.w.byEndpoint(endpoint)
	if !ok {
		return csiplugin.NodeInfo{}, fmt.Errorf("dial unix %s: connect: no such file or directory", endpoint)
	}
	if err := p.fail("NodeGetInfo"); err != nil {
		return csiplugin.NodeInfo{}, err
	}
	return p.csi, nil
}

// memCheckpoint keeps the device manager's checkpoint in memory.
type memCheckpoint struct{ data []byte }

func (c *memCheckpoint) Write(b []byte) error  { c.data = append([]byte(nil), b...); return nil }
func (c *memCheckpoint) Read() ([]byte, error) { return c.data, nil }

// memSockets is the registry directory as the watcher sees it: the registry, and the sockets
// of the simulated plugins.
type memSockets struct{ w *pluginWorld }

func (memSockets) MkdirAll(string, fs.FileMode) error { return nil }

func (m memSockets) Stat(p string) (fs.FileInfo, error) {
	if p == PluginsRegistryPath {
		return memInfo{name: path.Base(p), dir: true}, nil
	}
	if _, ok := m.w.sockets[p]; ok {
		return socketInfo{memInfo{name: path.Base(p)}}, nil
	}
	return nil, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
}

// WalkDir visits the registry alone: a replay starts with no sockets.
func (m memSockets) WalkDir(root string, fn fs.WalkDirFunc) error {
	info, err := m.Stat(root)
	if err != nil {
		return fn(root, nil, err)
	}
	return fn(root, fs.FileInfoToDirEntry(info), nil)
}

type socketInfo struct{ memInfo }

func (socketInfo) Mode() fs.FileMode { return fs.ModeSocket | 0o600 }

type noWatches struct{}

func (noWatches) Add(string) error { return nil }
