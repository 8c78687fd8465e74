package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/kubelet/config"
)

func TestParseNodeIP(t *testing.T) {
	for _, tc := range []struct {
		flag, want, err string
	}{
		{flag: ""},
		{flag: "10.0.0.5", want: "10.0.0.5"},
		{flag: "10.0.0.5,fd00::5", want: "10.0.0.5"},
		{flag: "fd00::5, 10.0.0.5", want: "fd00::5"},
		{flag: "0.0.0.0"},
		{flag: "::"},
		{flag: "node-1", err: `--node-ip "node-1": could not parse "node-1"`},
		{flag: "10.0.0.5,10.0.0.6", err: "must contain either a single IP or a dual-stack pair of IPs"},
		{flag: "10.0.0.5,fd00::5,10.0.0.6", err: "must contain either a single IP or a dual-stack pair of IPs"},
	} {
		ip, err := parseNodeIP(tc.flag)
		got := ""
		if ip != nil {
			got = ip.String()
		}
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("parseNodeIP(%q) = %q, %v; want %q, %q", tc.flag, got, err, tc.want, tc.err)
		}
	}
}

// TestChooseNodeIP: --node-ip must be an address of the host (loopback ones too); without it the
// node takes loopback beside the embedded API server, and the address of the interface toward
// an API server elsewhere.
func TestChooseNodeIP(t *testing.T) {
	for _, tc := range []struct {
		name      string
		flag      net.IP
		apiServer string
		want, err string
	}{
		{name: "embedded", want: "127.0.0.1"},
		{name: "given", flag: net.ParseIP("127.0.0.1"), apiServer: "https://127.0.0.1:6443", want: "127.0.0.1"},
		{name: "another loopback address", flag: net.ParseIP("127.0.0.9"), want: "127.0.0.9"},
		{name: "not the host's", flag: net.ParseIP("192.0.2.1"), err: `node IP: "192.0.2.1" not found in the host's network interfaces`},
		{name: "toward the API server", apiServer: "https://127.0.0.1:6443", want: "127.0.0.1"},
		{name: "a URL without a host", apiServer: "https://", err: "can't get ip address of node"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ip, err := chooseNodeIP(tc.flag, tc.apiServer)
			got := ""
			if ip != nil {
				got = ip.String()
			}
			if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("chooseNodeIP(%v, %q) = %q, %v; want %q, %q", tc.flag, tc.apiServer, got, err, tc.want, tc.err)
			}
		})
	}
}

// TestNodesZeroRefused: --nodes 0 is a usage error.
func TestNodesZeroRefused(t *testing.T) {
	if _, err := resolveArgs(t, "--hostname-override", "n1", "--nodes", "0"); err == nil || err.Error() != "--nodes must be at least 1, got 0" {
		t.Errorf("resolve(--nodes 0) = %v, want it refused", err)
	}
}

// takePort listens on a free port of loopback for the test and returns it.
func takePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// TestKubeletPortTaken: when the default kubelet port is taken, the node's server takes a free
// one, says so, and the node advertises it; a port the user chose that is taken fails the start
// before anything is printed or written.
func TestKubeletPortTaken(t *testing.T) {
	t.Parallel()
	taken := takePort(t)
	t.Run("default port", func(t *testing.T) {
		cfg := testConfig("", false)
		cfg.Kubelet.Sources.StaticPodPath = ""
		cfg.KubeletAddr, cfg.KubeletPortFallback = net.JoinHostPort("127.0.0.1", strconv.Itoa(taken)), true
		cfg.WriteKubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
		log := newTraceLog()
		stop := runInBackground(t, cfg, log)
		ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
		defer cancel()
		log.mustWait(t, ctx, 0, "node registration", func(e traceEvent) bool { return e.Component == "node" && e.Event == "register" })
		port := advertisedPort(t, ctx, cfg.WriteKubeconfig)
		if port == 0 || port == int32(taken) {
			t.Errorf("the node advertises port %d, want a free one instead of the taken %d", port, taken)
		}
		if err := stop(); err != nil {
			t.Errorf("run() = %v", err)
		}
	})
	t.Run("chosen port", func(t *testing.T) {
		cfg := testConfig("", false)
		cfg.KubeletAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(taken))
		cfg.WriteKubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
		var announced bytes.Buffer
		cfg.Announce = &announced
		var out bytes.Buffer
		_, ctx := ktesting.NewTestContext(t)
		err := run(ctx, cfg, &out)
		if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "kubelet server of node "+testNode) {
			t.Errorf("run() with the chosen port taken = %v, want an address in use naming the node", err)
		}
		if out.Len() > 0 || announced.Len() > 0 {
			t.Errorf("run() printed %q and announced %q before it failed", out.String(), announced.String())
		}
		if _, err := os.Stat(cfg.WriteKubeconfig); !os.IsNotExist(err) {
			t.Errorf("run() wrote the kubeconfig before it failed: %v", err)
		}
	})
}

// TestFleetPortsFollowTheFirst: node i listens on the first node's port plus i, and one that
// is taken gives way to a free port.
func TestFleetPortsFollowTheFirst(t *testing.T) {
	base := takePort(t)
	// base is taken by the test; base+1 and base+2 are most likely free, and a busy one moves.
	cfg := &runConfig{NodeName: "n", Nodes: 3, KubeletAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(base)), KubeletPortFallback: true}
	_, ctx := ktesting.NewTestContext(t)
	s, err := openKubeletServers(ctx, cfg, nodeNames(cfg), net.IPv4(127, 0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	seen := map[int32]bool{}
	for i, e := range s.nodes {
		if seen[e.port] || e.port == int32(base) {
			t.Errorf("node %s listens on %d: taken or shared", e.node, e.port)
		}
		seen[e.port] = true
		if i > 0 && e.port != int32(base+i) {
			t.Logf("node %s moved from %d to %d (that port was busy)", e.node, base+i, e.port)
		}
		if got := e.l.Addr().(*net.TCPAddr).Port; int32(got) != e.port {
			t.Errorf("node %s advertises %d and listens on %d", e.node, e.port, got)
		}
	}
}

// TestStandaloneWebhookRefused: a kubelet without an API server cannot review tokens or access,
// and does not start with a configuration that asks it to.
func TestStandaloneWebhookRefused(t *testing.T) {
	cfg := testConfig("", true)
	cfg.KubeletAddr = "127.0.0.1:0"
	_, ctx := ktesting.NewTestContext(t)
	err := run(ctx, cfg, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "no client provided, cannot use webhook authentication") {
		t.Errorf("run() standalone in Webhook mode = %v, want the kubelet's refusal", err)
	}
	cfg.Kubelet.Server.Authentication = config.Authentication{Anonymous: true}
	cfg.Kubelet.Server.Authorization.Mode = config.AuthorizationAlwaysAllow
	if err := cfg.checkServerAuth(); err != nil {
		t.Errorf("checkServerAuth() of an open standalone server = %v", err)
	}
}

func advertisedPort(t *testing.T, ctx context.Context, kubeconfig string) int32 {
	t.Helper()
	var node v1.Node
	if err := json.Unmarshal([]byte(kubectl(t, ctx, kubeconfig, "", "get", "node", testNode, "-o", "json")), &node); err != nil {
		t.Fatal(err)
	}
	return node.Status.DaemonEndpoints.KubeletEndpoint.Port
}

// TestDecodeResourceMetrics reads what a node's /metrics/resource serves as metrics-server does.
func TestDecodeResourceMetrics(t *testing.T) {
	in := `# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="main",namespace="default",pod="web"} 1.5 1700000000000
container_cpu_usage_seconds_total{container="side",namespace="default",pod="web"} 0.5 1700000000000
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="main",namespace="default",pod="web"} 4.194304e+06 1700000000000
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="main",namespace="default",pod="web"} 1.6999999e+09 1699999900000
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 12.25 1700000000000
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 5.36870912e+08 1700000000000
# TYPE resource_scrape_error gauge
resource_scrape_error 0
`
	scraped := time.Unix(1700000005, 0)
	node, containers, err := decodeResourceMetrics(strings.NewReader(in), scraped)
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(1700000000000)
	if want := (fakeapiserver.UsageSample{Timestamp: at, CPUSeconds: 12.25, MemoryBytes: 512 << 20}); node != want {
		t.Errorf("node sample = %+v, want %+v", node, want)
	}
	want := map[containerKey]fakeapiserver.UsageSample{
		{"default", "web", "main"}: {Timestamp: at, StartTime: time.Unix(1699999900, 0), CPUSeconds: 1.5, MemoryBytes: 4 << 20},
	}
	if diff := cmp.Diff(want, containers, cmp.AllowUnexported(containerKey{})); diff != "" {
		t.Errorf("containers (-want +got); the one without its working set and start time left out:\n%s", diff)
	}
	if _, _, err := decodeResourceMetrics(strings.NewReader("resource_scrape_error 0\n"), scraped); err == nil {
		t.Error("decodeResourceMetrics() without the node's series = nil error")
	}
	// The text parser panics on labels before a name; the decoder answers with an error.
	if _, _, err := decodeResourceMetrics(strings.NewReader("{}"), scraped); err == nil {
		t.Error(`decodeResourceMetrics("{}") = nil error`)
	}
}

// FuzzDecodeResourceMetrics: whatever a node answers, decoding returns or fails; it never
// panics.
func FuzzDecodeResourceMetrics(f *testing.F) {
	f.Add("node_cpu_usage_seconds_total 1 1\nnode_memory_working_set_bytes 2 1\n")
	f.Add("container_start_time_seconds{container=\"c\",namespace=\"n\",pod=\"p\"} 1e300\n")
	f.Add("node_memory_working_set_bytes -1\nnode_cpu_usage_seconds_total NaN\n")
	f.Fuzz(func(t *testing.T, in string) {
		_, _, _ = decodeResourceMetrics(strings.NewReader(in), time.Unix(0, 0))
	})
}

// TestServerAuthDefaults: the kubelet servers start from the kubelet command line's open server
// without --config and --kubeconfig, from the configuration file's webhook defaults with either,
// and the kubelet's authentication and authorization flags override both.
func TestServerAuthDefaults(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "kubelet.yaml")
	if err := os.WriteFile(cfgFile, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	open := config.Authentication{Anonymous: true, WebhookCacheTTL: 2 * time.Minute}
	webhook := config.Authentication{Webhook: true, WebhookCacheTTL: 2 * time.Minute}
	for _, tc := range []struct {
		name     string
		args     []string
		wantAuth config.Authentication
		wantMode string
	}{
		{name: "no config, embedded API server", wantAuth: open, wantMode: config.AuthorizationAlwaysAllow},
		{name: "--kubeconfig", args: []string{"--kubeconfig=" + filepath.Join(dir, "kc")}, wantAuth: webhook, wantMode: config.AuthorizationWebhook},
		{name: "--config", args: []string{"--config=" + cfgFile}, wantAuth: webhook, wantMode: config.AuthorizationWebhook},
		{name: "flags over the open defaults", args: []string{"--anonymous-auth=false", "--authentication-token-webhook", "--authorization-mode=Webhook",
			"--client-ca-file=/etc/kubernetes/pki/ca.crt", "--authentication-token-webhook-cache-ttl=1m"},
			wantAuth: config.Authentication{Webhook: true, WebhookCacheTTL: time.Minute, ClientCAFile: "/etc/kubernetes/pki/ca.crt"}, wantMode: config.AuthorizationWebhook},
		{name: "flags over the file's", args: []string{"--config=" + cfgFile, "--anonymous-auth", "--authorization-mode=AlwaysAllow"},
			wantAuth: config.Authentication{Anonymous: true, Webhook: true, WebhookCacheTTL: 2 * time.Minute}, wantMode: config.AuthorizationAlwaysAllow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := resolveArgs(t, append([]string{"--hostname-override=n1"}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			srv := cfg.Kubelet.Server
			if diff := cmp.Diff(tc.wantAuth, srv.Authentication); diff != "" || srv.Authorization.Mode != tc.wantMode {
				t.Errorf("authentication (-want +got):\n%s\nauthorization mode %q, want %q", diff, srv.Authorization.Mode, tc.wantMode)
			}
		})
	}
	if _, err := resolveArgs(t, "--hostname-override=n1", "--authorization-mode=RBAC"); err == nil || !strings.Contains(err.Error(), "RBAC") {
		t.Errorf("resolve(--authorization-mode=RBAC) = %v, want it refused naming the mode", err)
	}
}
