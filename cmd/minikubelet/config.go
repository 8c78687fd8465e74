package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// The kubelet's defaults for the settings minikubelet shares with it (KubeletConfiguration v1beta1).
const (
	defaultFileCheckFrequency = 20 * time.Second
	defaultHTTPCheckFrequency = 20 * time.Second
	defaultSyncFrequency      = time.Minute
)

// runConfig is everything `minikubelet run` needs, after flags and the --config file are merged.
type runConfig struct {
	NodeName           string
	StaticPodPath      string
	StaticPodURL       string
	StaticPodURLHeader http.Header
	FileCheckFrequency time.Duration
	HTTPCheckFrequency time.Duration
	SyncFrequency      time.Duration
	TraceFormat        trace.Format
	TraceView          traceView // what the trace shows; its Format is TraceFormat's
	// Sync holds the sync side's KubeletConfiguration fields, read from --config only.
	Sync syncSettings

	APIServerAddr string // where the embedded API server listens
	// APIServerFallback lets the embedded API server take a free port when APIServerAddr is in
	// use: true for the default address, false for one the user chose.
	APIServerFallback bool
	Kubeconfig        string         // an existing API server instead of the embedded one
	WriteKubeconfig   string         // where to write a kubeconfig for the embedded API server
	Standalone        bool           // no API server at all
	Security          securityConfig // how the embedded API server is locked
	DataDir           string         // where the embedded API server keeps its objects; "" for memory
	// APILatency delays every request of the kubelet's API client: the network to the API server.
	APILatency time.Duration
	// Announce receives the start-up screen's kubectl line (standard error); nil prints nothing.
	Announce io.Writer

	RootDir string // plugins_registry and device-plugins live here; empty runs no plugin pipeline

	KubeletAddr string // where the kubelet server listens (--address, --port); empty serves none
	// NoDebuggingHandlers is the kubelet server's enableDebuggingHandlers turned off (it is on
	// by default); ProfilingHandler its enableProfilingHandler (off unless asked for).
	NoDebuggingHandlers, ProfilingHandler bool

	UIAddr string // where the live timeline view listens (--ui); empty serves none
	// UIStarted, when set, is told the view's URL once it listens; otherwise Announce is.
	UIStarted func(url string)

	Nodes          int           // how many nodes to simulate; 0 or 1 is one node named NodeName
	NodeNamePrefix string        // with Nodes > 1, node i is <prefix>-<i>; empty is NodeName
	SnapshotPeriod time.Duration // the kubelet server's snapshots are at most this often; zero is every pass

	Controllers []string // the controllers run beside the embedded API server (package controllers)
}

// syncSettings are the KubeletConfiguration fields of the sync side that have no flag here:
// image pulls, the node status frequency, the crash-loop back-off's cap and the feature gates
// minikubelet models.
type syncSettings struct {
	SerializeImagePulls       *bool
	MaxParallelImagePulls     *int32
	MaxPods                   int32
	NodeStatusUpdateFrequency time.Duration
	NodeStatusReportFrequency time.Duration
	MaxContainerRestartPeriod time.Duration
	FeatureGates              map[string]bool
	// KubeReserved, SystemReserved, EvictionHard and MergeDefaultEvictionSettings make the
	// node's allocatable.
	KubeReserved, SystemReserved v1.ResourceList
	EvictionHard                 map[string]string
	MergeDefaultEvictionSettings bool
}

// apply copies the settings into the kubelet's options.
func (s syncSettings) apply(o *kubelet.Options) {
	o.SerializeImagePulls, o.MaxParallelImagePulls = s.SerializeImagePulls, s.MaxParallelImagePulls
	o.NodeStatusUpdateFrequency, o.MaxContainerRestartPeriod = s.NodeStatusUpdateFrequency, s.MaxContainerRestartPeriod
	o.NodeStatusReportFrequency = s.NodeStatusReportFrequency
	o.MaxPods = s.MaxPods
	o.FeatureGates = s.FeatureGates
	o.KubeReserved, o.SystemReserved = s.KubeReserved, s.SystemReserved
	o.EvictionHard, o.MergeDefaultEvictionSettings = s.EvictionHard, s.MergeDefaultEvictionSettings
}

// nodeNames returns the names of the simulated nodes: NodeName alone, or with Nodes > 1 the
// prefix followed by -0, -1, ... zero-padded to one width so that they sort in order.
func nodeNames(c *runConfig) []string {
	if c.Nodes <= 1 {
		return []string{c.NodeName}
	}
	prefix := c.NodeNamePrefix
	if prefix == "" {
		prefix = c.NodeName
	}
	width := len(strconv.Itoa(c.Nodes - 1))
	names := make([]string, c.Nodes)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%0*d", prefix, width, i)
	}
	return names
}

func (c *runConfig) validate() error {
	var errs []error
	var o kubelet.Options
	c.Sync.apply(&o)
	if err := o.ValidateConfig(); err != nil {
		errs = append(errs, err)
	}
	if c.NodeName == "" {
		errs = append(errs, errors.New("node name is empty: set --hostname-override"))
	}
	for name, d := range map[string]time.Duration{
		"fileCheckFrequency": c.FileCheckFrequency,
		"httpCheckFrequency": c.HTTPCheckFrequency,
		"syncFrequency":      c.SyncFrequency,
	} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %v", name, d))
		}
	}
	if c.Standalone && c.Kubeconfig != "" {
		errs = append(errs, errors.New("--standalone and --kubeconfig exclude each other"))
	}
	if c.Standalone && c.WriteKubeconfig != "" {
		errs = append(errs, errors.New("--write-kubeconfig needs an API server: drop --standalone"))
	}
	if c.APILatency < 0 {
		errs = append(errs, fmt.Errorf("--api-latency must not be negative, got %v", c.APILatency))
	}
	if c.Nodes < 0 {
		errs = append(errs, fmt.Errorf("--nodes must not be negative, got %d", c.Nodes))
	}
	for _, n := range nodeNames(c) {
		if c.Nodes <= 1 {
			break // one node keeps the name it was given, as before
		}
		if errs2 := validation.IsDNS1123Subdomain(n); len(errs2) > 0 {
			errs = append(errs, fmt.Errorf("node name %q: %s", n, strings.Join(errs2, "; ")))
			break
		}
	}
	if c.DataDir != "" && (c.Standalone || c.Kubeconfig != "") {
		errs = append(errs, errors.New("--data-dir only applies to the embedded API server: drop --standalone and --kubeconfig"))
	}
	if c.Kubeconfig != "" && c.WriteKubeconfig != "" {
		errs = append(errs, errors.New("--write-kubeconfig only applies to the embedded API server: drop --kubeconfig"))
	}
	if err := c.Security.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// kubeletConfigFile is the part of a kubelet.config.k8s.io/v1beta1 KubeletConfiguration that
// minikubelet reads. Other fields are accepted and ignored, so a real kubelet's file works as is.
type kubeletConfigFile struct {
	APIVersion         string              `json:"apiVersion"`
	Kind               string              `json:"kind"`
	StaticPodPath      string              `json:"staticPodPath"`
	StaticPodURL       string              `json:"staticPodURL"`
	StaticPodURLHeader map[string][]string `json:"staticPodURLHeader"`
	FileCheckFrequency *duration           `json:"fileCheckFrequency"`
	HTTPCheckFrequency *duration           `json:"httpCheckFrequency"`
	SyncFrequency      *duration           `json:"syncFrequency"`

	EnableDebuggingHandlers *bool `json:"enableDebuggingHandlers"`
	EnableProfilingHandler  *bool `json:"enableProfilingHandler"`

	SerializeImagePulls       *bool             `json:"serializeImagePulls"`
	MaxParallelImagePulls     *int32            `json:"maxParallelImagePulls"`
	MaxPods                   *int32            `json:"maxPods"`
	NodeStatusUpdateFrequency *duration         `json:"nodeStatusUpdateFrequency"`
	NodeStatusReportFrequency *duration         `json:"nodeStatusReportFrequency"`
	FeatureGates              map[string]bool   `json:"featureGates"`
	KubeReserved              v1.ResourceList   `json:"kubeReserved"`
	SystemReserved            v1.ResourceList   `json:"systemReserved"`
	EvictionHard              map[string]string `json:"evictionHard"`
	MergeDefaultEviction      *bool             `json:"mergeDefaultEvictionSettings"`
	CrashLoopBackOff          struct {
		MaxContainerRestartPeriod *duration `json:"maxContainerRestartPeriod"`
	} `json:"crashLoopBackOff"`
}

// duration decodes a metav1.Duration string such as "20s".
type duration struct{ time.Duration }

func (d *duration) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("parse duration %s: %w", b, err)
	}
	d.Duration = v
	return nil
}

// loadKubeletConfig reads a KubeletConfiguration file into cfg. It only sets what the file sets;
// the caller applies command-line flags afterwards, because the kubelet gives flags precedence.
//
// The file is decoded strictly first, against the whole v1beta1 KubeletConfiguration: an
// unknown field (a typo) or a duplicate one fails that. Like the kubelet, which then decodes
// leniently and logs "Using lenient decoding as strict decoding failed", it goes on with a
// lenient decoding, and says so on warn (standard error) as well as in the log.
func loadKubeletConfig(path string, cfg *runConfig, warn io.Writer) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read kubelet config: %w", err)
	}
	var full kubeletconfigv1beta1.KubeletConfiguration
	if strictErr := yaml.UnmarshalStrict(data, &full); strictErr != nil {
		if lenientErr := yaml.Unmarshal(data, &full); lenientErr != nil {
			return fmt.Errorf("kubelet config %s: failed lenient decoding: %w", path, strictErr)
		}
		klog.Background().Info("Using lenient decoding as strict decoding failed", "path", path, "err", strictErr)
		if warn != nil {
			fmt.Fprintf(warn, "Warning: kubelet config %s: strict decoding failed, using lenient decoding (unknown fields are ignored): %v\n", path, strictErr)
		}
	}
	var f kubeletConfigFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("kubelet config %s: %w", path, err)
	}
	if f.Kind != "KubeletConfiguration" || f.APIVersion != "kubelet.config.k8s.io/v1beta1" {
		return fmt.Errorf("kubelet config %s: want apiVersion kubelet.config.k8s.io/v1beta1 and kind KubeletConfiguration, got %q %q",
			path, f.APIVersion, f.Kind)
	}
	cfg.StaticPodPath = f.StaticPodPath
	cfg.StaticPodURL = f.StaticPodURL
	if f.StaticPodURLHeader != nil {
		cfg.StaticPodURLHeader = http.Header{}
		for k, vs := range f.StaticPodURLHeader {
			for _, v := range vs {
				cfg.StaticPodURLHeader.Add(k, v)
			}
		}
	}
	for _, set := range []struct {
		from *duration
		to   *time.Duration
	}{
		{f.FileCheckFrequency, &cfg.FileCheckFrequency},
		{f.HTTPCheckFrequency, &cfg.HTTPCheckFrequency},
		{f.SyncFrequency, &cfg.SyncFrequency},
		{f.NodeStatusUpdateFrequency, &cfg.Sync.NodeStatusUpdateFrequency},
		{f.NodeStatusReportFrequency, &cfg.Sync.NodeStatusReportFrequency},
		{f.CrashLoopBackOff.MaxContainerRestartPeriod, &cfg.Sync.MaxContainerRestartPeriod},
	} {
		if set.from != nil {
			*set.to = set.from.Duration
		}
	}
	if f.EnableDebuggingHandlers != nil {
		cfg.NoDebuggingHandlers = !*f.EnableDebuggingHandlers
	}
	if f.EnableProfilingHandler != nil {
		cfg.ProfilingHandler = *f.EnableProfilingHandler
	}
	cfg.Sync.SerializeImagePulls, cfg.Sync.MaxParallelImagePulls = f.SerializeImagePulls, f.MaxParallelImagePulls
	if f.MaxPods != nil {
		cfg.Sync.MaxPods = *f.MaxPods
	}
	cfg.Sync.KubeReserved, cfg.Sync.SystemReserved, cfg.Sync.EvictionHard = f.KubeReserved, f.SystemReserved, f.EvictionHard
	cfg.Sync.MergeDefaultEvictionSettings = f.MergeDefaultEviction != nil && *f.MergeDefaultEviction
	// A real kubelet's file sets gates minikubelet does not model; those are ignored like the
	// other fields it does not read.
	for _, name := range kubelet.FeatureGateNames() {
		if v, ok := f.FeatureGates[name]; ok {
			if cfg.Sync.FeatureGates == nil {
				cfg.Sync.FeatureGates = map[string]bool{}
			}
			cfg.Sync.FeatureGates[name] = v
		}
	}
	return nil
}

// defaultAPIServerAddr is where the embedded API server listens unless told otherwise: the
// kube-apiserver's secure port on loopback, the same at every start, so that a kubectl watching
// the node survives a restart of the simulator.
const defaultAPIServerAddr = "127.0.0.1:6443"

// fallbackAPIServerAddr is where it listens when defaultAPIServerAddr is taken.
const fallbackAPIServerAddr = "127.0.0.1:0"

// defaultKubeconfigPath is where run writes a kubeconfig for its embedded API server unless
// --write-kubeconfig says otherwise: minikubelet/kubeconfig in the user's cache directory
// ($XDG_CACHE_HOME or ~/.cache on Linux, ~/Library/Caches on macOS).
func defaultKubeconfigPath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find the default kubeconfig path (set --write-kubeconfig): %w", err)
	}
	return filepath.Join(dir, "minikubelet", "kubeconfig"), nil
}

// parseURLHeader parses --manifest-url-header, "key:value,key:value"; a key may repeat and its
// values accumulate, as with the kubelet's flag.
func parseURLHeader(s string) (http.Header, error) {
	h := http.Header{}
	if s == "" {
		return h, nil
	}
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--manifest-url-header %q: want key:value pairs separated by commas", s)
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return h, nil
}
