package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/minikubelet/minikubelet/api/eventrecord"
	"github.com/minikubelet/minikubelet/metrics"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/teach"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sources"
	"github.com/minikubelet/minikubelet/syncloop"
)

// The kubelet's defaults for its API client (kubeAPIQPS, kubeAPIBurst) and its event source.
const (
	kubeAPIQPS     = 50
	kubeAPIBurst   = 100
	eventComponent = "kubelet"
	userAgent      = "minikubelet"
	// embeddedIdleConns is the idle connection pool to the embedded API server.
	embeddedIdleConns = 1024
	// nodeIP is the node's InternalIP and the hostIP of its pods. The simulated node has no
	// network of its own, so it claims the loopback address.
	nodeIP = "127.0.0.1"
)

// run is `minikubelet run`: the whole simulated kubelet on the real clock. It writes the trace to
// out as things happen and returns nil once ctx is done and every goroutine it started has ended.
//
// Shutdown has two phases, so that the kubelet's last API writes and queued Kubernetes events
// still reach the embedded API server: first the kubelet's runners stop, then the event
// broadcaster, then the API server.
func run(ctx context.Context, cfg *runConfig, out io.Writer) error {
	clk := clock.RealClock{}
	var live *teach.Live
	var also trace.Tracer
	if cfg.UIAddr != "" {
		live = teach.NewLive("minikubelet run: "+cfg.NodeName, 0)
		also = live
	}
	tracer, err := trace.NewRecorder(trace.RecorderOptions{Clock: clk, Out: out, Format: cfg.TraceFormat,
		View: cfg.TraceView.newView(), Text: cfg.TraceView.Text, Also: also})
	if err != nil {
		return err
	}
	if live != nil {
		stopUI, err := serveUI(ctx, cfg, live)
		if err != nil {
			return err
		}
		defer stopUI()
	}

	apiCtx, stopAPI := context.WithCancel(ctx)
	defer stopAPI()
	api := &group{cancel: stopAPI}
	clients, err := connectAPI(apiCtx, cfg, clk, tracer, api)
	if err != nil {
		stopAPI()
		api.wait()
		return err
	}

	kubeCtx, stopKubelet := context.WithCancel(apiCtx)
	defer stopKubelet()
	kubelet := &group{cancel: stopKubelet}
	var serving *kubeletServing
	if cfg.KubeletAddr != "" {
		if serving, err = startKubeletServer(kubeCtx, cfg.KubeletAddr, kubelet); err != nil {
			stopKubelet()
			stopAPI()
			api.wait()
			return err
		}
	}
	// The broadcasters take the logger from kubeCtx but not its cancellation: they stop after the
	// kubelet's runners, so that the events they recorded last are still sent.
	broadcasters := &broadcasters{ctx: context.WithoutCancel(kubeCtx)}
	err = startKubelet(kubeCtx, cfg, kubelet, kubeletDeps{
		clock:        clk,
		tracer:       tracer,
		clients:      clients,
		broadcasters: broadcasters,
		serving:      serving,
	})
	if err != nil {
		stopKubelet()
	}
	<-kubeCtx.Done()
	kubelet.wait()
	broadcasters.shutdown()
	stopAPI()
	api.wait()
	return errors.Join(err, kubelet.err, api.err, tracer.Err())
}

// serveUI serves the live timeline view at cfg.UIAddr until the returned function is called.
func serveUI(ctx context.Context, cfg *runConfig, live *teach.Live) (stop func(), err error) {
	l, err := net.Listen("tcp", cfg.UIAddr)
	if err != nil {
		return nil, fmt.Errorf("--ui: listen on %s: %w", cfg.UIAddr, err)
	}
	srv := &http.Server{Handler: live, ReadHeaderTimeout: serverStreamTimeout, MaxHeaderBytes: serverMaxHeaderBytes,
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l) // ErrServerClosed once stopped
	}()
	url := "http://" + l.Addr().String() + "/"
	switch {
	case cfg.UIStarted != nil:
		cfg.UIStarted(url)
	case cfg.Announce != nil:
		fmt.Fprintf(cfg.Announce, "timeline view: %s\n", url)
	}
	return func() {
		// The streams end first, so that closing the server does not wait for them.
		live.Close()
		_ = srv.Close()
		<-done
	}, nil
}

// clientFactory makes a node's API client: each simulated kubelet has its own rate limits, as
// each kubelet has, while client-go shares the connections of clients built from one config. It
// returns nil when standalone.
type clientFactory func() (kubernetes.Interface, error)

// connectAPI returns the client factory of the API server cfg names: none when standalone, the
// one in --kubeconfig, or else an embedded fake API server that it starts in g.
func connectAPI(ctx context.Context, cfg *runConfig, clk clock.WithTicker, tracer trace.Tracer, g *group) (clientFactory, error) {
	if cfg.Standalone {
		return func() (kubernetes.Interface, error) { return nil, nil }, nil
	}
	var rc *rest.Config
	if cfg.Kubeconfig != "" {
		c, err := restConfigFromKubeconfig(cfg.Kubeconfig)
		if err != nil {
			return nil, err
		}
		rc = c
	} else {
		token := cfg.Security.token()
		srv, err := fakeapiserver.New(fakeapiserver.Options{
			Clock: clk, Tracer: tracer, Rand: serverRand(), BearerToken: token, DataDir: cfg.DataDir,
		})
		if err != nil {
			return nil, fmt.Errorf("embedded API server: %w", err)
		}
		sv, done, err := startEmbeddedAPIServer(ctx, srv, cfg.APIServerAddr, cfg.APIServerFallback, cfg.Security, token)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("start embedded API server on %s: %w", cfg.APIServerAddr, err), srv.Close())
		}
		g.Go(ctx, "embedded API server", func(context.Context) error { return errors.Join(<-done, srv.Close()) })
		ropts := controllers.RunnerOptions{Names: cfg.Controllers, Clock: clk, Tracer: tracer}
		if err := startControllers(ctx, ropts, sv.restConfig(), g); err != nil {
			return nil, err
		}
		if cfg.WriteKubeconfig != "" {
			if err := writeKubeconfig(cfg.WriteKubeconfig, sv); err != nil {
				return nil, err
			}
			klog.FromContext(ctx).Info("Wrote a kubeconfig for the embedded API server", "path", cfg.WriteKubeconfig)
			announceKubectl(cfg.Announce, sv.url, cfg.WriteKubeconfig)
		}
		// One transport for every node's client, with an idle pool as large as a fleet's
		// concurrent requests: client-go's default of 25 idle connections per host made a
		// 1,000-node fleet dial and close connections all the time. client-go refuses a custom
		// transport beside TLS options, so the transport carries the TLS configuration itself.
		rc = sv.restConfig()
		tlsConfig, err := rest.TLSConfigFor(rc)
		if err != nil {
			return nil, fmt.Errorf("embedded API server's TLS configuration: %w", err)
		}
		rc.TLSClientConfig = rest.TLSClientConfig{}
		rc.Transport = &http.Transport{
			TLSClientConfig: tlsConfig,
			MaxIdleConns:    embeddedIdleConns, MaxIdleConnsPerHost: embeddedIdleConns, IdleConnTimeout: 90 * time.Second,
		}
	}
	rc = rest.CopyConfig(rc)
	rc.QPS, rc.Burst, rc.UserAgent = kubeAPIQPS, kubeAPIBurst, userAgent
	if cfg.APILatency > 0 {
		rc.Wrap(func(rt http.RoundTripper) http.RoundTripper { return withLatency(rt, clk, cfg.APILatency) })
	}
	return func() (kubernetes.Interface, error) {
		client, err := kubernetes.NewForConfig(rc)
		if err != nil {
			return nil, fmt.Errorf("create API client for %s: %w", rc.Host, err)
		}
		return client, nil
	}, nil
}

// broadcasters are the event broadcasters of every node, one per node as each kubelet has one.
// They are made by startKubelet's goroutine and shut down after the nodes' runners stopped.
type broadcasters struct {
	ctx context.Context // the broadcasters' logger, without cancellation
	all []record.EventBroadcaster
}

func (b *broadcasters) new() record.EventBroadcaster {
	eb := record.NewBroadcaster(record.WithContext(b.ctx))
	b.all = append(b.all, eb)
	return eb
}

func (b *broadcasters) shutdown() {
	for _, eb := range b.all {
		eb.Shutdown()
	}
}

// kubeletDeps are what startKubelet shares between the components it builds.
type kubeletDeps struct {
	clock        clock.WithTicker
	tracer       trace.Tracer
	clients      clientFactory
	broadcasters *broadcasters
	sharedPods   map[string]sources.SharedAPINode // with many nodes: every node's API source, fed by one watch
	serving      *kubeletServing                  // nil serves no kubelet server
}

// startKubelet starts every simulated node of cfg (see nodeNames), sharing the event
// broadcaster, the API client and the kubelet server.
func startKubelet(ctx context.Context, cfg *runConfig, g *group, d kubeletDeps) error {
	names := nodeNames(cfg)
	if len(names) > 1 {
		d.sharedPods = map[string]sources.SharedAPINode{}
	}
	for _, name := range names {
		node := *cfg
		node.NodeName = name
		if err := startNode(ctx, &node, g, d); err != nil {
			return err
		}
	}
	if len(d.sharedPods) == 0 {
		return nil
	}
	client, err := d.clients()
	if err != nil {
		return err
	}
	r, err := sources.NewSharedAPIRunner(sources.SharedAPIRunnerOptions{Client: client, Clock: d.clock, Nodes: d.sharedPods})
	if err != nil {
		return err
	}
	g.Go(ctx, "shared api source", r.Run)
	return nil
}

// startNode builds one node's pod sources, PodConfig and sync side, as the kubelet's RunKubelet
// does, and starts their runners in g.
func startNode(ctx context.Context, cfg *runConfig, g *group, d kubeletDeps) error {
	logger := klog.FromContext(ctx)
	if cfg.Nodes > 1 {
		logger = klog.LoggerWithValues(logger, "node", cfg.NodeName)
		ctx = klog.NewContext(ctx, logger)
		// One trace holds every node's events: each says whose it is.
		shared, name := d.tracer, cfg.NodeName
		d.tracer = trace.Func(func(ev trace.Event) {
			ev.Node = name
			shared.Emit(ev)
		})
	}
	client, err := d.clients()
	if err != nil {
		return err
	}
	broadcaster := d.broadcasters.new()
	broadcaster.StartStructuredLogging(3)
	if client != nil {
		broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	} else {
		logger.Info("No API server defined, no events will be sent to the API server")
	}
	recorder := broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: eventComponent, Host: cfg.NodeName})

	// The kubelet package traces the events of the sync side; PodConfig's are traced here.
	configEvents, err := eventrecord.NewTracing(recorder, d.tracer)
	if err != nil {
		return err
	}
	storage, err := podconfig.NewStorage(podconfig.StorageOptions{Clock: d.clock, Tracer: d.tracer, Recorder: configEvents})
	if err != nil {
		return fmt.Errorf("pod config: %w", err)
	}
	pc, err := podconfig.New(storage)
	if err != nil {
		return fmt.Errorf("pod config: %w", err)
	}
	// Sources register in the kubelet's order: file, http, api.
	type runner struct {
		name string
		run  func(context.Context) error
	}
	var sourceRunners []runner
	if cfg.Kubelet.Sources.StaticPodPath != "" {
		logger.Info("Adding static pod path", "path", cfg.Kubelet.Sources.StaticPodPath)
		core, err := sources.NewFile(sources.FileOptions{
			Path: cfg.Kubelet.Sources.StaticPodPath, NodeName: cfg.NodeName, Period: cfg.Kubelet.Sources.FileCheckFrequency,
			Clock: d.clock, Tracer: d.tracer,
		})
		if err != nil {
			return err
		}
		r, err := sources.NewFileRunner(sources.FileRunnerOptions{Core: core, Clock: d.clock, Out: pc.Channel(podconfig.FileSource)})
		if err != nil {
			return err
		}
		sourceRunners = append(sourceRunners, runner{"file source", r.Run})
	}
	if cfg.Kubelet.Sources.StaticPodURL != "" {
		logger.Info("Adding pod URL with HTTP header", "URL", cfg.Kubelet.Sources.StaticPodURL, "header", cfg.Kubelet.Sources.StaticPodURLHeader)
		core, err := sources.NewHTTP(sources.HTTPOptions{
			URL: cfg.Kubelet.Sources.StaticPodURL, Header: cfg.Kubelet.Sources.StaticPodURLHeader, NodeName: cfg.NodeName,
			Period: cfg.Kubelet.Sources.HTTPCheckFrequency, Clock: d.clock, Tracer: d.tracer,
		})
		if err != nil {
			return err
		}
		r, err := sources.NewHTTPRunner(sources.HTTPRunnerOptions{Core: core, Clock: d.clock, Out: pc.Channel(podconfig.HTTPSource)})
		if err != nil {
			return err
		}
		sourceRunners = append(sourceRunners, runner{"http source", r.Run})
	}
	var nodeInformers informers.SharedInformerFactory
	if client != nil && d.sharedPods != nil {
		// A fleet: one watch over every pod feeds every node (startKubelet starts it).
		core, err := sources.NewAPI(sources.APIOptions{Tracer: d.tracer})
		if err != nil {
			return err
		}
		d.sharedPods[cfg.NodeName] = sources.SharedAPINode{Core: core, Out: pc.Channel(podconfig.APISource)}
	} else if client != nil {
		logger.Info("Adding apiserver pod source")
		// The kubelet waits for its node informer, which lists and watches only its own node,
		// before it watches pods.
		nodeInformers = informers.NewSharedInformerFactoryWithOptions(client, 0,
			informers.WithTweakListOptions(func(o *metav1.ListOptions) {
				o.FieldSelector = fields.OneTermEqualSelector(metav1.ObjectNameField, cfg.NodeName).String()
			}))
		nodeHasSynced := nodeInformers.Core().V1().Nodes().Informer().HasSynced
		core, err := sources.NewAPI(sources.APIOptions{Tracer: d.tracer})
		if err != nil {
			return err
		}
		r, err := sources.NewAPIRunner(sources.APIRunnerOptions{
			Core:          core,
			Client:        client,
			NodeName:      cfg.NodeName,
			NodeHasSynced: nodeHasSynced,
			Clock:         d.clock,
			Out:           pc.Channel(podconfig.APISource),
		})
		if err != nil {
			return err
		}
		sourceRunners = append(sourceRunners, runner{"api source", r.Run})
	}

	// The plugin pipeline is one kubelet's: its root directory, kubelet.sock and registry
	// watcher. A fleet's nodes run without it.
	var ns *nodeServing
	var reg *metrics.Registry
	if d.serving != nil {
		if ns, err = newNodeServing(cfg.NodeName); err != nil {
			return err
		}
		reg = ns.metrics
	}
	var devices kubelet.Devices
	if cfg.Nodes <= 1 {
		if devices, err = startPlugins(ctx, cfg, g, d, client, reg); err != nil {
			return fmt.Errorf("plugin registration: %w", err)
		}
	}
	kopts := kubelet.Options{
		NodeName:     cfg.NodeName,
		NodeIP:       nodeIP,
		Clock:        d.clock,
		Tracer:       d.tracer,
		Seed:         uint64(d.clock.Now().UnixNano()),
		Client:       client,
		Recorder:     recorder,
		Latencies:    fakeruntime.DefaultLatencies,
		Config:       &cfg.Kubelet,
		SourcesReady: pc.SeenAllSources,
		Devices:      devices,
	}
	if ns != nil {
		kopts.Metrics, kopts.KubeletPort = ns.metrics, d.serving.port
	}
	n, err := kubelet.New(kopts)
	if err != nil {
		return fmt.Errorf("build node %s: %w", cfg.NodeName, err)
	}
	ropts := syncloop.RunnerOptions{Loop: n.Loop, Updates: pc.Updates(), Clock: d.clock}
	if ns != nil {
		if err := d.serving.add(cfg.NodeName, ns, d.clock, cfg); err != nil {
			return err
		}
		ropts.Settled = ns.publisher(cfg.NodeName, n, d.clock, cfg.SnapshotPeriod)
	}

	if nodeInformers != nil {
		nodeInformers.Start(ctx.Done())
		g.Go(ctx, "node informer", func(ctx context.Context) error {
			<-ctx.Done()
			nodeInformers.Shutdown() // waits for the informer's goroutines
			return nil
		})
	}
	g.Go(ctx, "pod config", pc.Run)
	for _, r := range sourceRunners {
		g.Go(ctx, r.name, r.run)
	}
	loopRunner, err := syncloop.NewRunner(ropts)
	if err != nil {
		return err
	}
	g.Go(ctx, "sync loop", loopRunner.Run)
	logger.Info("Started kubelet", "node", cfg.NodeName)
	return nil
}

// group runs functions in goroutines and remembers the first error, which also cancels the
// group's context: an errgroup.Group without the dependency.
type group struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu  sync.Mutex // guards err
	err error
}

// Go runs f(ctx) in a new goroutine. If f fails, the group's context is cancelled and the error,
// named after what failed, is kept unless an earlier one was.
func (g *group) Go(ctx context.Context, name string, f func(context.Context) error) {
	g.wg.Go(func() {
		err := f(ctx)
		if err == nil {
			return
		}
		g.mu.Lock()
		if g.err == nil {
			g.err = fmt.Errorf("%s: %w", name, err)
		}
		g.mu.Unlock()
		g.cancel()
	})
}

// wait blocks until every function started by Go has returned.
func (g *group) wait() {
	g.wg.Wait()
}
