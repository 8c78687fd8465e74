package kubelet

import (
	"context"
	"math/rand/v2"
	"time"

	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/minikubelet/minikubelet/plugins/csiplugin"
	"github.com/minikubelet/minikubelet/plugins/devicemanager"
	"github.com/minikubelet/minikubelet/plugins/draplugin"
	"github.com/minikubelet/minikubelet/plugins/pluginmanager"
	"github.com/minikubelet/minikubelet/plugins/pluginwatcher"
)

// Plugins is the kubelet's plugin pipeline: the watcher over the registry, the plugin manager,
// and the handlers it hands plugins to.
type Plugins struct {
	// Watcher turns the registry's sockets into the plugin manager's desired state.
	Watcher *pluginwatcher.Watcher
	// Manager registers and unregisters plugins.
	Manager *pluginmanager.Manager
	// Devices is the device manager's registration side, and the device manager as the sync
	// side sees it.
	Devices *devicemanager.Handler
	// CSI is the CSI handler; nil without an API server.
	CSI *csiplugin.Handler
	// DRA is the DRA manager's plugin handler, which every v1.35 kubelet has (the
	// DynamicResourceAllocation gate is GA and locked on). Without an API server it wipes no
	// ResourceSlices.
	DRA *draplugin.Handler
	// draWaker wakes Run's DRA runner when a registration may bring a wipe forward.
	draWaker *draplugin.Waker

	world *PluginWorld
}

// buildDevices is the container manager's device manager, built before NewMainKubelet: the node
// status and pod admission ask it.
func buildDevices(opts Options, w *PluginWorld) (*Plugins, error) {
	dm, err := devicemanager.New(devicemanager.Options{Clock: opts.Clock, Tracer: opts.Tracer, Checkpoint: w.Checkpoint})
	if err != nil {
		return nil, err
	}
	h, err := devicemanager.NewHandler(devicemanager.HandlerOptions{Manager: dm, Connector: w.Devices, Dir: w.DevicePlugins, Tracer: opts.Tracer})
	if err != nil {
		return nil, err
	}
	return &Plugins{Devices: h, world: w}, nil
}

// buildManager is the plugin manager on the registry with its handlers, as NewMainKubelet builds
// it and initializeRuntimeDependentModules adds the handlers: CSI (with an API server), and the
// container manager's, the device manager's and the DRA manager's.
func (p *Plugins) buildManager(opts Options) error {
	var err error
	if p.Manager, err = pluginmanager.New(pluginmanager.Options{Clock: opts.Clock, Tracer: opts.Tracer, NewID: p.world.NewID}); err != nil {
		return err
	}
	if err := p.buildDRA(opts); err != nil {
		return err
	}
	p.Manager.AddHandler(registerapi.DRAPlugin, p.DRA)
	if client := opts.World.API; client != nil {
		if p.CSI, err = csiplugin.New(csiplugin.Options{Nodes: csiplugin.APINodeInfo{Client: client, NodeName: opts.NodeName}, Driver: p.world.CSI, Tracer: opts.Tracer}); err != nil {
			return err
		}
		p.Manager.AddHandler(registerapi.CSIPlugin, p.CSI)
	}
	p.Manager.AddHandler(registerapi.DevicePlugin, p.Devices)
	p.Watcher, err = pluginwatcher.New(pluginwatcher.Options{Dir: p.world.Registry, FS: p.world.FS, Desired: p.Manager.Desired(), Tracer: opts.Tracer})
	return err
}

// buildDRA is the DRA manager's plugin handler. Its wipes draw their jitter from the kubelet's
// seed, so that a replay's retries are the same on every run.
func (p *Plugins) buildDRA(opts Options) error {
	client := opts.World.API
	m, err := draplugin.New(draplugin.Options{Clock: opts.Clock, Tracer: opts.Tracer, NodeName: opts.NodeName, Wipes: client != nil,
		Rand: rand.New(rand.NewPCG(opts.Seed, draSeed))})
	if err != nil {
		return err
	}
	hopts := draplugin.HandlerOptions{Manager: m, Connector: p.world.DRA, Tracer: opts.Tracer}
	if client != nil {
		hopts.Slices = draplugin.APISlices{Client: client}
	}
	p.draWaker = draplugin.NewWaker()
	hopts.Wake = p.draWaker.Wake
	p.DRA, err = draplugin.NewHandler(hopts)
	return err
}

// draSeed tells the DRA handler's random stream from the other cores' drawn from the same seed.
const draSeed = 0x647261

// nodeJitterSeed tells the node status' jitter stream (its periods and the CSINode's back-off)
// from the other cores' drawn from the same seed.
const nodeJitterSeed = 0x6a6974

// start is what the kubelet's Run starts of the pipeline, for a stepping driver: the container
// manager's DRA manager (its wipe of the node's ResourceSlices) and device manager (which reads
// its checkpoint back, traced), then the watcher's first traversal finds the sockets already in
// the registry. A failed traversal is traced; the kubelet starts without it.
func (p *Plugins) start() {
	p.DRA.Start()
	_ = p.Devices.Start() // a checkpoint that cannot be read is traced
	_ = p.Watcher.Start(noWatches{})
}

// advance carries out the DRA handler's wipes that are due, then runs a reconciler pass when one
// is due, and every operation it starts at once; it reports whether either did something.
func (p *Plugins) advance(ctx context.Context, now time.Time, env pluginmanager.Env) bool {
	wiped := false
	if at, ok := p.DRA.NextWake(); ok && !at.After(now) {
		wiped = p.DRA.Advance(ctx)
	}
	if at, _ := p.Manager.NextWake(); !at.IsZero() && at.After(now) {
		return wiped
	}
	for _, op := range p.Manager.Reconcile() {
		p.Manager.Finish(op, pluginmanager.RunOperation(ctx, op, env))
	}
	return true
}

// SocketCreated hands the watcher the create event inotify would deliver for a path in the
// registry, for a stepping driver; Run's watcher has its own. A path it cannot take is returned
// and the kubelet goes on, as it logs the event's failure.
func (p *Plugins) SocketCreated(path string) error {
	return p.Watcher.Create(path, noWatches{})
}

// SocketRemoved hands the watcher the remove event of a path in the registry.
func (p *Plugins) SocketRemoved(path string) {
	p.Watcher.Remove(path)
}

// noWatches is the watcher's watches for a stepping driver, which delivers the registry's events
// itself.
type noWatches struct{}

func (noWatches) Add(string) error { return nil }

// The plugin world's seams are the ones the pipeline's cores declare.
var (
	_ pluginwatcher.FS        = pluginwatcher.OS{}
	_ pluginmanager.Handler   = (*devicemanager.Handler)(nil)
	_ pluginmanager.Handler   = (*csiplugin.Handler)(nil)
	_ pluginmanager.Handler   = (*draplugin.Handler)(nil)
	_ draplugin.Connector     = draplugin.GRPC{}
	_ Devices                 = (*devicemanager.Handler)(nil)
	_ pluginwatcher.Desired   = (*pluginmanager.DesiredState)(nil)
	_ devicemanager.Connector = devicemanager.GRPC{}
)
