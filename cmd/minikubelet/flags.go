package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/minikubelet/minikubelet/trace"
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
	traceFormat        string
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
	nodes              int
	nodeNamePrefix     string
}

func (f *runFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "a KubeletConfiguration (kubelet.config.k8s.io/v1beta1) file; flags override its values")
	fs.StringVar(&f.podManifestPath, "pod-manifest-path", "", "static pod directory or file (staticPodPath)")
	fs.StringVar(&f.manifestURL, "manifest-url", "", "URL to poll for static pods (staticPodURL)")
	fs.StringVar(&f.manifestURLHeader, "manifest-url-header", "", "HTTP headers for --manifest-url, as 'key:value,key:value' (staticPodURLHeader)")
	fs.StringVar(&f.fileCheckFrequency, "file-check-frequency", defaultFileCheckFrequency.String(), "how often the static pod path is relisted (fileCheckFrequency)")
	fs.StringVar(&f.httpCheckFrequency, "http-check-frequency", defaultHTTPCheckFrequency.String(), "how often --manifest-url is polled (httpCheckFrequency)")
	fs.StringVar(&f.syncFrequency, "sync-frequency", defaultSyncFrequency.String(), "pod worker resync interval (syncFrequency)")
	fs.StringVar(&f.hostnameOverride, "hostname-override", "", "the node name; defaults to the lowercased hostname")
	fs.StringVar(&f.traceFormat, "trace-format", "text", "trace output: text or json")
	fs.StringVar(&f.apiserverAddr, "apiserver-addr", defaultAPIServerAddr, "address of the embedded API server; when the default is taken, a free port on 127.0.0.1")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "use the API server in this kubeconfig instead of the embedded one")
	fs.StringVar(&f.writeKubeconfig, "write-kubeconfig", "", "write a kubeconfig for the embedded API server to this file (default minikubelet/kubeconfig in the user's cache directory, such as ~/.cache/minikubelet/kubeconfig)")
	fs.BoolVar(&f.standalone, "standalone", false, "run without an API server, like a kubelet without a kubeconfig")
	fs.StringVar(&f.rootDir, "root-dir", defaultRootDir(), "directory for plugins_registry and device-plugins (the kubelet's /var/lib/kubelet)")
	f.security.bind(fs)
	bindDataDir(fs, &f.dataDir)
	fs.StringVar(&f.ui, "ui", "", "serve the live timeline view (a page and its server-sent events) at this address, such as 127.0.0.1:8080")
	fs.StringVar(&f.address, "address", "127.0.0.1", "IP address the kubelet server listens on (the kubelet's default is 0.0.0.0)")
	fs.IntVar(&f.port, "port", 10250, "port of the kubelet server; 0 picks a free one")
	fs.BoolVar(&f.enableServer, "enable-server", true, "serve the kubelet's HTTP server (enableServer)")
	fs.IntVar(&f.nodes, "nodes", 1, "how many nodes to simulate in this process, all served on one kubelet server")
	fs.StringVar(&f.nodeNamePrefix, "node-name-prefix", "", "with --nodes above 1, node i is named <prefix>-<i>; defaults to the node name")
}

// resolve merges the --config file and the flags, flags winning where they were set, as the
// kubelet does.
func (f *runFlags) resolve(fs *pflag.FlagSet) (*runConfig, error) {
	cfg := &runConfig{
		FileCheckFrequency: defaultFileCheckFrequency,
		HTTPCheckFrequency: defaultHTTPCheckFrequency,
		SyncFrequency:      defaultSyncFrequency,
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
		SnapshotPeriod:     defaultSnapshotPeriod,
		UIAddr:             f.ui,
	}
	if f.enableServer {
		cfg.KubeletAddr = kubeletServerAddr(f.address, f.port)
	}
	if f.config != "" {
		if err := loadKubeletConfig(f.config, cfg); err != nil {
			return nil, err
		}
	}
	if fs.Changed("pod-manifest-path") {
		cfg.StaticPodPath = f.podManifestPath
	}
	if fs.Changed("manifest-url") {
		cfg.StaticPodURL = f.manifestURL
	}
	if fs.Changed("manifest-url-header") || cfg.StaticPodURLHeader == nil {
		h, err := parseURLHeader(f.manifestURLHeader)
		if err != nil {
			return nil, err
		}
		cfg.StaticPodURLHeader = h
	}
	for _, d := range []struct {
		flag string
		val  string
		to   *time.Duration
	}{
		{"file-check-frequency", f.fileCheckFrequency, &cfg.FileCheckFrequency},
		{"http-check-frequency", f.httpCheckFrequency, &cfg.HTTPCheckFrequency},
		{"sync-frequency", f.syncFrequency, &cfg.SyncFrequency},
	} {
		if !fs.Changed(d.flag) {
			continue
		}
		v, err := time.ParseDuration(d.val)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", d.flag, err)
		}
		*d.to = v
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
	}
	if cfg.WriteKubeconfig == "" && cfg.Kubeconfig == "" && !cfg.Standalone {
		path, err := defaultKubeconfigPath()
		if err != nil {
			return nil, err
		}
		cfg.WriteKubeconfig = path
	}
	format, err := trace.ParseFormat(f.traceFormat)
	if err != nil {
		return nil, fmt.Errorf("--trace-format: %w", err)
	}
	cfg.TraceFormat = format
	return cfg, cfg.validate()
}

func newRunCommand() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a simulated kubelet on the real clock and print its trace",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.resolve(cmd.Flags())
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			cfg.Announce = cmd.ErrOrStderr()
			return run(cmd.Context(), cfg, cmd.OutOrStdout())
		},
	}
	f.bind(cmd.Flags())
	return cmd
}
