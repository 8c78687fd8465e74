package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/controllers/nodelifecycle"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// apiserverConfig is the configuration of `minikubelet apiserver`.
type apiserverConfig struct {
	Addr            string
	WriteKubeconfig string
	DataDir         string
	Security        securityConfig
	Controllers     string
	// NodeMonitorPeriod and NodeMonitorGracePeriod are kube-controller-manager's flags of the
	// node lifecycle controller.
	NodeMonitorPeriod, NodeMonitorGracePeriod time.Duration
}

func newAPIServerCommand() *cobra.Command {
	var cfg apiserverConfig
	cmd := &cobra.Command{
		Use:   "apiserver",
		Short: "Run the fake API server alone, for several minikubelets (one per node) to share",
		Long: `Run the fake API server alone, for several minikubelets (one per node) to share.

It serves pods, nodes, events, namespaces, leases, CSINodes, ConfigMaps, Secrets,
ServiceAccounts, Services, Endpoints, EndpointSlices and ResourceSlices (its log line lists
them), but runs none of their controllers beyond node lifecycle, pod GC and a scheduler: for
Deployments, endpoints controllers and the rest, use a real control plane and point minikubelet
at it with --kubeconfig.

Without --data-dir it keeps every object in memory: when it stops, its objects are gone, and a
restarted server starts empty. With --data-dir it keeps them in a database
in that directory, and a server started again on it carries on with the same objects and resource
versions. UIDs are random at every start.

It serves HTTPS with a self-signed certificate, and every request must carry a bearer token,
random at every start unless --token sets it; --write-kubeconfig writes both into the kubeconfig.
--no-auth drops the token and --no-tls (with --no-auth) serves plain HTTP. Any client with the
token may do anything: see docs/security.md. On a wildcard address (0.0.0.0, ::) the certificate
covers every interface's address and the kubeconfig names the host's own; --tls-san adds names.

It logs its URL and what it serves. Exit codes: 0 after SIGINT or SIGTERM, 1 when it cannot
serve (an address in use, a damaged --data-dir database, a server its clients could not reach),
2 for a usage error.`,
		Example: `  minikubelet apiserver --addr 127.0.0.1:6443 --write-kubeconfig /tmp/kubeconfig
  minikubelet run --kubeconfig /tmp/kubeconfig --hostname-override node-1 --pod-manifest-path manifests
  minikubelet apiserver --data-dir /tmp/apiserver-data --token secret
  minikubelet apiserver --addr 0.0.0.0:6443 --tls-san apiserver.example --write-kubeconfig /tmp/kubeconfig`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAPIServer(cmd.Context(), cfg, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&cfg.Addr, "addr", "127.0.0.1:8080", "address to listen on; loopback unless told otherwise")
	cmd.Flags().StringVar(&cfg.WriteKubeconfig, "write-kubeconfig", "", "write a kubeconfig for this server to this file")
	bindDataDir(cmd.Flags(), &cfg.DataDir)
	cfg.Security.bind(cmd.Flags())
	bindControllers(cmd.Flags(), &cfg.Controllers)
	cmd.Flags().DurationVar(&cfg.NodeMonitorPeriod, "node-monitor-period", nodelifecycle.DefaultMonitorPeriod,
		"how often the node lifecycle controller checks the nodes' heartbeats (kube-controller-manager's flag)")
	cmd.Flags().DurationVar(&cfg.NodeMonitorGracePeriod, "node-monitor-grace-period", nodelifecycle.DefaultMonitorGracePeriod,
		"how long a node may go without a status or lease renewal before it is Unknown (kube-controller-manager's flag)")
	return cmd
}

func runAPIServer(ctx context.Context, cfg apiserverConfig, out io.Writer) error {
	if err := cfg.Security.validate(); err != nil {
		return err
	}
	names, err := controllers.ParseNames(cfg.Controllers)
	if err != nil {
		return fmt.Errorf("--controllers: %w", err)
	}
	token := cfg.Security.token()
	ca, kubeletClient, err := kubeletClientIdentity(cfg.Security)
	if err != nil {
		return err
	}
	srv, err := fakeapiserver.New(fakeapiserver.Options{
		Clock: clock.RealClock{}, Tracer: trace.Discard, Rand: serverRand(), BearerToken: token, DataDir: cfg.DataDir,
		KubeletClientCertificate: kubeletClient,
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	l, sv, err := cfg.Security.listen(cfg.Addr, token, ca)
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx)
	warnIfExposed(logger, l.Addr(), sv)
	if cfg.WriteKubeconfig != "" {
		if err := writeKubeconfig(cfg.WriteKubeconfig, sv); err != nil {
			l.Close()
			return err
		}
	} else if token != "" && cfg.Security.Token == "" {
		klog.FromContext(ctx).Info("The fake API server requires a random bearer token that only --write-kubeconfig reveals: set --write-kubeconfig, --token or --no-auth")
	}
	storage := "memory only, empty at every start"
	if cfg.DataDir != "" {
		storage = "kept in " + cfg.DataDir
	}
	logger.Info("Serving the fake API server", "url", sv.url, "kubeconfig", cfg.WriteKubeconfig,
		"resources", srv.ServedResources(), "storage", storage)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l) }()
	if err := checkServing(ctx, sv); err != nil {
		cancel()
		return errors.Join(err, <-served)
	}
	g := &group{cancel: cancel}
	ropts := controllers.RunnerOptions{Names: names, Clock: clock.RealClock{}, Tracer: trace.Discard,
		NodeMonitorPeriod: cfg.NodeMonitorPeriod, NodeMonitorGracePeriod: cfg.NodeMonitorGracePeriod}
	if err := startControllers(ctx, ropts, sv.restConfig(), srv, g); err != nil {
		cancel()
		return errors.Join(err, <-served)
	}
	// Printed last, so that whoever waits for this line finds the kubeconfig written.
	fmt.Fprintf(out, "fake API server listening on %s\n", sv.url)
	err = <-served
	cancel()
	g.wait()
	return errors.Join(err, g.err)
}

// checkServingTimeout bounds the start's check that the server answers at its URL.
const checkServingTimeout = 30 * time.Second

// checkServing asks the server, as its clients will, whether it is ready: at the URL the
// kubeconfig names, verifying the certificate against its authority, with its token. A start
// whose clients could not connect (a certificate that does not cover the address, an address
// that does not reach this server) fails at once with the reason, instead of serving nobody
// and exiting 0.
func checkServing(ctx context.Context, sv serving) error {
	rc := sv.restConfig()
	rc.Timeout = checkServingTimeout
	client, err := rest.UnversionedRESTClientFor(withCodecs(rc))
	if err != nil {
		return fmt.Errorf("check the API server at %s: %w", sv.url, err)
	}
	if _, err := client.Get().AbsPath("/readyz").DoRaw(ctx); err != nil {
		return fmt.Errorf("the API server does not answer its clients at %s: %w", sv.url, err)
	}
	return nil
}

// withCodecs gives rc the serializers a REST client needs for raw requests.
func withCodecs(rc *rest.Config) *rest.Config {
	rc.ContentConfig.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	return rc
}

// controllersUserAgent is the User-Agent of the controllers' requests.
const controllersUserAgent = "minikubelet-controllers"

// startControllers runs the controllers opts names in g against the API server rc reaches
// (controllersOptions).
func startControllers(ctx context.Context, opts controllers.RunnerOptions, rc *rest.Config, embedded *fakeapiserver.Server, g *group) error {
	if len(opts.Names) == 0 {
		return nil
	}
	opts, err := controllersOptions(opts, rc, embedded)
	if err != nil {
		return err
	}
	r, err := controllers.NewRunner(opts)
	if err != nil {
		return err
	}
	g.Go(ctx, "controllers", r.Run)
	return nil
}

// controllersOptions gives opts the controllers' client of the API server rc reaches. When that
// server is embedded, the process's own (not nil), the controllers' pods, nodes and leases
// informers list and watch it in process (controllers.RunnerOptions.Pods, Nodes and Leases), a
// list after waiting for their client's rate limiter as its requests do (a watch waits for none,
// as client-go's), unless the log's verbosity shows client-go's request lines (-v 6 and above),
// as the nodes' shared pod watch does; every other request stays on the wire.
func controllersOptions(opts controllers.RunnerOptions, rc *rest.Config, embedded *fakeapiserver.Server) (controllers.RunnerOptions, error) {
	rc = rest.CopyConfig(rc)
	rc.QPS, rc.Burst, rc.UserAgent = kubeAPIQPS, kubeAPIBurst, controllersUserAgent
	// The clientset's one token bucket, made here so that the in-process list waits for it too.
	limiter := flowcontrol.NewTokenBucketRateLimiter(rc.QPS, rc.Burst)
	rc.RateLimiter = limiter
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return opts, fmt.Errorf("controllers' API client: %w", err)
	}
	opts.Clientset = client
	if embedded != nil && !klog.V(6).Enabled() {
		base, err := url.Parse(rc.Host)
		if err != nil {
			return opts, fmt.Errorf("API server URL %q: %w", rc.Host, err)
		}
		// The controllers' in-process lists are the controller manager's, whose requests
		// kube-apiserver's flow schema kube-controller-manager puts in workload-high.
		direct := embedded.DirectAs(controllersUserAgent, authenticationv1.UserInfo{
			Username: "system:kube-controller-manager", Groups: []string{"system:authenticated"},
		})
		w := &wire{limiter: limiter, clock: opts.Clock, base: base}
		opts.Pods, opts.Nodes, opts.Leases = newDirectPods(direct, w), newDirectNodes(direct, w), newDirectLeases(direct, w)
	}
	return opts, nil
}

// announceKubectl prints where the API server is and a kubectl command line to paste, apart from
// the trace and the logs.
func announceKubectl(w io.Writer, url, kubeconfig string) {
	if w == nil {
		return
	}
	fmt.Fprintf(w, "API server %s; watch the node's pods with:\n  kubectl --kubeconfig %s get pods -A -w\n", url, kubeconfig)
}

// startEmbeddedAPIServer listens on addr and serves srv, which requires token, until ctx is done.
// It returns what clients need and a channel that yields Serve's result once it has stopped.
// With fallback, an address in use gives way to a free port on loopback, with a warning.
func startEmbeddedAPIServer(ctx context.Context, srv *fakeapiserver.Server, addr string, fallback bool, sec securityConfig, token string, ca *authority) (serving, <-chan error, error) {
	l, err := fakeapiserver.Listen(addr)
	if err != nil && fallback && errors.Is(err, syscall.EADDRINUSE) {
		klog.FromContext(ctx).Info("Warning: the default API server address is in use; taking a free port", "addr", addr, "err", err)
		l, err = fakeapiserver.Listen(fallbackAPIServerAddr)
	}
	if err != nil {
		return serving{}, nil, err
	}
	l, sv, err := sec.secure(l, token, ca)
	if err != nil {
		return serving{}, nil, err
	}
	serveCtx, stopServe := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- srv.Serve(serveCtx, l)
		stopServe()
	}()
	if err := checkServing(ctx, sv); err != nil {
		stopServe()
		return serving{}, nil, errors.Join(err, <-done)
	}
	klog.FromContext(ctx).Info("Started embedded API server", "url", sv.url)
	warnIfExposed(klog.FromContext(ctx), l.Addr(), sv)
	return sv, done, nil
}

// The identity a fake API server calls kubelets with, kubeadm's apiserver-kubelet-client.
const (
	kubeletClientUser  = "kube-apiserver-kubelet-client"
	kubeletClientGroup = "kubeadm:cluster-admins"
)

// kubeletClientIdentity makes the authority of a fake API server's certificates and the client
// certificate it calls kubelets with, which that authority signs: a kubelet whose client CA is
// the authority in its kubeconfig (run's default) authenticates the server, as kubeadm's
// kubelets authenticate kube-apiserver with the cluster's CA. Without TLS there is neither.
func kubeletClientIdentity(sec securityConfig) (*authority, *tls.Certificate, error) {
	if sec.NoTLS {
		return nil, nil, nil
	}
	ca, err := newAuthority(apiServerAuthorityName)
	if err != nil {
		return nil, nil, err
	}
	cert, err := ca.client(kubeletClientUser, kubeletClientGroup)
	if err != nil {
		return nil, nil, err
	}
	return ca, &cert, nil
}

// restConfigFromKubeconfig loads an existing kubeconfig, for --kubeconfig.
func restConfigFromKubeconfig(path string) (*rest.Config, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}
