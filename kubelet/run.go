package kubelet

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/kubelet/filewatch"
	"github.com/minikubelet/minikubelet/nodestatus"
	"github.com/minikubelet/minikubelet/plugins/devicemanager"
	"github.com/minikubelet/minikubelet/plugins/draplugin"
	"github.com/minikubelet/minikubelet/plugins/pluginmanager"
	"github.com/minikubelet/minikubelet/plugins/pluginwatcher"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sources"
	"github.com/minikubelet/minikubelet/status"
	"github.com/minikubelet/minikubelet/syncloop"
	"github.com/minikubelet/minikubelet/volumemanager"
)

// RunOptions configure Run.
type RunOptions struct {
	// PodWatch is a fleet's one pod watch: Run adds the node's api source to it instead of
	// starting a reflector (and node informer) of its own. Nil gives the node its own.
	PodWatch *PodWatch
	// Snapshots takes the server's view on demand: a request to the node's server asks Board,
	// and the sync loop takes a snapshot between its passes; a snapshot younger than
	// SnapshotPeriod (zero: none) is reused without asking. A snapshot copies every pod's status
	// that changed since the last one; a node whose server nobody asks takes none.
	Snapshots      bool
	SnapshotPeriod time.Duration
	// FileWatch is the process's one file watch (one inotify instance), which the node's file
	// source and plugin watcher take their watches from, as a fleet's nodes share it; its Run
	// is the caller's. Nil gives the node one of its own, run by Run.
	FileWatch *filewatch.Shared
	// RuntimeState is the file that keeps the runtime's sandboxes and containers across
	// restarts (under the root directory): Run restores the runtime from it before it starts and
	// writes it while the runtime changes and when it stops. Empty keeps nothing: every start is
	// a rebooted node.
	RuntimeState string
}

// A node's file source and plugin watcher watch through a share of the process's file watch.
var (
	_ sources.FileWatch       = (*filewatch.Watch)(nil)
	_ pluginwatcher.FileWatch = (*filewatch.Watch)(nil)
)

// runner is one of Run's goroutines.
type runner struct {
	name string
	run  func(context.Context) error
}

// Run runs the kubelet on its clock, which must be a clock.WithTicker, as the kubelet's Run
// does: the pod sources' runners feeding PodConfig's mux, the sync loop's runner, and the plugin
// pipeline (the device manager's kubelet.sock, the plugin manager's reconciler, the watcher on
// fsnotify). It returns once ctx is done and every runner has ended, or at the first runner's
// error, which ends the others. A Kubelet runs once, and is not stepped with Settle meanwhile.
func (k *Kubelet) Run(ctx context.Context, opts RunOptions) error {
	clk, ok := k.opts.Clock.(clock.WithTicker)
	if !ok {
		return fmt.Errorf("run kubelet %s: the clock has no timers", k.opts.NodeName)
	}
	k.startUp(false)
	runners, err := k.runners(ctx, clk, opts)
	if err != nil {
		return fmt.Errorf("run kubelet %s: %w", k.opts.NodeName, err)
	}
	klog.FromContext(ctx).Info("Started kubelet", "node", k.opts.NodeName)
	return runAll(ctx, runners)
}

// runners builds every runner of the process, in the order the kubelet starts them.
func (k *Kubelet) runners(ctx context.Context, clk clock.WithTicker, opts RunOptions) (_ []runner, err error) {
	logger := klog.FromContext(ctx)
	mux, err := podconfig.New(k.PodConfig)
	if err != nil {
		return nil, err
	}
	k.mux = mux
	var out []runner
	fw := opts.FileWatch
	if fw == nil && (k.Sources.File != nil || k.Plugins != nil) {
		if fw, err = filewatch.NewInotify(); err != nil {
			return nil, err
		}
		own := fw
		defer func() {
			if err != nil {
				own.Close() // it will not run
			}
		}()
		out = append(out, runner{"file watch", fw.Run})
	}
	// The pod sources, registered in the kubelet's order: file, http, api.
	cfg := k.opts.Config.Sources
	if s := k.Sources.File; s != nil {
		logger.Info("Adding static pod path", "path", cfg.StaticPodPath)
		watches := func() sources.FileWatch { return fw.Watch() }
		r, err := sources.NewFileRunner(sources.FileRunnerOptions{Core: s, Clock: clk, Out: mux.Channel(podconfig.FileSource), Watches: watches})
		if err != nil {
			return nil, err
		}
		out = append(out, runner{"file source", r.Run})
	}
	if s := k.Sources.HTTP; s != nil {
		logger.Info("Adding pod URL with HTTP header", "URL", cfg.StaticPodURL, "header", cfg.StaticPodURLHeader)
		r, err := sources.NewHTTPRunner(sources.HTTPRunnerOptions{Core: s, Clock: clk, Out: mux.Channel(podconfig.HTTPSource)})
		if err != nil {
			return nil, err
		}
		out = append(out, runner{"http source", r.Run})
	}
	if s := k.Sources.API; s != nil {
		rs, err := k.apiRunners(ctx, clk, s, mux.Channel(podconfig.APISource), opts.PodWatch)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	out = append(out, runner{"pod config", mux.Run})
	if r := k.Objects.reflectors; r != nil {
		// The ConfigMap and Secret watches and the service informer.
		out = append(out, runner{"object watches", func(ctx context.Context) error { return r.Run(ctx, clk) }})
	}
	if k.Plugins != nil {
		rs, err := k.pluginRunners(ctx, clk, fw)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	// The goroutines beside the sync loop reach the cores it owns through calls it runs between
	// its passes (docs/design/007-beside-the-loop.md).
	calls := make(chan func())
	rs, err := k.besideRunners(clk, loopCaller(calls))
	if err != nil {
		return nil, err
	}
	out = append(out, rs...)
	// The allocation checkpoint is written at most once per runtimeCheckpointPeriod while it
	// changes, and when the loop has stopped.
	var allocationsSaved time.Time
	saveAllocations := func() {
		if now := clk.Now(); now.Sub(allocationsSaved) >= runtimeCheckpointPeriod {
			allocationsSaved = now
			k.SaveCheckpoints(ctx)
		}
	}
	settled := []func(){k.besides.runtime.publish, saveAllocations}
	var snaps *snapshots
	if opts.Snapshots {
		snaps = &snapshots{k: k, period: opts.SnapshotPeriod}
		settled = append(settled, snaps.settled)
	}
	var keeper *runtimeKeeper
	if opts.RuntimeState != "" {
		keeper = &runtimeKeeper{path: opts.RuntimeState, rt: k.Runtime, clock: clk}
		keeper.restore(ctx)
		settled = append(settled, func() { keeper.save(ctx, false) })
	}
	publish := func() {
		for _, f := range settled {
			f()
		}
	}
	lopts := syncloop.RunnerOptions{Loop: k.Loop, Updates: mux.Updates(), Clock: clk, Calls: calls, Settled: publish}
	if snaps != nil {
		// The server's asks for snapshots, answered by the loop between its passes.
		lopts.Asks, lopts.Asked = k.Board.Demand(opts.SnapshotPeriod), snaps.take
	}
	loop, err := syncloop.NewRunner(lopts)
	if err != nil {
		k.Board.Stop() // nothing will answer
		return nil, err
	}
	run := loop.Run
	if snaps != nil {
		// Once the loop has stopped, no ask is answered: the requests waiting, and later ones,
		// get the latest snapshot.
		run = func(ctx context.Context) error {
			defer k.Board.Stop()
			return loop.Run(ctx)
		}
	}
	// The last state is written once the loop, which owns the runtime and the allocations, has
	// stopped.
	loopRun := run
	run = func(ctx context.Context) error {
		err := loopRun(ctx)
		if m := k.besides.mirrors; m != nil {
			// The calls in flight end with the loop's context, and hand nothing back.
			m.wait()
		}
		if keeper != nil {
			keeper.save(ctx, true)
		}
		k.SaveCheckpoints(ctx)
		return err
	}
	return append(out, runner{"sync loop", run}), nil
}

// loopCaller returns the function with which a runner beside the sync loop runs f on the loop's
// goroutine (through calls) and waits for it; false when ctx ended first.
func loopCaller(calls chan<- func()) func(ctx context.Context, f func()) bool {
	return func(ctx context.Context, f func()) bool {
		done := make(chan struct{})
		select {
		case calls <- func() { f(); close(done) }:
		case <-ctx.Done():
			return false
		}
		select {
		case <-done:
			return true
		case <-ctx.Done():
			return false
		}
	}
}

// besideRunners are the kubelet's goroutines beside the sync loop, which make the API calls the
// loop must not wait for: the status manager's, the token manager's requests, the node status
// loop, the lease controller, the CSINode's initialization, fastStaticPodsRegistration and the pod
// workers' mirror pod calls. They take the cores out of the loop's Advance; the runtime state the
// node status reads crosses as a snapshot the loop publishes after each pass.
func (k *Kubelet) besideRunners(clk clock.WithTicker, do func(context.Context, func()) bool) ([]runner, error) {
	b := &k.besides
	b.runtime.publish()
	b.runtime.do = do
	b.status.beside = true
	sr, err := status.NewRunner(status.RunnerOptions{Manager: k.Status, Do: do, Clock: clk})
	if err != nil {
		return nil, err
	}
	out := []runner{{"status manager", sr.Run}}
	if b.tokens != nil {
		tr, err := volumemanager.NewTokenRunner(volumemanager.TokenRunnerOptions{Tokens: b.tokens, Volumes: k.Volumes, Do: do})
		if err != nil {
			return nil, err
		}
		out = append(out, runner{"token manager", tr.Run})
	}
	if b.node == nil {
		return out, nil
	}
	b.node.beside = true
	registered := make(chan struct{})
	nr, err := nodestatus.NewRunner(nodestatus.RunnerOptions{Status: b.node.Status, Clock: clk, Registered: func() { close(registered) }})
	if err != nil {
		return nil, err
	}
	lr, err := nodestatus.NewLeaseRunner(b.node.DetachLease(), clk)
	if err != nil {
		return nil, err
	}
	// The CSI volume plugin's initializeCSINode runs on a goroutine of its own too, so that its
	// API calls, which may hang, hold up neither registration nor the status updates.
	if csi := b.node.DetachCSINode(); csi != nil {
		cr, err := nodestatus.NewCSINodeRunner(csi, clk)
		if err != nil {
			return nil, err
		}
		out = append(out, runner{"CSINode initialization", cr.Run})
	}
	// The pod workers' mirror pod calls, each on a goroutine of its own.
	b.mirrors = &mirrorCalls{do: do, workers: k.Workers}
	b.syncer.SetBeside(b.mirrors)
	// fastStaticPodsRegistration runs on a goroutine of its own: the loop hands over the static
	// pods and their mirror pods, and the runner makes the calls.
	fast := func(ctx context.Context) error {
		select {
		case <-ctx.Done():
		case <-registered:
			var pods map[*v1.Pod]*v1.Pod
			if do(ctx, func() { pods, _ = b.node.staticPods() }) && len(pods) > 0 {
				b.syncer.FastStaticPodsRegistration(ctx, pods)
			}
		}
		return nil
	}
	return append(out, runner{"node status", nr.Run}, runner{"node lease", lr.Run}, runner{"static pods registration", fast}), nil
}

// apiRunners are the api source's: with a fleet's pod watch, the node joins it; otherwise the
// kubelet's node informer, which lists and watches only its own node, and the reflector, which
// waits for that informer before it watches pods.
func (k *Kubelet) apiRunners(ctx context.Context, clk clock.WithTicker, s *sources.API, out chan<- podconfig.Update, w *PodWatch) ([]runner, error) {
	if w != nil {
		w.add(k.opts.NodeName, sources.SharedAPINode{Core: s, Out: out})
		k.besides.nodes.lister = w.nodeLister()
		return nil, nil
	}
	klog.FromContext(ctx).Info("Adding apiserver pod source")
	client := k.opts.World.API
	nodeInformers := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector(metav1.ObjectNameField, k.opts.NodeName).String()
		}))
	nodeHasSynced := nodeInformers.Core().V1().Nodes().Informer().HasSynced
	k.besides.nodes.lister = nodeInformers.Core().V1().Nodes().Lister()
	r, err := sources.NewAPIRunner(sources.APIRunnerOptions{Core: s, Client: client, NodeName: k.opts.NodeName, NodeHasSynced: nodeHasSynced, Clock: clk, Out: out})
	if err != nil {
		return nil, err
	}
	informer := func(ctx context.Context) error {
		nodeInformers.Start(ctx.Done())
		<-ctx.Done()
		nodeInformers.Shutdown() // waits for the informer's goroutines
		return nil
	}
	return []runner{{"node informer", informer}, {"api source", r.Run}}, nil
}

// pluginRunners are the plugin pipeline's, after the device manager's Start has read its
// checkpoint back (initializeRuntimeDependentModules starts the container manager before the
// plugin manager): the DRA manager's wipes (the first, of the node's ResourceSlices, at once),
// the kubelet.sock server, the reconciler, and the watcher, whose first traversal finds the
// sockets already in the registry.
func (k *Kubelet) pluginRunners(ctx context.Context, clk clock.WithTicker, fw *filewatch.Shared) ([]runner, error) {
	p, logger := k.Plugins, klog.FromContext(ctx)
	if err := p.Devices.Start(); err != nil {
		logger.Error(err, "Continue after failing to read checkpoint file. Device allocation info may NOT be up-to-date")
	}
	server, err := devicemanager.NewServer(devicemanager.ServerOptions{Handler: p.Devices, Dir: p.world.DevicePlugins})
	if err != nil {
		return nil, err
	}
	dra, err := draplugin.NewRunner(draplugin.RunnerOptions{Handler: p.DRA, Clock: clk, Waker: p.draWaker})
	if err != nil {
		return nil, err
	}
	reconciler, err := pluginmanager.NewRunner(pluginmanager.RunnerOptions{Manager: p.Manager, Clock: clk, Dialer: p.world.Dialer, Tracer: k.opts.Tracer,
		Metrics: k.Metrics.SetTotalPlugins})
	if err != nil {
		return nil, err
	}
	watch := func(ctx context.Context) error {
		if err := pluginwatcher.Run(ctx, p.Watcher, fw.Watch(), reconciler.Lock, nil); err != nil {
			// The kubelet logs a failed watcher start and goes on without plugins.
			klog.FromContext(ctx).Error(err, "The plugin watcher failed to start")
		}
		return nil
	}
	logger.Info("Starting plugin registration", "pluginsRegistry", p.world.Registry, "devicePlugins", p.world.DevicePlugins)
	return []runner{{"dra manager", dra.Run}, {"device manager", server.Run}, {"plugin manager", reconciler.Run}, {"plugin watcher", watch}}, nil
}

// runAll runs every runner on a goroutine of its own until ctx is done or one fails, which ends
// the others; it returns once all have returned, with the first failure named.
func runAll(ctx context.Context, runners []runner) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex // guards first
		first error
	)
	for _, r := range runners {
		wg.Go(func() {
			if err := r.run(ctx); err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("%s: %w", r.name, err)
				}
				mu.Unlock()
				cancel()
			}
		})
	}
	wg.Wait()
	return first
}
