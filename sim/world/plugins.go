package world

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/minikubelet/minikubelet/plugins/csiplugin"
	"github.com/minikubelet/minikubelet/plugins/devicemanager"
	"github.com/minikubelet/minikubelet/plugins/draplugin"
	"github.com/minikubelet/minikubelet/plugins/pluginmanager"
	"github.com/minikubelet/minikubelet/plugins/pluginwatcher"
)

// Plugins is the plugin registry of a replayed node and the plugins behind its sockets, in
// memory: the registry as the plugin watcher reads it, the registration sockets the plugin
// manager dials, the device plugins' endpoints the device manager connects to, the CSI drivers'
// NodeGetInfo, the DRA drivers' service the DRA handler connects to, and the device manager's
// checkpoint. Calls to a plugin answer at once; each can be
// scripted to fail. A kubelet restart keeps all of it, as the machine does: the sockets are still
// there for the new kubelet's watcher to find, and the checkpoint for its device manager to read.
type Plugins struct {
	registry string
	sockets  map[string]*plugin // registration socket path → plugin
	// checkpoint is the device manager's checkpoint file.
	checkpoint Checkpoint
	ids        int
	// dra are the DRA handler's open connections, oldest first.
	dra []*draConn
}

// PluginSpec is what a simulated plugin answers.
type PluginSpec struct {
	// Type, Name, Endpoint and Versions are its GetInfo answer.
	Type     string
	Name     string
	Endpoint string
	Versions []string
	// Devices is how many healthy devices a device plugin offers, named <resource base name>-<i>.
	Devices int
	// NodeID, MaxVolumesPerNode and AccessibleTopology are a CSI driver's NodeGetInfo answer.
	NodeID             string
	MaxVolumesPerNode  int64
	AccessibleTopology map[string]string
}

// plugin is one simulated plugin and its connections from the device manager.
type plugin struct {
	spec    PluginSpec
	sock    string // its registration socket's path
	devices []*pluginapi.Device
	fails   map[string]int
	conns   []*deviceConn // open connections, oldest first
}

// Calls are the calls to a plugin that FailNext can script.
var Calls = []string{"Dial", "GetInfo", "NotifyRegistrationStatus", "GetDevicePluginOptions", "NodeGetInfo"}

// NewPlugins returns an empty registry at the path registry.
func NewPlugins(registry string) *Plugins {
	return &Plugins{registry: registry, sockets: map[string]*plugin{}}
}

// Registry is the registry's path.
func (w *Plugins) Registry() string { return w.registry }

// SocketPath is the path of a socket name in the registry.
func (w *Plugins) SocketPath(name string) string { return path.Join(w.registry, name) }

// Checkpoint is the device manager's checkpoint store.
func (w *Plugins) Checkpoint() *Checkpoint { return &w.checkpoint }

// NewID names a socket the watcher found: a counter, so that a replay's trace is the same on
// every run. It counts across kubelet restarts.
func (w *Plugins) NewID() string {
	w.ids++
	return "id-" + strconv.Itoa(w.ids)
}

// Create starts a plugin whose registration socket is name, and returns the socket's path for the
// watcher's create event. A plugin already on that socket is replaced.
func (w *Plugins) Create(name string, spec PluginSpec) string {
	p := &plugin{spec: spec, fails: map[string]int{}}
	base := spec.Name[strings.LastIndex(spec.Name, "/")+1:]
	for i := range spec.Devices {
		p.devices = append(p.devices, &pluginapi.Device{ID: base + "-" + strconv.Itoa(i), Health: pluginapi.Healthy})
	}
	sock := w.SocketPath(name)
	p.sock = sock
	w.sockets[sock] = p
	// A DRA handler's connection to the endpoint the new plugin serves comes up, as gRPC
	// reconnects to a plugin that is back.
	w.draReport(p, true)
	return sock
}

// Remove stops the plugin on socket name and removes the socket; it returns the socket's path
// for the watcher's remove event.
func (w *Plugins) Remove(name string) (string, error) {
	sock := w.SocketPath(name)
	if _, ok := w.sockets[sock]; !ok {
		return "", fmt.Errorf("%s: no such socket", sock)
	}
	p := w.sockets[sock]
	delete(w.sockets, sock)
	// The plugin stops serving: the DRA handler's connections to it go down at once, before the
	// watcher sees the socket go.
	w.draReport(p, false)
	return sock, nil
}

// FailNext makes the next times calls of call to the plugin on socket name fail.
func (w *Plugins) FailNext(name, call string, times int) error {
	p, ok := w.sockets[w.SocketPath(name)]
	if !ok {
		return fmt.Errorf("%s: no such socket", w.SocketPath(name))
	}
	p.fails[call] += times
	return nil
}

// SetHealth changes one device's health; a device plugin with an open connection sends its whole
// device list again on ListAndWatch.
func (w *Plugins) SetHealth(resource, device string, healthy bool) error {
	for _, sock := range w.sortedSockets() {
		p := w.sockets[sock]
		if p.spec.Type != registerapi.DevicePlugin || p.spec.Name != resource {
			continue
		}
		for _, dev := range p.devices {
			if dev.ID != device {
				continue
			}
			dev.Health = pluginapi.Unhealthy
			if healthy {
				dev.Health = pluginapi.Healthy
			}
			for _, c := range p.conns {
				c.send()
			}
			return nil
		}
	}
	return fmt.Errorf("no plugin offers device %s of %s", device, resource)
}

// KubeletStopped ends every connection of the stopped kubelet process, as its sockets close with
// it: no stream says more, and no end is reported to a process that is gone.
func (w *Plugins) KubeletStopped() {
	for _, p := range w.sockets {
		for _, c := range p.conns {
			c.closed = true
		}
		p.conns = nil
	}
	for _, c := range w.dra {
		c.closed = true
	}
	w.dra = nil
}

// fail consumes one scripted failure of call.
func (p *plugin) fail(call string) error {
	if p.fails[call] == 0 {
		return nil
	}
	p.fails[call]--
	return fmt.Errorf("%s: scripted failure", call)
}

// byEndpoint finds the plugin serving endpoint: its own service endpoint, or its registration
// socket when it gave none.
func (w *Plugins) byEndpoint(endpoint string) (*plugin, bool) {
	if p, ok := w.sockets[endpoint]; ok {
		return p, true
	}
	for _, sock := range w.sortedSockets() {
		if p := w.sockets[sock]; p.spec.Endpoint == endpoint {
			return p, true
		}
	}
	return nil, false
}

func (w *Plugins) sortedSockets() []string {
	keys := make([]string, 0, len(w.sockets))
	for k := range w.sockets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Dial connects the plugin manager to a registration socket.
func (w *Plugins) Dial(_ context.Context, sock string) (pluginmanager.Client, error) {
	p, ok := w.sockets[sock]
	if !ok {
		return nil, fmt.Errorf("dial unix %s: connect: no such file or directory", sock)
	}
	if err := p.fail("Dial"); err != nil {
		return nil, err
	}
	return registration{p}, nil
}

// registration is a plugin's Registration service.
type registration struct{ p *plugin }

func (c registration) GetInfo(context.Context) (*registerapi.PluginInfo, error) {
	if err := c.p.fail("GetInfo"); err != nil {
		return nil, err
	}
	s := c.p.spec
	return &registerapi.PluginInfo{Type: s.Type, Name: s.Name, Endpoint: s.Endpoint, SupportedVersions: s.Versions}, nil
}

func (c registration) NotifyRegistrationStatus(context.Context, *registerapi.RegistrationStatus) error {
	return c.p.fail("NotifyRegistrationStatus")
}

func (registration) Close() error { return nil }

// Connect connects the device manager to a device plugin's endpoint.
func (w *Plugins) Connect(_ context.Context, endpoint string) (devicemanager.Conn, error) {
	p, ok := w.byEndpoint(endpoint)
	if !ok {
		return nil, fmt.Errorf("dial unix %s: connect: no such file or directory", endpoint)
	}
	return &deviceConn{p: p}, nil
}

// deviceConn is one connection of the device manager to a device plugin.
type deviceConn struct {
	p      *plugin
	stream devicemanager.Stream
	closed bool
}

func (c *deviceConn) GetDevicePluginOptions(context.Context) (*pluginapi.DevicePluginOptions, error) {
	if err := c.p.fail("GetDevicePluginOptions"); err != nil {
		return nil, err
	}
	return &pluginapi.DevicePluginOptions{}, nil
}

// ListAndWatch sends the device list at once, and again at every health change.
func (c *deviceConn) ListAndWatch(s devicemanager.Stream) {
	if c.closed {
		return
	}
	c.stream = s
	c.p.conns = append(c.p.conns, c)
	c.send()
}

func (c *deviceConn) send() {
	devs := make([]*pluginapi.Device, len(c.p.devices))
	for i, d := range c.p.devices {
		devs[i] = &pluginapi.Device{ID: d.ID, Health: d.Health}
	}
	c.stream.Update(devs)
}

// Allocate allocates whatever the device manager picked.
func (c *deviceConn) Allocate(_ context.Context, r *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{}
	for range r.ContainerRequests {
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerAllocateResponse{})
	}
	return resp, nil
}

func (*deviceConn) GetPreferredAllocation(context.Context, *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	return nil, errors.New("GetPreferredAllocation is not offered")
}

// Close ends the connection; its stream says nothing more.
func (c *deviceConn) Close() error {
	c.closed = true
	c.p.conns = slices.DeleteFunc(c.p.conns, func(o *deviceConn) bool { return o == c })
	return nil
}

// NodeGetInfo answers a CSI driver's NodeGetInfo.
func (w *Plugins) NodeGetInfo(_ context.Context, endpoint string) (csiplugin.NodeInfo, error) {
	p, ok := w.byEndpoint(endpoint)
	if !ok {
		return csiplugin.NodeInfo{}, fmt.Errorf("dial unix %s: connect: no such file or directory", endpoint)
	}
	if err := p.fail("NodeGetInfo"); err != nil {
		return csiplugin.NodeInfo{}, err
	}
	return csiplugin.NodeInfo{NodeID: p.spec.NodeID, MaxVolumesPerNode: p.spec.MaxVolumesPerNode, Topology: maps.Clone(p.spec.AccessibleTopology)}, nil
}

// DRA is the DRA handler's Connector: connections to the endpoint a DRA plugin gave (or its
// registration socket), up while a plugin serves it.
func (w *Plugins) DRA() draplugin.Connector { return draConnector{w} }

type draConnector struct{ w *Plugins }

// Connect makes a connection that connects once started; like grpc.NewClient, it does not
// fail for a target nobody serves yet.
func (d draConnector) Connect(endpoint string, watch func(bool)) (draplugin.Conn, error) {
	return &draConn{w: d.w, endpoint: endpoint, watch: watch}, nil
}

// draConn is one connection of the DRA handler, which reports its state changes at once.
type draConn struct {
	w        *Plugins
	endpoint string
	watch    func(bool)
	up       bool
	closed   bool
}

// Start connects: up at once when a plugin serves the endpoint; otherwise it stays down until one
// does.
func (c *draConn) Start() {
	if c.closed || slices.Contains(c.w.dra, c) {
		return
	}
	c.w.dra = append(c.w.dra, c)
	if _, ok := c.w.byEndpoint(c.endpoint); ok {
		c.set(true)
	}
}

// Close ends the connection: one that was up reports that it went down.
func (c *draConn) Close() error {
	if c.closed {
		return nil
	}
	c.w.dra = slices.DeleteFunc(c.w.dra, func(o *draConn) bool { return o == c })
	c.set(false)
	c.closed = true
	return nil
}

func (c *draConn) set(up bool) {
	if c.up != up && !c.closed {
		c.up = up
		c.watch(up)
	}
}

// draReport brings the connections to the endpoint p serves up or down, oldest first. A plugin's
// endpoint is its own service endpoint, or its registration socket when it gave none.
func (w *Plugins) draReport(p *plugin, up bool) {
	if p == nil || p.spec.Type != registerapi.DRAPlugin {
		return
	}
	endpoint := p.spec.Endpoint
	if endpoint == "" {
		endpoint = p.sock
	}
	for _, c := range slices.Clone(w.dra) {
		if c.endpoint == endpoint {
			c.set(up)
		}
	}
}

// The registry as the watcher reads it: the registry directory, the directories the sockets'
// paths imply, and the sockets.

// MkdirAll does nothing: the registry and its directories exist.
func (*Plugins) MkdirAll(string, fs.FileMode) error { return nil }

// Stat describes the registry, a directory in it or a socket.
func (w *Plugins) Stat(p string) (fs.FileInfo, error) {
	if _, ok := w.sockets[p]; ok {
		return fileInfo{name: path.Base(p), mode: fs.ModeSocket | 0o600}, nil
	}
	if p == w.registry || w.isDir(p) {
		return fileInfo{name: path.Base(p), mode: fs.ModeDir | 0o755}, nil
	}
	return nil, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
}

// isDir reports whether some socket lies below p.
func (w *Plugins) isDir(p string) bool {
	for sock := range w.sockets {
		if strings.HasPrefix(sock, p+"/") {
			return true
		}
	}
	return false
}

// WalkDir visits root and everything below it in lexical order, as filepath.WalkDir does: a
// kubelet started over a registry that has sockets finds them in its first traversal.
func (w *Plugins) WalkDir(root string, fn fs.WalkDirFunc) error {
	info, err := w.Stat(root)
	if err != nil {
		return fn(root, nil, err)
	}
	if err := fn(root, fs.FileInfoToDirEntry(info), nil); err != nil || !info.IsDir() {
		if errors.Is(err, fs.SkipDir) {
			return nil
		}
		return err
	}
	// Every path below root, each directory once, sorted: a directory sorts before what it
	// holds, as the walk visits it.
	seen := map[string]bool{}
	var paths []string
	for sock := range w.sockets {
		if !strings.HasPrefix(sock, root+"/") {
			continue
		}
		for p := sock; p != root; p = path.Dir(p) {
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	slices.Sort(paths)
	var skipped []string
	for _, p := range paths {
		if slices.ContainsFunc(skipped, func(d string) bool { return strings.HasPrefix(p, d+"/") }) {
			continue
		}
		info, err := w.Stat(p)
		if err != nil {
			return err
		}
		if err := fn(p, fs.FileInfoToDirEntry(info), nil); err != nil {
			if errors.Is(err, fs.SkipDir) && info.IsDir() {
				skipped = append(skipped, p)
				continue
			}
			if errors.Is(err, fs.SkipAll) {
				return nil
			}
			return err
		}
	}
	return nil
}

// Checkpoint is a checkpoint file in memory (the device manager's, the allocation manager's); a
// missing one reads as nil.
type Checkpoint struct{ data []byte }

// Write replaces the file.
func (c *Checkpoint) Write(b []byte) error { c.data = append([]byte(nil), b...); return nil }

// Read returns the file's bytes.
func (c *Checkpoint) Read() ([]byte, error) { return c.data, nil }

// The seams the plugin pipeline's cores declare.
var (
	_ pluginwatcher.FS           = (*Plugins)(nil)
	_ pluginmanager.Dialer       = (*Plugins)(nil)
	_ devicemanager.Connector    = (*Plugins)(nil)
	_ csiplugin.NodeInfoGetter   = (*Plugins)(nil)
	_ devicemanager.Checkpointer = (*Checkpoint)(nil)
	_ devicemanager.Conn         = (*deviceConn)(nil)
	_ pluginmanager.Client       = registration{}
)
