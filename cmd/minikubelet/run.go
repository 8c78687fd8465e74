package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

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

	"github.com/minikubelet/minikubelet/fakeapiserver"
	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sources"
	"github.com/minikubelet/minikubelet/syncloop"
	"github.com/minikubelet/minikubelet/trace"
)

// The kubelet's defaults for its API client (kubeAPIQPS, kubeAPIBurst) and its event source.
const (
	kubeAPIQPS     = 50
	kubeAPIBurst   = 100
	eventComponent = "kubelet"
	userAgent      = "minikubelet"
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
	tracer, err := trace.NewRecorder(trace.RecorderOptions{Clock: clk, Out: out, Format: cfg.TraceFormat})
	if err != nil {
		return err
	}

	apiCtx, stopAPI := context.WithCancel(ctx)
	defer stopAPI()
	api := &group{cancel: stopAPI}
	client, err := connectAPI(apiCtx, cfg, clk, tracer, api)
	if err != nil {
		stopAPI()
		api.wait()
		return err
	}

	kubeCtx, stopKubelet := context.WithCancel(apiCtx)
	defer stopKubelet()
	kubelet := &group{cancel: stopKubelet}
	// The broadcaster takes the logger from kubeCtx but not its cancellation: it stops after the
	// kubelet's runners, so that the events they recorded last are still sent.
	broadcaster := record.NewBroadcaster(record.WithContext(context.WithoutCancel(kubeCtx)))
	err = startKubelet(kubeCtx, cfg, kubelet, kubeletDeps{
		clock:       clk,
		tracer:      tracer,
		client:      client,
		broadcaster: broadcaster,
	})
	if err != nil {
		stopKubelet()
	}
	<-kubeCtx.Done()
	kubelet.wait()
	broadcaster.Shutdown()
	stopAPI()
	api.wait()
	return errors.Join(err, kubelet.err, api.err, tracer.Err())
}

// connectAPI returns the client of the API server cfg names: none when standalone, the one in
// --kubeconfig, or else an embedded fake API server that it starts in g.
func connectAPI(ctx context.Context, cfg *runConfig, clk clock.WithTicker, tracer trace.Tracer, g *group) (kubernetes.Interface, error) {
	if cfg.Standalone {
		return nil, nil
	}
	var rc *rest.Config
	if cfg.Kubeconfig != "" {
		c, err := restConfigFromKubeconfig(cfg.Kubeconfig)
		if err != nil {
			return nil, err
		}
		rc = c
	} else {
		srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clk, Tracer: tracer, Rand: serverRand()})
		if err != nil {
			return nil, fmt.Errorf("embedded API server: %w", err)
		}
		url, done, err := startEmbeddedAPIServer(ctx, srv, cfg.APIServerAddr, cfg.APIServerFallback)
		if err != nil {
			return nil, fmt.Errorf("start embedded API server on %s: %w", cfg.APIServerAddr, err)
		}
		g.Go(ctx, "embedded API server", func(context.Context) error { return <-done })
		if cfg.WriteKubeconfig != "" {
			if err := writeKubeconfig(cfg.WriteKubeconfig, url); err != nil {
				return nil, err
			}
			klog.FromContext(ctx).Info("Wrote a kubeconfig for the embedded API server", "path", cfg.WriteKubeconfig)
			announceKubectl(cfg.Announce, url, cfg.WriteKubeconfig)
		}
		rc = &rest.Config{Host: url}
	}
	rc = rest.CopyConfig(rc)
	rc.QPS, rc.Burst, rc.UserAgent = kubeAPIQPS, kubeAPIBurst, userAgent
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("create API client for %s: %w", rc.Host, err)
	}
	return client, nil
}

// kubeletDeps are what startKubelet shares between the components it builds.
type kubeletDeps struct {
	clock       clock.WithTicker
	tracer      trace.Tracer
	client      kubernetes.Interface // nil when standalone
	broadcaster record.EventBroadcaster
}

// startKubelet builds the pod sources, PodConfig and the sync side, as the kubelet's
// RunKubelet does, and starts their runners in g.
func startKubelet(ctx context.Context, cfg *runConfig, g *group, d kubeletDeps) error {
	logger := klog.FromContext(ctx)
	d.broadcaster.StartStructuredLogging(3)
	if d.client != nil {
		d.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: d.client.CoreV1().Events("")})
	} else {
		logger.Info("No API server defined, no events will be sent to the API server")
	}
	recorder := d.broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: eventComponent, Host: cfg.NodeName})

	pc, err := podconfig.New(podconfig.StorageOptions{Clock: d.clock, Tracer: d.tracer, Recorder: recorder})
	if err != nil {
		return fmt.Errorf("pod config: %w", err)
	}
	// Sources register in the kubelet's order: file, http, api.
	type runner struct {
		name string
		run  func(context.Context) error
	}
	var sourceRunners []runner
	if cfg.StaticPodPath != "" {
		logger.Info("Adding static pod path", "path", cfg.StaticPodPath)
		core, err := sources.NewFile(sources.FileOptions{
			Path: cfg.StaticPodPath, NodeName: cfg.NodeName, Period: cfg.FileCheckFrequency,
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
	if cfg.StaticPodURL != "" {
		logger.Info("Adding pod URL with HTTP header", "URL", cfg.StaticPodURL, "header", cfg.StaticPodURLHeader)
		core, err := sources.NewHTTP(sources.HTTPOptions{
			URL: cfg.StaticPodURL, Header: cfg.StaticPodURLHeader, NodeName: cfg.NodeName,
			Period: cfg.HTTPCheckFrequency, Clock: d.clock, Tracer: d.tracer,
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
	if d.client != nil {
		logger.Info("Adding apiserver pod source")
		// The kubelet waits for its node informer, which lists and watches only its own node,
		// before it watches pods.
		nodeInformers = informers.NewSharedInformerFactoryWithOptions(d.client, 0,
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
			Client:        d.client,
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

	n, err := kubelet.New(kubelet.Options{
		NodeName:      cfg.NodeName,
		NodeIP:        nodeIP,
		Clock:         d.clock,
		Tracer:        d.tracer,
		Seed:          uint64(d.clock.Now().UnixNano()),
		Client:        d.client,
		Recorder:      recorder,
		Latencies:     fakeruntime.DefaultLatencies,
		SyncFrequency: cfg.SyncFrequency,
		SourcesReady:  pc.SeenAllSources,
	})
	if err != nil {
		return fmt.Errorf("build node %s: %w", cfg.NodeName, err)
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
	loopRunner, err := syncloop.NewRunner(syncloop.RunnerOptions{Loop: n.Loop, Updates: pc.Updates(), Clock: d.clock})
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
