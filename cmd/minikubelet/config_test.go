package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes/fake"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubelet/config"
	"github.com/minikubelet/minikubelet/nodestatus"
	"github.com/minikubelet/minikubelet/sim/replay"
	"github.com/minikubelet/minikubelet/sim/trace"
)

func resolveArgs(t *testing.T, args ...string) (*runConfig, error) {
	t.Helper()
	var f runFlags
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f.bind(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("Parse(%q) error = %v", args, err)
	}
	return f.resolve(fs)
}

func TestResolveDefaults(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	cfg, err := resolveArgs(t, "--hostname-override", "Node-1")
	if err != nil {
		t.Fatalf("resolve() error = %v", err)
	}
	kc := config.Default()
	kc.Server.Address = "" // each node's own address
	// Without --config nor --kubeconfig, the kubelet command line's open server.
	kc.Server.Authentication.Anonymous, kc.Server.Authentication.Webhook = true, false
	kc.Server.Authorization.Mode = config.AuthorizationAlwaysAllow
	want := &runConfig{
		NodeName:            "node-1",
		Kubelet:             *kc,
		TraceFormat:         trace.Text,
		TraceView:           traceView{Format: trace.Text, View: trace.ViewOptions{Level: trace.LevelPipeline}},
		APILatency:          defaultAPILatency,
		RuntimeLatencies:    &fakeruntime.DefaultLatencies,
		APIServerAddr:       "127.0.0.1:6443",
		APIServerFallback:   true,
		WriteKubeconfig:     filepath.Join(cache, "minikubelet", "kubeconfig"),
		RootDir:             defaultRootDir(),
		CertDir:             filepath.Join(defaultRootDir(), "pki"),
		KubeletAddr:         ":10250",
		KubeletPortFallback: true,
		Nodes:               1,
		SnapshotPeriod:      defaultSnapshotPeriod,
		Controllers:         controllers.Names,
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("resolve() mismatch (-want +got):\n%s", diff)
	}
}

func TestFlagsOverrideConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubelet.yaml")
	file := `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: /etc/kubernetes/manifests
staticPodURL: http://example.invalid/pods
staticPodURLHeader:
  Authorization: ["Bearer x"]
fileCheckFrequency: 5s
httpCheckFrequency: 7s
syncFrequency: 30s
maxParallelImagePulls: 3
maxPods: 250
nodeStatusUpdateFrequency: 4s
nodeStatusReportFrequency: 1m
crashLoopBackOff:
  maxContainerRestartPeriod: 1m
featureGates:
  ReduceDefaultCrashLoopBackOffDecay: true
  SidecarContainers: true
address: 127.0.0.2
port: 10250
evictionHard:
  memory.available: 100Mi
kubeReserved:
  cpu: 500m
systemReserved:
  memory: 1Gi
mergeDefaultEvictionSettings: true
`
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := resolveArgs(t, "--config", path, "--hostname-override", "n1",
		"--file-check-frequency", "1s", "--port", "10251", "--trace-format", "json", "--apiserver-addr", "127.0.0.1:0", "--write-kubeconfig", "kc")
	if err != nil {
		t.Fatalf("resolve() error = %v", err)
	}
	kc := config.Default()
	kc.Sources = config.Sources{
		StaticPodPath:      "/etc/kubernetes/manifests",
		StaticPodURL:       "http://example.invalid/pods",
		StaticPodURLHeader: http.Header{"Authorization": {"Bearer x"}},
		FileCheckFrequency: time.Second, // the flag wins
		HTTPCheckFrequency: 7 * time.Second,
	}
	kc.SyncFrequency = 30 * time.Second
	kc.ImagePulls = config.ImagePulls{MaxParallel: ptr.To[int32](3)}
	kc.NodeStatus = config.NodeStatus{UpdateFrequency: 4 * time.Second, ReportFrequency: time.Minute}
	kc.CrashLoopBackOff.MaxContainerRestartPeriod = time.Minute
	kc.FeatureGates = config.FeatureGates{"ReduceDefaultCrashLoopBackOffDecay": true, "SidecarContainers": true}
	kc.Machine = nodestatus.Machine{
		MaxPods:      250,
		KubeReserved: v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}, SystemReserved: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")},
		EvictionHard: map[string]string{"memory.available": "100Mi"}, MergeDefaultEvictionSettings: true,
	}
	kc.Server = config.Server{Enable: true, Address: "127.0.0.2", Port: 10251, EnableDebuggingHandlers: true,
		Authentication: config.Default().Server.Authentication, Authorization: config.Default().Server.Authorization}
	want := &runConfig{
		NodeName:         "n1",
		Kubelet:          *kc,
		TraceFormat:      trace.JSON,
		TraceView:        traceView{Format: trace.JSON, View: trace.ViewOptions{Level: trace.LevelPipeline}},
		APILatency:       defaultAPILatency,
		RuntimeLatencies: &fakeruntime.DefaultLatencies,
		APIServerAddr:    "127.0.0.1:0", // chosen, so no fallback
		WriteKubeconfig:  "kc",
		RootDir:          defaultRootDir(),
		CertDir:          filepath.Join(defaultRootDir(), "pki"),
		KubeletAddr:      "127.0.0.2:10251",
		Nodes:            1,
		SnapshotPeriod:   defaultSnapshotPeriod,
		Controllers:      controllers.Names,
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("resolve() mismatch (-want +got):\n%s", diff)
	}
}

func TestResolveErrors(t *testing.T) {
	dir := t.TempDir()
	wrongKind := filepath.Join(dir, "wrong.yaml")
	os.WriteFile(wrongKind, []byte("apiVersion: v1\nkind: Pod\n"), 0o644)
	badPulls := filepath.Join(dir, "pulls.yaml")
	os.WriteFile(badPulls, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nserializeImagePulls: true\nmaxParallelImagePulls: 2\n"), 0o644)
	badDuration := filepath.Join(dir, "dur.yaml")
	os.WriteFile(badDuration, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nsyncFrequency: soon\n"), 0o644)
	parallel := filepath.Join(dir, "parallel.yaml")
	os.WriteFile(parallel, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxParallelImagePulls: 2\n"), 0o644)
	overReserved := filepath.Join(dir, "reserved.yaml")
	os.WriteFile(overReserved, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nsystemReserved: {cpu: \"8\"}\n"), 0o644)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"reservation over capacity", []string{"--config", overReserved}, `resource "cpu" has a reservation of 8 but capacity of 4`},
		{"missing config file", []string{"--config", filepath.Join(dir, "nope.yaml")}, "read kubelet config"},
		{"wrong kind", []string{"--config", wrongKind}, "want apiVersion kubelet.config.k8s.io/v1beta1"},
		{"bad duration in file", []string{"--config", badDuration}, "invalid duration"},
		{"parallel pulls while serialized", []string{"--config", badPulls}, "maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls"},
		{"serialized by flag", []string{"--serialize-image-pulls", "--config", parallel}, "maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls"},
		{"negative port", []string{"--port", "-1"}, "port (--port) -1 must be between 0 and 65535"},
		{"bad duration flag", []string{"--sync-frequency", "often"}, "--sync-frequency"},
		{"zero period", []string{"--file-check-frequency", "0s"}, "fileCheckFrequency must be positive"},
		{"bad header", []string{"--manifest-url-header", "novalue"}, "key:value"},
		{"bad trace format", []string{"--trace-format", "xml"}, "unknown trace format"},
		{"standalone and kubeconfig", []string{"--standalone", "--kubeconfig", "kc"}, "exclude each other"},
		{"unknown runtime step", []string{"--runtime-latencies", "pull=1s"}, `unknown step "pull"`},
		{"negative runtime latency", []string{"--runtime-latencies", "-1s"}, "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := resolveArgs(t, append([]string{"--hostname-override", "n1"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("resolve(%q) error = %v, want it to contain %q", tt.args, err, tt.want)
			}
		})
	}
}

func TestParseURLHeader(t *testing.T) {
	got, err := parseURLHeader("a:hello,b:again,a:world")
	if err != nil {
		t.Fatalf("parseURLHeader() error = %v", err)
	}
	want := http.Header{"A": {"hello", "world"}, "B": {"again"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseURLHeader() mismatch (-want +got):\n%s", diff)
	}
}

// resolveWarnings is resolveArgs that also returns what resolve warned about.
func resolveWarnings(t *testing.T, args ...string) (*runConfig, string, error) {
	t.Helper()
	var warn strings.Builder
	f := runFlags{warn: &warn}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f.bind(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("Parse(%q) error = %v", args, err)
	}
	cfg, err := f.resolve(fs)
	return cfg, warn.String(), err
}

// TestKubeadmCommandLine resolves a kubelet command line as kubeadm writes it (the systemd
// drop-in and kubeadm-flags.env): the flags minikubelet does not simulate are accepted and
// reported once, --max-pods and the others it models are honoured.
func TestKubeadmCommandLine(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubelet.conf")
	config := filepath.Join(dir, "config.yaml")
	os.WriteFile(config, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodPath: "+dir+"\ncgroupDriver: systemd\n"), 0o644)
	cfg, warn, err := resolveWarnings(t,
		"--bootstrap-kubeconfig="+filepath.Join(dir, "bootstrap-kubelet.conf"), "--kubeconfig="+kubeconfig,
		"--config="+config, "--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock",
		"--pod-infra-container-image=registry.k8s.io/pause:3.10", "--node-ip=10.0.0.5",
		"--node-labels=node-role.kubernetes.io/worker=,zone=a", "--cgroup-driver", "systemd", "--fail-swap-on=false",
		"--rotate-certificates", "--max-pods=42", "--serialize-image-pulls=false", "--node-status-update-frequency=4s",
		"--hostname-override=Worker-1")
	if err != nil {
		t.Fatalf("resolve() error = %v", err)
	}
	if kc := cfg.Kubelet; kc.Machine.MaxPods != 42 || kc.ImagePulls.Serialize || kc.NodeStatus.UpdateFrequency != 4*time.Second ||
		cfg.Kubeconfig != kubeconfig || kc.Sources.StaticPodPath != dir || cfg.NodeName != "worker-1" || cfg.NodeIP.String() != "10.0.0.5" {
		t.Errorf("resolve() = %+v, want maxPods 42, serialized pulls off, a 4s status frequency, the kubeconfig, the config's staticPodPath, node worker-1, node IP 10.0.0.5", cfg)
	}
	if a := cfg.Kubelet.Server; !a.Authentication.Webhook || a.Authentication.Anonymous || a.Authorization.Mode != "Webhook" {
		t.Errorf("server authentication, authorization = %+v, %+v, want the config file's defaults: webhook, no anonymous requests", a.Authentication, a.Authorization)
	}
	want := "Warning: kubelet flags accepted, not simulated: --bootstrap-kubeconfig=" + filepath.Join(dir, "bootstrap-kubelet.conf") +
		" --cgroup-driver=systemd --container-runtime-endpoint=unix:///var/run/containerd/containerd.sock --fail-swap-on=false" +
		" --node-labels=node-role.kubernetes.io/worker=,zone=a --pod-infra-container-image=registry.k8s.io/pause:3.10" +
		" --rotate-certificates=true\n"
	if warn != want {
		t.Errorf("warnings = %q, want %q", warn, want)
	}
}

func TestResolveWarnings(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo.yaml")
	os.WriteFile(typo, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodPaht: /etc/kubernetes/manifests\nsyncFrequency: 30s\n"), 0o644)
	tests := []struct {
		name string
		args []string
		want []string // each a line of the warnings
	}{
		{"config typo falls back to lenient decoding", []string{"--config", typo, "--hostname-override", "n1", "--apiserver-addr", "127.0.0.1:0"}, []string{
			`strict decoding failed, using lenient decoding (unknown fields are ignored): strict decoding error: unknown field "staticPodPaht"`,
			"no static pod source is configured",
		}},
		{"standalone without a source", []string{"--standalone", "--hostname-override", "n1"}, []string{"no pod source is configured"}},
		{"invalid node name", []string{"--hostname-override", "node_1", "--pod-manifest-path", dir, "--apiserver-addr", "127.0.0.1:0"}, []string{
			`--hostname-override "node_1" is not a valid node name`,
		}},
		{"nothing to say", []string{"--hostname-override", "n1", "--pod-manifest-path", dir, "--apiserver-addr", "127.0.0.1:0"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			cfg, warn, err := resolveWarnings(t, tt.args...)
			if err != nil {
				t.Fatalf("resolve() error = %v", err)
			}
			lines := strings.Split(strings.TrimSpace(warn), "\n")
			if warn == "" {
				lines = nil
			}
			if len(lines) != len(tt.want) {
				t.Fatalf("warnings = %q, want %d lines", warn, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(lines[i], "Warning: ") || !strings.Contains(lines[i], w) {
					t.Errorf("warning %d = %q, want one containing %q", i, lines[i], w)
				}
			}
			if tt.name == "config typo falls back to lenient decoding" && cfg.Kubelet.SyncFrequency != 30*time.Second {
				t.Errorf("SyncFrequency = %v, want the file's 30s: the lenient decoding keeps the known fields", cfg.Kubelet.SyncFrequency)
			}
		})
	}
}

// TestConfigEntryPointsAgree runs the same KubeletConfiguration snippets through `run --config`
// and through a scenario's settings: both accept or refuse each one, with the same error text.
// An unknown key is the one difference in what follows: run warns and goes on, as the kubelet
// does, and a scenario refuses it.
func TestConfigEntryPointsAgree(t *testing.T) {
	tests := []struct {
		name    string
		snippet string
		strict  bool // a strict decoding error: run warns, a scenario refuses
		invalid bool // refused by both
	}{
		{name: "modelled fields", snippet: "maxPods: 250\nsyncFrequency: 30s\nfileCheckFrequency: 5s\nnodeStatusUpdateFrequency: 4s\nkubeReserved: {cpu: 500m}\n"},
		{name: "fields minikubelet does not model", snippet: "podPidsLimit: 10\ncgroupDriver: systemd\nclusterDNS: [10.96.0.10]\nauthentication: {anonymous: {enabled: false}}\n"},
		{name: "server fields", snippet: "address: 0.0.0.0\nport: 10251\nenableServer: false\n"},
		{name: "parallel pulls alone", snippet: "maxParallelImagePulls: 3\n"},
		{name: "known gate minikubelet does not model", snippet: "featureGates: {InPlacePodVerticalScaling: true, AllBeta: false}\n"},
		{name: "typo", snippet: "maxPodz: 3\n", strict: true},
		{name: "typo in a nested field", snippet: "crashLoopBackOff: {maxContainerRestartPeriodz: 3s}\n", strict: true},
		{name: "wrong case", snippet: "MaxPods: 3\n", strict: true},
		{name: "parallel pulls while serialized", snippet: "serializeImagePulls: true\nmaxParallelImagePulls: 3\n", invalid: true},
		{name: "no parallel pulls", snippet: "maxParallelImagePulls: 0\n", invalid: true},
		{name: "restart period too long", snippet: "crashLoopBackOff: {maxContainerRestartPeriod: 10m}\n", invalid: true},
		{name: "restart period without its gate", snippet: "featureGates: {KubeletCrashLoopBackOffMax: false}\ncrashLoopBackOff: {maxContainerRestartPeriod: 30s}\n", invalid: true},
		{name: "unknown gate", snippet: "featureGates: {Nope: true}\n", invalid: true},
		{name: "locked gate", snippet: "featureGates: {SidecarContainers: false}\n", invalid: true},
		{name: "negative period", snippet: "syncFrequency: -1s\n", invalid: true},
		{name: "bad duration", snippet: "httpCheckFrequency: soon\n", invalid: true},
		{name: "wrong type", snippet: "maxPods: many\n", invalid: true},
		{name: "negative maxPods", snippet: "maxPods: -1\n", invalid: true},
		{name: "reservation over capacity", snippet: "systemReserved: {cpu: \"8\"}\n", invalid: true},
		{name: "bad reservation", snippet: "kubeReserved: {memory: lots}\n", invalid: true},
		{name: "bad eviction threshold", snippet: "evictionHard: {memory.available: lots}\n", invalid: true},
		{name: "port out of range", snippet: "port: 70000\n", invalid: true},
		{name: "another kind", snippet: "apiVersion: v1\nkind: Pod\n", invalid: true},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".yaml")
			head := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
			if strings.HasPrefix(tt.snippet, "apiVersion:") {
				head = ""
			}
			if err := os.WriteFile(path, []byte(head+tt.snippet), 0o644); err != nil {
				t.Fatal(err)
			}
			_, warn, runErr := resolveWarnings(t, "--config", path, "--hostname-override", "n1", "--standalone", "--pod-manifest-path", dir)
			scenario := "name: agree\nsources: [file]\nsettings:\n  " + strings.ReplaceAll(strings.TrimSuffix(tt.snippet, "\n"), "\n", "\n  ") + "\n"
			_, scenarioErr := replay.Parse("agree.yaml", []byte(scenario), replay.LoadOptions{})

			var runText string
			switch {
			case runErr != nil:
				runText = runErr.Error()
				for _, prefix := range []string{"kubelet configuration: ", "kubelet config " + path + ": "} {
					runText = strings.TrimPrefix(runText, prefix)
				}
			case strings.Contains(warn, "strict decoding failed"):
				_, runText, _ = strings.Cut(strings.TrimSuffix(warn, "\n"), "(unknown fields are ignored): ")
			}
			var scenarioText string
			if scenarioErr != nil {
				scenarioText = strings.TrimPrefix(scenarioErr.Error(), "invalid scenario: agree.yaml: settings: ")
			}
			if diff := cmp.Diff(scenarioText, runText); diff != "" {
				t.Errorf("the scenario's error and run's differ (-scenario +run):\n%s", diff)
			}
			switch {
			case tt.strict && (runErr != nil || scenarioErr == nil || !strings.HasPrefix(scenarioText, "strict decoding error: ")):
				t.Errorf("run error = %v, scenario error = %v: want run to warn and go on, the scenario to refuse with a strict decoding error", runErr, scenarioErr)
			case tt.invalid && (runErr == nil || scenarioErr == nil):
				t.Errorf("run error = %v, scenario error = %v: want both to refuse it", runErr, scenarioErr)
			case !tt.strict && !tt.invalid && (runErr != nil || scenarioErr != nil || warn != ""):
				t.Errorf("run error = %v (warnings %q), scenario error = %v: want both to accept it", runErr, warn, scenarioErr)
			}
		})
	}
}

// TestNodeStatusFrequencyPrecedence shows the kubelet's order, defaults then flags: a
// nodeStatusUpdateFrequency in the file carries an unset nodeStatusReportFrequency with it, the
// same value given by --node-status-update-frequency does not.
func TestNodeStatusFrequencyPrecedence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubelet.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nnodeStatusUpdateFrequency: 4s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want config.NodeStatus
	}{
		{"file", []string{"--config", path}, config.NodeStatus{UpdateFrequency: 4 * time.Second, ReportFrequency: 4 * time.Second}},
		{"flag", []string{"--node-status-update-frequency", "4s"}, config.NodeStatus{UpdateFrequency: 4 * time.Second, ReportFrequency: 5 * time.Minute}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := resolveArgs(t, append(tt.args, "--hostname-override", "n1", "--standalone")...)
			if err != nil {
				t.Fatalf("resolve() error = %v", err)
			}
			if got := cfg.Kubelet.NodeStatus; got != tt.want {
				t.Errorf("resolve(%q).Kubelet.NodeStatus = %+v, want %+v", tt.args, got, tt.want)
			}
		})
	}
}

// TestSimulatedNodeTaintFlag: --simulated-node-taint reaches the run configuration.
func TestSimulatedNodeTaintFlag(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, tc := range []struct {
		args []string
		want bool
	}{{nil, false}, {[]string{"--simulated-node-taint"}, true}} {
		cfg, err := resolveArgs(t, tc.args...)
		if err != nil {
			t.Fatalf("resolve(%q) error = %v", tc.args, err)
		}
		if cfg.SimulatedNodeTaint != tc.want {
			t.Errorf("resolve(%q).SimulatedNodeTaint = %v, want %v", tc.args, cfg.SimulatedNodeTaint, tc.want)
		}
	}
}

// TestHeartbeatClient: the heartbeat client has no client-side rate limit, and the kubelet's
// timeout: nodeStatusUpdateFrequency, at most the lease duration.
func TestHeartbeatClient(t *testing.T) {
	rc := &rest.Config{Host: "https://127.0.0.1:6443", QPS: kubeAPIQPS, Burst: kubeAPIBurst}
	for _, tc := range []struct {
		period, want time.Duration
	}{{10 * time.Second, 10 * time.Second}, {time.Minute, nodeLeaseDuration}} {
		client, err := heartbeatClient(rc, tc.period)
		if err != nil {
			t.Fatal(err)
		}
		restClient := client.CoreV1().RESTClient().(*rest.RESTClient)
		if rl := restClient.GetRateLimiter(); rl != nil {
			t.Errorf("heartbeat client rate limiter = %v, want none", rl)
		}
		if got := restClient.Client.Timeout; got != tc.want {
			t.Errorf("heartbeat client timeout with nodeStatusUpdateFrequency %s = %s, want %s", tc.period, got, tc.want)
		}
	}
	if rc.QPS != kubeAPIQPS {
		t.Errorf("the API client's config changed: QPS %v", rc.QPS)
	}
}

// TestNodesShareHeartbeatClient: the nodes of one process get their own API clients, each with
// its own rate limiter, and one heartbeat client, which has none and the same timeout for all.
func TestNodesShareHeartbeatClient(t *testing.T) {
	cfg, err := resolveArgs(t, "--nodes", "3", "--node-status-update-frequency", "20s")
	if err != nil {
		t.Fatal(err)
	}
	rc := &rest.Config{Host: "https://127.0.0.1:6443"}
	conn, err := connectAPI(t.Context(), cfg, rc, clock.RealClock{}, trace.Discard, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := conn.clients("n1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := conn.clients("n1")
	if err != nil {
		t.Fatal(err)
	}
	if a.heartbeat == nil || a.heartbeat != b.heartbeat {
		t.Errorf("two nodes' heartbeat clients = %p and %p, want one shared", a.heartbeat, b.heartbeat)
	}
	if a.api == b.api {
		t.Error("two nodes share an API client, want one each")
	}
	la := a.api.CoreV1().RESTClient().(*rest.RESTClient).GetRateLimiter()
	lb := b.api.CoreV1().RESTClient().(*rest.RESTClient).GetRateLimiter()
	if la == nil || la == lb {
		t.Errorf("two nodes' API rate limiters = %p and %p, want one each", la, lb)
	}
	hb := a.heartbeat.CoreV1().RESTClient().(*rest.RESTClient)
	if hb.GetRateLimiter() != nil || hb.Client.Timeout != 20*time.Second {
		t.Errorf("shared heartbeat client: rate limiter %v, timeout %s; want none and 20s", hb.GetRateLimiter(), hb.Client.Timeout)
	}
}

// TestLogsEvents: a node's event broadcaster logs its events (at V(3), as the kubelet's) when
// the log shows that level, or when --vmodule may show it for client-go's file; otherwise the
// log watcher is left out.
func TestLogsEvents(t *testing.T) {
	for _, tc := range []struct {
		verbosity int
		vmodule   bool
		want      bool
	}{
		{verbosity: 0, want: false},
		{verbosity: 2, want: false},
		{verbosity: 3, want: true},
		{verbosity: 6, want: true},
		{verbosity: 0, vmodule: true, want: true},
	} {
		logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(tc.verbosity)))
		if got := logsEvents(logger, tc.vmodule); got != tc.want {
			t.Errorf("logsEvents(-v %d, vmodule %v) = %v, want %v", tc.verbosity, tc.vmodule, got, tc.want)
		}
	}
}

// TestEventRecorder: a node gets a broadcaster, and a recorder, when it sends its events or logs
// them; with neither it has none, and its events end in the trace alone.
func TestEventRecorder(t *testing.T) {
	for _, tc := range []struct {
		send, logs       bool
		wantBroadcasters int
	}{{false, false, 0}, {false, true, 1}, {true, false, 1}, {true, true, 1}} {
		b := &broadcasters{ctx: t.Context()}
		r := b.recorder("sim-0", tc.send, tc.logs, &typedcorev1.EventSinkImpl{Interface: fake.NewClientset().CoreV1().Events("")})
		if got, want := r != nil, tc.wantBroadcasters > 0; got != want || len(b.all) != tc.wantBroadcasters {
			t.Errorf("recorder(send %v, logs %v): recorder %v and %d broadcasters, want recorder %v and %d", tc.send, tc.logs, got, len(b.all), want, tc.wantBroadcasters)
		}
		b.shutdown()
	}
}
