package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/kubelet/filewatch"
	"github.com/minikubelet/minikubelet/nodestatus"
	"github.com/minikubelet/minikubelet/sim/teach"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sources"
)

// The kubelet's defaults for its API client (kubeAPIContentType, kubeAPIQPS, kubeAPIBurst) and its
// event source.
const (
	kubeAPIContentType = runtime.ContentTypeProtobuf
	kubeAPIQPS         = 50
	kubeAPIBurst       = 100
	eventComponent     = "kubelet"
	userAgent          = "minikubelet"
)

// run is `minikubelet run`: the whole simulated kubelet on the real clock. It writes the trace to
// out as things happen and returns nil once ctx is done and every goroutine it started has ended.
//
// Shutdown has two phases, so that the kubelet's last API writes and queued Kubernetes events
// still reach the embedded API server: first the kubelet's runners stop, then the event
// broadcaster, then the API server.
func run(ctx context.Context, cfg *runConfig, out io.Writer) error {
	clk := clock.RealClock{}
	if err := cfg.checkServerAuth(); err != nil {
		return err
	}
	// The nodes' kubelet servers listen first: a port the user chose that is taken fails the
	// start before anything is printed or written.
	var rc *rest.Config
	if cfg.Kubeconfig != "" && !cfg.Standalone {
		c, err := restConfigFromKubeconfig(cfg.Kubeconfig)
		if err != nil {
			return err
		}
		rc = c
	}
	nodeIP, err := chooseNodeIP(cfg.NodeIP, apiServerHost(rc))
	if err != nil {
		return err
	}
	var servers *kubeletServers
	if cfg.KubeletAddr != "" {
		if servers, err = openKubeletServers(ctx, cfg, nodeNames(cfg), nodeIP); err != nil {
			return err
		}
		// Closed again once served, which is no harm; closed here when the start fails.
		defer servers.close()
		if err := servers.makeCertificates(); err != nil {
			return err
		}
	}

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
	conn, err := connectAPI(apiCtx, cfg, rc, clk, tracer, api, servers)
	if err == nil && servers != nil {
		err = servers.publish(apiCtx, cfg, conn)
	}
	if err != nil {
		stopAPI()
		api.wait()
		return err
	}

	kubeCtx, stopKubelet := context.WithCancel(apiCtx)
	defer stopKubelet()
	kubelet := &group{cancel: stopKubelet}
	// The broadcasters take the logger from kubeCtx but not its cancellation: they stop after the
	// kubelet's runners, so that the events they recorded last are still sent.
	broadcasters := &broadcasters{ctx: context.WithoutCancel(kubeCtx)}
	err = startKubelet(kubeCtx, cfg, kubelet, kubeletDeps{
		clock:        clk,
		tracer:       tracer,
		clients:      conn.clients,
		broadcasters: broadcasters,
		servers:      servers,
		nodeIP:       nodeIP,
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

// apiServerHost is the URL of the API server rc reaches, "" for none (the embedded one, or
// standalone).
func apiServerHost(rc *rest.Config) string {
	if rc == nil {
		return ""
	}
	return rc.Host
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

// clientFactory makes node's API clients: each simulated kubelet has its own rate limits, as
// each kubelet has, while client-go shares the connections of clients built from one config. All
// nil when standalone. node is "" for the clients of a fleet's one pod watch, which stands for
// every node's.
type clientFactory func(node string) (nodeClients, error)

// nodeClients are a node's clients of its API server.
type nodeClients struct {
	// api is the kubelet's API client and heartbeat its heartbeat client.
	api, heartbeat kubernetes.Interface
	// writes, with the embedded API server, make the kubelet's hottest requests in process, as
	// api and heartbeat would make them (writes.go); nil sends them through api and heartbeat.
	writes *kubelet.Writes
	// events is the sink of the node's event broadcaster: over api, or in process beside writes.
	events record.EventSink
	// pods, beside writes, lists and watches every pod in process, as api would (writes.go); a
	// fleet's shared pod watch takes it. Nil lists and watches through api.
	pods sources.PodListWatcher
}

// runtimeStateFile is where, under a node's root directory, the fake runtime keeps its state.
const runtimeStateFile = "runtime/state.json"

// nodeLeaseDuration is the kubelet's default nodeLeaseDurationSeconds, which bounds the
// heartbeat client's timeout.
const nodeLeaseDuration = 40 * time.Second

// heartbeatClient is the kubelet's heartbeat client, made from its API client's config: the node
// status and the lease go through it, without a client-side rate limit (the kubelet's
// heartbeatClientConfig has QPS -1), so that a node busy with pods still renews its lease, and
// with a timeout of nodeStatusUpdateFrequency, at most the lease duration, as the kubelet's.
func heartbeatClient(rc *rest.Config, statusPeriod time.Duration) (kubernetes.Interface, error) {
	hc := rest.CopyConfig(rc)
	hc.QPS, hc.Burst, hc.RateLimiter = -1, 0, nil
	hc.Timeout = heartbeatTimeout(statusPeriod)
	client, err := newClientset(hc)
	if err != nil {
		return nil, fmt.Errorf("create heartbeat client for %s: %w", hc.Host, err)
	}
	return client, nil
}

// heartbeatTimeout is the heartbeat client's timeout.
func heartbeatTimeout(statusPeriod time.Duration) time.Duration {
	return min(statusPeriod, nodeLeaseDuration)
}

// apiConnection is what the nodes need of their API server.
type apiConnection struct {
	clients clientFactory
	// caData is the API server's certificate authority (PEM): the nodes' client CA unless
	// --client-ca-file names one. Nil when standalone or without one.
	caData []byte
	// kubeconfigDir is where the embedded API server's kubeconfig was written, "" otherwise.
	kubeconfigDir string
}

// connectAPI connects to the API server cfg names: none when standalone, the one in rc
// (--kubeconfig), or else an embedded fake API server that it starts in g, which reaches the
// nodes' kubelet servers (servers, nil without them) and serves their resource metrics.
func connectAPI(ctx context.Context, cfg *runConfig, rc *rest.Config, clk clock.WithTicker, tracer trace.Tracer, g *group, servers *kubeletServers) (apiConnection, error) {
	if cfg.Standalone {
		return apiConnection{clients: func(string) (nodeClients, error) { return nodeClients{}, nil }}, nil
	}
	var conn apiConnection
	var embedded *fakeapiserver.Server
	if rc != nil {
		ca, err := kubeconfigCA(rc)
		if err != nil {
			return conn, err
		}
		conn.caData = ca
	} else {
		token := cfg.Security.token()
		ca, kubeletClient, err := kubeletClientIdentity(cfg.Security)
		if err != nil {
			return conn, err
		}
		opts := fakeapiserver.Options{
			Clock: clk, Tracer: tracer, Rand: serverRand(), BearerToken: token, DataDir: cfg.DataDir,
			KubeletClientCertificate: kubeletClient,
		}
		var scraper *resourceScraper
		if servers != nil {
			scraper = newResourceScraper(cfg.MetricResolution)
			opts.ResourceMetrics = scraper
			if servers.ca != nil {
				opts.KubeletCertificateAuthority = servers.ca.pool()
			}
		}
		srv, err := fakeapiserver.New(opts)
		if err != nil {
			return conn, fmt.Errorf("embedded API server: %w", err)
		}
		sv, done, err := startEmbeddedAPIServer(ctx, srv, cfg.APIServerAddr, cfg.APIServerFallback, cfg.Security, token, ca)
		if err != nil {
			return conn, errors.Join(fmt.Errorf("start embedded API server on %s: %w", cfg.APIServerAddr, err), srv.Close())
		}
		g.Go(ctx, "embedded API server", func(context.Context) error { return errors.Join(<-done, srv.Close()) })
		ropts := controllers.RunnerOptions{Names: cfg.Controllers, Clock: clk, Tracer: tracer}
		if err := startControllers(ctx, ropts, sv.restConfig(), srv, g); err != nil {
			return conn, err
		}
		if scraper != nil {
			if err := startScraper(ctx, scraper, sv.restConfig(), kubeletClientTLS(kubeletClient, servers.ca), clk, g); err != nil {
				return conn, err
			}
		}
		if cfg.WriteKubeconfig != "" {
			if err := writeKubeconfig(cfg.WriteKubeconfig, sv); err != nil {
				return conn, err
			}
			klog.FromContext(ctx).Info("Wrote a kubeconfig for the embedded API server", "path", cfg.WriteKubeconfig)
			announceKubectl(cfg.Announce, sv.url, cfg.WriteKubeconfig)
			conn.kubeconfigDir = filepath.Dir(cfg.WriteKubeconfig)
		}
		conn.caData = sv.caData
		// One transport for every node's client, with a bound on its connections (transport.go).
		c, err := embeddedRestConfig(sv)
		if err != nil {
			return conn, err
		}
		rc = c
		embedded = srv
	}
	rc = kubeletClientConfig(rc)
	if cfg.APILatency > 0 {
		rc.Wrap(func(rt http.RoundTripper) http.RoundTripper { return withLatency(rt, clk, cfg.APILatency) })
	}
	// Every node of the process shares one heartbeat client: it has no rate limiter and the
	// same timeout for each, and the transport is one already, so a node's heartbeats go out
	// as with a client of its own, without a clientset (56 REST clients, about 20 KB) a node.
	heartbeat, err := heartbeatClient(rc, cfg.Kubelet.NodeStatus.UpdateFrequency)
	if err != nil {
		return conn, err
	}
	conn.clients = func(node string) (nodeClients, error) {
		return newNodeClients(rc, node, heartbeat, embedded, clk, cfg.APILatency, cfg.Kubelet.NodeStatus.UpdateFrequency,
			flowcontrol.NewTokenBucketRateLimiter(kubeAPIQPS, kubeAPIBurst))
	}
	return conn, nil
}

// kubeletClientConfig is a copy of rc as the kubelet configures its API client: its default QPS,
// burst and content type (kubeAPIContentType, the default of --kube-api-content-type and
// KubeletConfiguration's contentType), and minikubelet's user agent. With protobuf the kubelet
// also sets what it accepts, protobuf first and JSON as the fallback, for every request, where
// client-go on its own asks for protobuf only for the built-in kinds' typed clients.
func kubeletClientConfig(rc *rest.Config) *rest.Config {
	rc = rest.CopyConfig(rc)
	rc.QPS, rc.Burst, rc.UserAgent = kubeAPIQPS, kubeAPIBurst, userAgent
	rc.ContentType = kubeAPIContentType
	rc.AcceptContentTypes = kubeAPIContentType + "," + runtime.ContentTypeJSON
	return rc
}

// newNodeClients makes node's clients from rc, whose requests its rate limiter throttles,
// with heartbeat as its heartbeat client (nil makes one of its own, see heartbeatClient).
// With the embedded API server (embedded not nil), the kubelet's hottest requests, and the list
// and watch of a fleet's shared pod watch, go to it in process, after the same waits (the
// limiter, the heartbeat client's timeout, latency on clk),
// unless the log's verbosity shows client-go's request lines (-v 6 and above): those requests
// then stay on the wire, so that the lines are client-go's own. In process they are the node's
// user's (system:node:NAME in the group system:nodes, as a kubelet's client certificate names
// it), and wait for the server's store lock in the turns kube-apiserver's priority levels would
// give them; the shared pod watch's (node "") are exempt, as the server's own work.
func newNodeClients(rc *rest.Config, node string, heartbeat kubernetes.Interface, embedded *fakeapiserver.Server, clk clock.Clock, latency, statusPeriod time.Duration, limiter flowcontrol.RateLimiter) (nodeClients, error) {
	rc = rest.CopyConfig(rc)
	rc.RateLimiter = limiter
	client, err := newClientset(rc)
	if err != nil {
		return nodeClients{}, fmt.Errorf("create API client for %s: %w", rc.Host, err)
	}
	if heartbeat == nil {
		if heartbeat, err = heartbeatClient(rc, statusPeriod); err != nil {
			return nodeClients{}, err
		}
	}
	c := nodeClients{api: client, heartbeat: heartbeat, events: &typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")}}
	if embedded == nil || klog.V(6).Enabled() {
		return c, nil
	}
	base, err := url.Parse(rc.Host)
	if err != nil {
		return nodeClients{}, fmt.Errorf("API server URL %q: %w", rc.Host, err)
	}
	api := &wire{limiter: limiter, clock: clk, latency: latency, base: base}
	hb := &wire{timeout: heartbeatTimeout(statusPeriod), clock: clk, latency: latency, base: base}
	direct := embedded.Direct(rc.UserAgent)
	if node != "" {
		direct = embedded.DirectAs(rc.UserAgent, authenticationv1.UserInfo{
			Username: "system:node:" + node, Groups: []string{"system:nodes", "system:authenticated"},
		})
	}
	c.writes, c.events = newDirectWrites(direct, api, hb, c.events)
	c.pods = newDirectPods(direct, api)
	return c, nil
}

// kubeconfigCA is the certificate authority a kubeconfig trusts, PEM, nil for none.
func kubeconfigCA(rc *rest.Config) ([]byte, error) {
	if len(rc.TLSClientConfig.CAData) > 0 {
		return rc.TLSClientConfig.CAData, nil
	}
	if f := rc.TLSClientConfig.CAFile; f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig's certificate authority: %w", err)
		}
		return b, nil
	}
	return nil, nil
}

// startScraper runs the metrics scraper in g with its own client of the API server.
func startScraper(ctx context.Context, s *resourceScraper, rc *rest.Config, tlsConfig *tls.Config, clk clock.WithTicker, g *group) error {
	rc = rest.CopyConfig(rc)
	rc.UserAgent = "minikubelet-metrics"
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("metrics scraper's API client: %w", err)
	}
	g.Go(ctx, "metrics scraper", func(ctx context.Context) error { return s.Run(ctx, client, tlsConfig, clk) })
	return nil
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

// recorder is the event recorder of node: a new broadcaster's, which sends the events to sink
// when send is set and logs them at V(3) when logs is. With neither, the broadcaster would drop
// every event (the trace has them already), so there is none, and no recorder: a broadcaster's
// queue of 1,000 events and its goroutine less a node (kubemark's hollow nodes, which send no
// events, at the default verbosity).
func (b *broadcasters) recorder(node string, send, logs bool, sink record.EventSink) record.EventRecorder {
	if !send && !logs {
		return nil
	}
	eb := b.new()
	if logs {
		eb.StartStructuredLogging(3)
	}
	if send {
		eb.StartRecordingToSink(sink)
	}
	return eb.NewRecorder(scheme.Scheme, v1.EventSource{Component: eventComponent, Host: node})
}

func (b *broadcasters) shutdown() {
	for _, eb := range b.all {
		eb.Shutdown()
	}
}

// logsEvents is whether a node's event broadcaster logs its events, as the kubelet's does at
// V(3). Below that verbosity the lines never show, and the process's verbosity stays what its
// flags made it (there is no /debug/flags/v), so the log watcher, with its queue of 1,000
// events (32 KB) and its goroutine a node, is left out; with --vmodule, whose per-file levels a
// check from this file cannot see, it stays.
func logsEvents(logger klog.Logger, vmodule bool) bool {
	return vmodule || logger.V(3).Enabled()
}

// kubeletDeps are what startKubelet shares between the nodes it starts.
type kubeletDeps struct {
	clock        clock.WithTicker
	tracer       trace.Tracer
	clients      clientFactory
	broadcasters *broadcasters
	podWatch     *kubelet.PodWatch // with many nodes and an API server: the one pod watch they share
	fileWatch    *filewatch.Shared // with a root or static pod directory: the one inotify instance
	servers      *kubeletServers   // nil serves no kubelet server
	nodeIP       net.IP            // every node's InternalIP
}

// startKubelet starts every simulated node of cfg (see nodeNames), sharing the event
// broadcaster, the API client's transport, one pod watch (with the node, service and object
// watches beside it), one file watch and the kubelet server.
func startKubelet(ctx context.Context, cfg *runConfig, g *group, d kubeletDeps) error {
	names := nodeNames(cfg)
	if cfg.RootDir != "" || cfg.Kubelet.Sources.StaticPodPath != "" {
		// The plugin watchers and file sources of every node share one inotify instance, where
		// N kubelets would open N and meet fs.inotify.max_user_instances.
		fw, err := filewatch.NewInotify()
		if err != nil {
			return err
		}
		d.fileWatch = fw
		g.Go(ctx, "file watch", fw.Run)
	}
	if len(names) > 1 {
		c, err := d.clients("")
		if err != nil {
			return err
		}
		if client := c.api; client != nil {
			// A fleet: one watch over every pod feeds every node's api source.
			opts := kubelet.PodWatchOptions{Client: client, Pods: c.pods, Clock: d.clock, Nodes: len(names)}
			if d.podWatch, err = kubelet.NewPodWatch(opts); err != nil {
				return err
			}
			g.Go(ctx, "shared api source", d.podWatch.Run)
		}
	}
	for _, name := range names {
		node := *cfg
		node.NodeName = name
		if err := startNode(ctx, &node, len(names) > 1, g, d); err != nil {
			return err
		}
	}
	return nil
}

// startNode builds one node's world (the API client, its event broadcaster, its root directory)
// and its kubelet with package kubelet's New, and runs it in g, as the kubelet's RunKubelet does.
// In a fleet, each node's log lines and trace events name it, and its root directory is
// <root>/<node>.
func startNode(ctx context.Context, cfg *runConfig, fleet bool, g *group, d kubeletDeps) error {
	logger := klog.FromContext(ctx)
	rootDir := cfg.RootDir
	if fleet {
		logger = klog.LoggerWithValues(logger, "node", cfg.NodeName)
		ctx = klog.NewContext(ctx, logger)
		// One trace holds every node's events: each says whose it is.
		shared, name := d.tracer, cfg.NodeName
		d.tracer = trace.Func(func(ev trace.Event) {
			ev.Node = name
			shared.Emit(ev)
		})
		if rootDir != "" {
			rootDir = filepath.Join(rootDir, cfg.NodeName)
		}
	}
	clients, err := d.clients(cfg.NodeName)
	if err != nil {
		return err
	}
	client := clients.api
	send := client != nil && !cfg.NoEventClient
	switch {
	case client == nil:
		logger.Info("No API server defined, no events will be sent to the API server")
	case !send:
		// kubemark's choice: a kubelet without an event client, whose broadcaster only logs.
		logger.V(2).Info("No event client, no events will be sent to the API server")
	}
	world := kubelet.World{
		API:          client,
		HeartbeatAPI: clients.heartbeat,
		Writes:       clients.writes,
	}
	if d.podWatch != nil {
		// The fleet's one service informer and one reflector per watched ConfigMap or Secret.
		world.Objects = d.podWatch.Objects()
	}
	world.Events = d.broadcasters.recorder(cfg.NodeName, send, logsEvents(logger, cfg.VModule), clients.events)
	if rootDir != "" {
		// The kubelet's plugin registry and device plugin directory under its root directory,
		// the allocation checkpoint and the pods' volume directories beside them.
		world.Plugins = kubelet.PluginsOnDisk(rootDir)
		world.Allocations = kubelet.AllocationsOnDisk(rootDir)
		world.PodDirs = kubelet.PodDirsOnDisk(rootDir, logger)
	}
	kopts := kubelet.Options{
		NodeName:  cfg.NodeName,
		NodeIP:    d.nodeIP.String(),
		Config:    &cfg.Kubelet,
		Clock:     d.clock,
		Tracer:    d.tracer,
		Seed:      uint64(d.clock.Now().UnixNano()),
		World:     world,
		Logger:    logger,
		Latencies: fakeruntime.DefaultLatencies,
	}
	if cfg.RuntimeLatencies != nil {
		kopts.Latencies = *cfg.RuntimeLatencies
	}
	if cfg.SimulatedNodeTaint {
		kopts.RegisterWithTaints = []v1.Taint{nodestatus.SimulatedTaint}
	}
	if d.servers != nil {
		kopts.KubeletPort = d.servers.endpoint(cfg.NodeName).port
	}
	k, err := kubelet.New(kopts)
	if err != nil {
		return fmt.Errorf("build node %s: %w", cfg.NodeName, err)
	}
	ropts := kubelet.RunOptions{PodWatch: d.podWatch, FileWatch: d.fileWatch}
	if rootDir != "" {
		// The runtime's sandboxes and containers outlive the process, as a CRI runtime's do.
		ropts.RuntimeState = filepath.Join(rootDir, runtimeStateFile)
	}
	if d.servers != nil {
		if err := d.servers.serve(ctx, cfg.NodeName, k, client, d.clock, g); err != nil {
			return err
		}
		ropts.Snapshots, ropts.SnapshotPeriod = true, cfg.SnapshotPeriod
	}
	g.Go(ctx, "kubelet "+cfg.NodeName, func(ctx context.Context) error { return k.Run(ctx, ropts) })
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
