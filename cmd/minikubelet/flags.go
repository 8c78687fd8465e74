package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/kubelet/config"
)

// runFlags are the raw command-line values of `minikubelet run`.
type runFlags struct {
	ui                 string
	config             string
	podManifestPath    string
	manifestURL        string
	manifestURLHeader  string
	fileCheckFrequency string
	httpCheckFrequency string
	syncFrequency      string
	hostnameOverride   string
	trace              traceFlags
	apiserverAddr      string
	kubeconfig         string
	writeKubeconfig    string
	standalone         bool
	rootDir            string
	security           securityConfig
	dataDir            string
	address            string
	port               int
	enableServer       bool
	debuggingHandlers  bool
	nodes              int
	nodeNamePrefix     string
	simulatedNodeTaint bool
	controllers        string
	apiLatency         time.Duration
	runtimeLatencies   string
	sendEvents         bool
	maxPods            int32
	serializeImagePull bool
	nodeStatusUpdate   time.Duration
	nodeIP             string
	certDir            string
	serverAuth         serverAuthFlags
	accepted           acceptedFlags
	// warn receives the warnings of resolve (standard error); nil writes none.
	warn io.Writer
}

func (f *runFlags) bind(fs *pflag.FlagSet) {
	// The flags show the kubelet's defaults; only the flags given are laid over --config.
	defaults := config.Default()
	fs.StringVar(&f.config, "config", "", "a KubeletConfiguration (kubelet.config.k8s.io/v1beta1) file; flags override its values")
	fs.StringVar(&f.podManifestPath, "pod-manifest-path", "", "static pod directory or file (staticPodPath)")
	fs.StringVar(&f.manifestURL, "manifest-url", "", "URL to poll for static pods (staticPodURL)")
	fs.StringVar(&f.manifestURLHeader, "manifest-url-header", "", "HTTP headers for --manifest-url, as 'key:value,key:value' (staticPodURLHeader)")
	fs.StringVar(&f.fileCheckFrequency, "file-check-frequency", defaults.Sources.FileCheckFrequency.String(), "how often the static pod path is relisted (fileCheckFrequency)")
	fs.StringVar(&f.httpCheckFrequency, "http-check-frequency", defaults.Sources.HTTPCheckFrequency.String(), "how often --manifest-url is polled (httpCheckFrequency)")
	fs.StringVar(&f.syncFrequency, "sync-frequency", defaults.SyncFrequency.String(), "pod worker resync interval (syncFrequency)")
	fs.StringVar(&f.hostnameOverride, "hostname-override", "", "the node name; defaults to the lowercased hostname")
	f.trace.bind(fs)
	fs.StringVar(&f.apiserverAddr, "apiserver-addr", defaultAPIServerAddr, "address of the embedded API server; when the default is taken, a free port on 127.0.0.1")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "use the API server in this kubeconfig instead of the embedded one")
	fs.StringVar(&f.writeKubeconfig, "write-kubeconfig", "", "write a kubeconfig for the embedded API server to this file (default minikubelet/kubeconfig in the user's cache directory, such as ~/.cache/minikubelet/kubeconfig)")
	fs.BoolVar(&f.standalone, "standalone", false, "run without an API server, like a kubelet without a kubeconfig")
	fs.StringVar(&f.rootDir, "root-dir", defaultRootDir(), "directory for plugins_registry, device-plugins, the runtime's state and allocated_pods_state (the kubelet's /var/lib/kubelet); with --nodes above 1, each node's under <root-dir>/<node>")
	f.security.bind(fs)
	bindDataDir(fs, &f.dataDir)
	fs.StringVar(&f.ui, "ui", "", "serve the live timeline view (a page and its server-sent events) at this address, such as 127.0.0.1:8080")
	fs.StringVar(&f.address, "address", "", "IP address the kubelet servers listen on (address); by default each node's own address (--node-ip), where the kubelet's default is 0.0.0.0")
	fs.IntVar(&f.port, "port", int(defaults.Server.Port), "port of the first node's kubelet server (port), the next nodes' on the ports after it; 0 picks free ones; the default gives way to a free port when taken")
	fs.BoolVar(&f.enableServer, "enable-server", defaults.Server.Enable, "serve the kubelet's HTTP server (enableServer)")
	fs.BoolVar(&f.debuggingHandlers, "enable-debugging-handlers", defaults.Server.EnableDebuggingHandlers, "serve the kubelet server's logs, configz, exec and profiling paths (enableDebuggingHandlers; the profiles also need enableProfilingHandler in --config)")
	fs.DurationVar(&f.apiLatency, "api-latency", defaultAPILatency, "delay of every request of the kubelet to the API server, the network a real node has; 0 for none")
	fs.StringVar(&f.runtimeLatencies, "runtime-latencies", "", "how long the simulated container runtime's steps take: a duration for every step (0 makes them instant, as KWOK and kubemark are), "+
		"or key=duration pairs, comma-separated, for "+strings.Join(runtimeLatencyKeys, ", ")+" (the others keep their defaults: "+runtimeLatencyDefaults()+")")
	fs.BoolVar(&f.sendEvents, "send-events", true, "send the kubelet's Kubernetes events (Pulling, Pulled, Created, Started, ...) to the API server; "+
		"false leaves the nodes without an event client, as kubemark's hollow nodes have none: the events are still logged and traced, not sent")
	fs.Int32Var(&f.maxPods, "max-pods", defaults.Machine.MaxPods, "the most pods the node admits (maxPods)")
	fs.BoolVar(&f.serializeImagePull, "serialize-image-pulls", defaults.ImagePulls.Serialize, "pull one image at a time (serializeImagePulls)")
	fs.DurationVar(&f.nodeStatusUpdate, "node-status-update-frequency", defaults.NodeStatus.UpdateFrequency, "how often the node's status is computed and posted (nodeStatusUpdateFrequency)")
	fs.StringVar(&f.nodeIP, "node-ip", "", "IP address of the node, its InternalIP, which the API server and Prometheus reach its kubelet server at; "+
		"by default the address toward the --kubeconfig API server, loopback with the embedded one")
	fs.StringVar(&f.certDir, "cert-dir", "", "where the kubelet servers' certificate authority and Prometheus targets are written when no kubeconfig is (default <root-dir>/pki)")
	f.serverAuth.bind(fs, defaults)
	f.accepted.bind(fs)
	fs.IntVar(&f.nodes, "nodes", 1, "how many nodes to simulate in this process, each with its own kubelet server, on the ports after --port")
	fs.StringVar(&f.nodeNamePrefix, "node-name-prefix", "", "with --nodes above 1, node i is named <prefix>-<i>; defaults to the node name")
	fs.BoolVar(&f.simulatedNodeTaint, "simulated-node-taint", false, "register the nodes with the taint minikubelet.io/simulated=true:NoSchedule, so that only pods that tolerate it are scheduled to them (every node carries the label minikubelet.io/simulated=true)")
	bindControllers(fs, &f.controllers)
}

// bindControllers adds --controllers, the control-plane controllers that run beside the fake API
// server.
func bindControllers(fs *pflag.FlagSet, to *string) {
	fs.StringVar(to, "controllers", strings.Join(controllers.Names, ","),
		"control-plane controllers to run beside the embedded API server, comma-separated: "+
			strings.Join(controllers.Names, ", ")+"; empty runs none")
}

// resolve merges the --config file and the flags, flags winning where they were set, as the
// kubelet does.
func (f *runFlags) resolve(fs *pflag.FlagSet) (*runConfig, error) {
	cfg := &runConfig{
		APIServerAddr:      f.apiserverAddr,
		APIServerFallback:  !fs.Changed("apiserver-addr"),
		Kubeconfig:         f.kubeconfig,
		WriteKubeconfig:    f.writeKubeconfig,
		Standalone:         f.standalone,
		RootDir:            f.rootDir,
		Security:           f.security,
		DataDir:            f.dataDir,
		Nodes:              f.nodes,
		NodeNamePrefix:     strings.ToLower(f.nodeNamePrefix),
		SimulatedNodeTaint: f.simulatedNodeTaint,
		SnapshotPeriod:     defaultSnapshotPeriod,
		APILatency:         f.apiLatency,
		NoEventClient:      !f.sendEvents,
		UIAddr:             f.ui,
		CertDir:            f.certDir,
	}
	if f.nodes < 1 {
		return nil, fmt.Errorf("--nodes must be at least 1, got %d", f.nodes)
	}
	lat, err := parseRuntimeLatencies(f.runtimeLatencies)
	if err != nil {
		return nil, err
	}
	cfg.RuntimeLatencies = &lat
	nodeIP, err := parseNodeIP(f.nodeIP)
	if err != nil {
		return nil, err
	}
	cfg.NodeIP = nodeIP
	names, err := controllers.ParseNames(f.controllers)
	if err != nil {
		return nil, fmt.Errorf("--controllers: %w", err)
	}
	cfg.Controllers = names
	kc, chosen, err := f.kubeletConfig(fs)
	if err != nil {
		return nil, err
	}
	cfg.Kubelet = *kc
	if kc.Server.Enable {
		cfg.KubeletAddr = net.JoinHostPort(kc.Server.Address, strconv.Itoa(int(kc.Server.Port)))
		cfg.KubeletPortFallback = !chosen.port
	}
	if f.hostnameOverride != "" {
		// The kubelet takes the override as it is, lowercased; an invalid name fails only
		// when the node registers.
		if errs := validation.IsDNS1123Subdomain(strings.ToLower(f.hostnameOverride)); len(errs) > 0 && f.warn != nil {
			fmt.Fprintf(f.warn, "Warning: --hostname-override %q is not a valid node name: %s\n", f.hostnameOverride, strings.Join(errs, "; "))
		}
	}
	cfg.NodeName = strings.ToLower(f.hostnameOverride)
	if cfg.NodeName == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("find the node name: %w", err)
		}
		cfg.NodeName = strings.ToLower(host)
	}
	if cfg.RootDir != "" {
		// Sockets are dialled as unix://PATH, which needs an absolute path.
		abs, err := filepath.Abs(cfg.RootDir)
		if err != nil {
			return nil, fmt.Errorf("--root-dir: %w", err)
		}
		cfg.RootDir = abs
		if cfg.CertDir == "" {
			cfg.CertDir = filepath.Join(abs, "pki") // the kubelet's default --cert-dir
		}
	}
	if cfg.WriteKubeconfig == "" && cfg.Kubeconfig == "" && !cfg.Standalone {
		path, err := defaultKubeconfigPath()
		if err != nil {
			return nil, err
		}
		cfg.WriteKubeconfig = path
	}
	tv, err := f.trace.resolve()
	if err != nil {
		return nil, err
	}
	cfg.TraceFormat, cfg.TraceView = tv.Format, tv
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if f.warn != nil {
		f.accepted.report(f.warn, fs)
		switch {
		case cfg.Kubelet.Sources.StaticPodPath != "" || cfg.Kubelet.Sources.StaticPodURL != "":
		case cfg.Standalone:
			fmt.Fprintln(f.warn, "Warning: no pod source is configured: set --pod-manifest-path or --manifest-url (staticPodPath, staticPodURL), or drop --standalone; the kubelet will run no pods")
		default:
			fmt.Fprintln(f.warn, "Warning: no static pod source is configured (--pod-manifest-path, --manifest-url, staticPodPath, staticPodURL): only pods bound to the node through the API server will run")
		}
	}
	return cfg, nil
}

// chosenServer says which of the kubelet server's address and port the user chose, in --config
// or with a flag, rather than left to their defaults.
type chosenServer struct{ address, port bool }

// kubeletConfig is the kubelet's configuration: the --config file, defaulted, with the flags
// that were set laid over it (the kubelet's kubeletConfigFlagPrecedence), converted and validated
// by config.FromV1beta1 as a scenario's settings are.
//
// Without --config the kubelet's command line starts from an open server (anonymous requests,
// AlwaysAllow: config.LegacyAuth), and so does run with the embedded API server or none. With
// --kubeconfig, it starts from the configuration file's defaults instead, webhook authentication
// and authorization through the API server, which is what kubeadm writes for its kubelets.
//
// An address left unset is "": each node listens on its own address (chooseNodeIP), where the
// kubelet's default is every interface.
func (f *runFlags) kubeletConfig(fs *pflag.FlagSet) (*config.Config, chosenServer, error) {
	v := &config.V1beta1{}
	if f.config != "" {
		var err error
		if v, err = loadKubeletConfig(f.config, f.warn); err != nil {
			return nil, chosenServer{}, err
		}
	} else if f.kubeconfig == "" {
		config.LegacyAuth(v)
	}
	chosen := chosenServer{address: v.Address != "" || fs.Changed("address"), port: v.Port != 0 || fs.Changed("port")}
	config.SetDefaults(v)
	if !chosen.address {
		v.Address = ""
	}
	if fs.Changed("pod-manifest-path") {
		v.StaticPodPath = f.podManifestPath
	}
	if fs.Changed("manifest-url") {
		v.StaticPodURL = f.manifestURL
	}
	if fs.Changed("manifest-url-header") {
		h, err := parseURLHeader(f.manifestURLHeader)
		if err != nil {
			return nil, chosenServer{}, err
		}
		v.StaticPodURLHeader = h
	}
	for _, d := range []struct {
		flag string
		val  string
		to   *time.Duration
	}{
		{"file-check-frequency", f.fileCheckFrequency, &v.FileCheckFrequency.Duration},
		{"http-check-frequency", f.httpCheckFrequency, &v.HTTPCheckFrequency.Duration},
		{"sync-frequency", f.syncFrequency, &v.SyncFrequency.Duration},
	} {
		if !fs.Changed(d.flag) {
			continue
		}
		val, err := time.ParseDuration(d.val)
		if err != nil {
			return nil, chosenServer{}, fmt.Errorf("--%s: %w", d.flag, err)
		}
		*d.to = val
	}
	if fs.Changed("max-pods") {
		v.MaxPods = f.maxPods
	}
	if fs.Changed("serialize-image-pulls") {
		v.SerializeImagePulls = &f.serializeImagePull
	}
	if fs.Changed("node-status-update-frequency") {
		v.NodeStatusUpdateFrequency.Duration = f.nodeStatusUpdate
	}
	if fs.Changed("enable-server") {
		v.EnableServer = &f.enableServer
	}
	if fs.Changed("enable-debugging-handlers") {
		v.EnableDebuggingHandlers = &f.debuggingHandlers
	}
	if fs.Changed("address") {
		v.Address = f.address
	}
	if fs.Changed("port") {
		v.Port = int32(f.port)
	}
	if err := f.serverAuth.apply(fs, v); err != nil {
		return nil, chosenServer{}, err
	}
	c, err := config.FromV1beta1(v)
	if err != nil {
		return nil, chosenServer{}, fmt.Errorf("kubelet configuration: %w", err)
	}
	return c, chosen, nil
}

func newRunCommand() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a simulated kubelet on the real clock and print its trace",
		Long: `run is the whole simulated kubelet on the real clock: the file, HTTP and API pod sources,
PodConfig, the sync loop, the pod workers, a fake container runtime, the PLEG, the status manager,
node status and the plugin pipeline. It prints every step as a trace on standard output (text
lines of at most 120 columns, or JSON Lines with --trace-format json) until SIGINT or SIGTERM;
the --trace-* flags choose which steps are shown (docs/trace.md).

Unless --kubeconfig names an API server or --standalone runs without one, it starts an embedded
fake API server on 127.0.0.1:6443 (a free port if that one is taken), writes a kubeconfig for it
(--write-kubeconfig, by default minikubelet/kubeconfig in the user's cache directory) and prints,
on standard error, the kubectl line that reaches it. The kubelet's requests to the API server
each take --api-latency, the network a real node has.

It takes the kubelet's flags and its --config file: the ones it models (--pod-manifest-path,
--manifest-url, --sync-frequency, --max-pods, ...) are honoured, the others (--node-ip,
--container-runtime-endpoint, --cgroup-driver, ...) accepted and reported once as not simulated,
so that a kubelet's command line runs as it is. Logging follows the kubelet's flags: -v,
--vmodule, --logging-format json.

Editing a manifest in place (an editor's save, sed -i) shows a broken or missing manifest for a
moment in the trace: the kubelet sees the same intermediate files.

Exit codes: 0 after SIGINT or SIGTERM, 1 when the kubelet fails to start or run, 2 for a usage
error (a bad flag or --config file).`,
		Example: `  minikubelet run --pod-manifest-path manifests --hostname-override node-1
  minikubelet run --pod-manifest-path manifests --trace-quiet --trace-pod web-node-1
  minikubelet run --pod-manifest-path manifests --trace-format json | jq -c 'select(.component=="runtime")'
  minikubelet run --config /var/lib/kubelet/config.yaml --container-runtime-endpoint unix:///run/containerd/containerd.sock
  minikubelet run --standalone --pod-manifest-path manifests --trace-level lifecycle`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.warn = cmd.ErrOrStderr()
			cfg, err := f.resolve(cmd.Flags())
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			cfg.Announce = cmd.ErrOrStderr()
			cfg.VModule = cmd.Flags().Changed("vmodule")
			return run(cmd.Context(), cfg, cmd.OutOrStdout())
		},
	}
	f.bind(cmd.Flags())
	return cmd
}
