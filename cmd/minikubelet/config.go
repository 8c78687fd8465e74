package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubelet/config"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// runConfig is everything `minikubelet run` needs, after flags and the --config file are merged.
type runConfig struct {
	NodeName string
	// Kubelet is the kubelet's configuration: the --config file and the flags laid over it.
	Kubelet     config.Config
	TraceFormat trace.Format
	TraceView   traceView // what the trace shows; its Format is TraceFormat's

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
	// VModule is whether --vmodule was given: per-file verbosities, which decide whether the
	// event broadcaster's log line (at V(3), from client-go's file) shows.
	VModule bool
	// NoEventClient leaves the nodes without an event client (--send-events=false): their
	// Kubernetes events are logged and traced but not sent, as kubemark's hollow nodes'.
	NoEventClient bool
	// RuntimeLatencies are how long the fake runtime's steps take (--runtime-latencies); nil
	// is fakeruntime.DefaultLatencies.
	RuntimeLatencies *fakeruntime.Latencies
	// Announce receives the start-up screen's kubectl line (standard error); nil prints nothing.
	Announce io.Writer

	RootDir string // plugins_registry and device-plugins live here; empty runs no plugin pipeline

	// KubeletAddr is where the first node's kubelet server listens, host:port, and the next
	// ones on the ports after it (Kubelet.Server); an empty host is each node's own address
	// (NodeIP); an empty KubeletAddr serves none.
	KubeletAddr string
	// KubeletPortFallback lets the first node's kubelet server take a free port when its port is
	// in use: true for the default port, false for one the user chose.
	KubeletPortFallback bool
	// NodeIP is --node-ip, the nodes' InternalIP; nil chooses it (chooseNodeIP).
	NodeIP net.IP
	// CertDir is where the nodes' authority and Prometheus targets are written when the
	// embedded API server writes no kubeconfig: --cert-dir, by default <RootDir>/pki.
	CertDir string
	// MetricResolution is how often the embedded API server's metrics are scraped; zero is
	// defaultMetricResolution.
	MetricResolution time.Duration

	UIAddr string // where the live timeline view listens (--ui); empty serves none
	// UIStarted, when set, is told the view's URL once it listens; otherwise Announce is.
	UIStarted func(url string)

	Nodes          int           // how many nodes to simulate; 0 or 1 is one node named NodeName
	NodeNamePrefix string        // with Nodes > 1, node i is <prefix>-<i>; empty is NodeName
	SnapshotPeriod time.Duration // a kubelet server's snapshot younger than this is reused; zero takes one for every request

	Controllers []string // the controllers run beside the embedded API server (package controllers)

	// SimulatedNodeTaint registers every node with nodestatus.SimulatedTaint.
	SimulatedNodeTaint bool
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
	if c.NodeName == "" {
		errs = append(errs, errors.New("node name is empty: set --hostname-override"))
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
	if c.Nodes < 1 {
		errs = append(errs, fmt.Errorf("--nodes must be at least 1, got %d", c.Nodes))
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

// checkServerAuth refuses, as the kubelet does when it builds its authenticator and authorizer,
// webhook authentication or authorization without an API server to ask: a kubelet started
// without a kubeconfig and with a config file that leaves them on (the file's default) does not
// start.
func (c *runConfig) checkServerAuth() error {
	a := c.Kubelet.Server
	if !c.Standalone || c.KubeletAddr == "" {
		return nil
	}
	var errs []error
	if a.Authentication.Webhook {
		errs = append(errs, errors.New("no client provided, cannot use webhook authentication: drop --standalone, or set --authentication-token-webhook=false (authentication.webhook.enabled: false)"))
	}
	if a.Authorization.Mode == config.AuthorizationWebhook {
		errs = append(errs, errors.New("no client provided, cannot use webhook authorization: drop --standalone, or set --authorization-mode=AlwaysAllow (authorization.mode)"))
	}
	return errors.Join(errs...)
}

// loadKubeletConfig reads a KubeletConfiguration file, as the kubelet's loadConfigFile does. The
// caller defaults it and lays the command-line flags over it, because the kubelet gives flags
// precedence.
//
// The file is decoded strictly first (config.Decode): an unknown field (a typo) or a duplicate one
// fails that. Like the kubelet, which then decodes leniently and logs "Using lenient decoding as
// strict decoding failed", it goes on with the lenient decoding, and says so on warn (standard
// error) as well as in the log. A scenario's settings refuse the same document with the same
// error.
func loadKubeletConfig(path string, warn io.Writer) (*config.V1beta1, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read kubelet config: %w", err)
	}
	v, strictErr, err := config.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("kubelet config %s: %w", path, err)
	}
	if err := v.CheckTypeMeta(); err != nil {
		return nil, fmt.Errorf("kubelet config %s: %w", path, err)
	}
	if strictErr != nil {
		klog.Background().Info("Using lenient decoding as strict decoding failed", "path", path, "err", strictErr)
		if warn != nil {
			fmt.Fprintf(warn, "Warning: kubelet config %s: strict decoding failed, using lenient decoding (unknown fields are ignored): %v\n", path, strictErr)
		}
	}
	return v, nil
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
