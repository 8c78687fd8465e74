package config_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/kubelet/config"
	"github.com/minikubelet/minikubelet/nodestatus"
)

// resolve is the path every entry point takes: decode, default, convert and validate.
func resolve(doc string) (*config.Config, error, error) {
	v, strictErr, err := config.Decode([]byte(doc))
	if err != nil {
		return nil, nil, err
	}
	config.SetDefaults(v)
	c, err := config.FromV1beta1(v)
	return c, strictErr, err
}

// The v1beta1 defaults of authentication and authorization: webhook, no anonymous requests.
var (
	webhookAuthn = config.Authentication{Webhook: true, WebhookCacheTTL: 2 * time.Minute}
	webhookAuthz = config.Authorization{Mode: config.AuthorizationWebhook, CacheAuthorizedTTL: 5 * time.Minute, CacheUnauthorizedTTL: 30 * time.Second}
)

// TestDefaults checks the v1beta1 defaults of the modelled fields, and the ones that depend on
// another field.
func TestDefaults(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want func(c *config.Config)
	}{
		{"empty", "", func(*config.Config) {}},
		{"the type alone", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n", func(*config.Config) {}},
		{"zero is unset", "syncFrequency: 0s\nmaxPods: 0\nport: 0\n", func(*config.Config) {}},
		{"an update frequency alone sets the report frequency", "nodeStatusUpdateFrequency: 4s\n", func(c *config.Config) {
			c.NodeStatus = config.NodeStatus{UpdateFrequency: 4 * time.Second, ReportFrequency: 4 * time.Second}
		}},
		{"debug handlers off, profiles asked for", "enableDebuggingHandlers: false\nenableProfilingHandler: true\n", func(c *config.Config) {
			c.Server.EnableDebuggingHandlers, c.Server.EnableProfilingHandler = false, true
		}},
		{"a report frequency alone", "nodeStatusReportFrequency: 1m\n", func(c *config.Config) {
			c.NodeStatus.ReportFrequency = time.Minute
		}},
		{"parallel pulls alone turn serial pulls off", "maxParallelImagePulls: 2\n", func(c *config.Config) {
			c.ImagePulls = config.ImagePulls{MaxParallel: ptr.To[int32](2)}
		}},
		{"one parallel pull keeps them serial", "maxParallelImagePulls: 1\n", func(c *config.Config) {
			c.ImagePulls = config.ImagePulls{Serialize: true, MaxParallel: ptr.To[int32](1)}
		}},
		{"the restart period's default needs its gate", "featureGates: {KubeletCrashLoopBackOffMax: false}\n", func(c *config.Config) {
			c.FeatureGates = config.FeatureGates{"KubeletCrashLoopBackOffMax": false}
			c.CrashLoopBackOff.MaxContainerRestartPeriod = 0
		}},
		{"AllBeta off turns the gate off too", "featureGates: {AllBeta: false}\n", func(c *config.Config) {
			c.FeatureGates = config.FeatureGates{"AllBeta": false}
			c.CrashLoopBackOff.MaxContainerRestartPeriod = 0
		}},
		{"set fields are kept", `staticPodPath: /etc/kubernetes/manifests
staticPodURL: http://example.invalid/pods
staticPodURLHeader: {x-token: [a, b]}
fileCheckFrequency: 5s
httpCheckFrequency: 6s
syncFrequency: 7s
serializeImagePulls: false
maxPods: 20
crashLoopBackOff: {maxContainerRestartPeriod: 30s}
kubeReserved: {cpu: 500m}
systemReserved: {memory: 1Gi, pid: "100"}
evictionHard: {memory.available: 200Mi}
mergeDefaultEvictionSettings: true
capacity: {cpu: "8"}
enableServer: false
address: 127.0.0.1
port: 10251
`, func(c *config.Config) {
			c.Sources = config.Sources{StaticPodPath: "/etc/kubernetes/manifests", StaticPodURL: "http://example.invalid/pods",
				StaticPodURLHeader: http.Header{"X-Token": {"a", "b"}}, FileCheckFrequency: 5 * time.Second, HTTPCheckFrequency: 6 * time.Second}
			c.SyncFrequency = 7 * time.Second
			c.ImagePulls = config.ImagePulls{}
			c.CrashLoopBackOff.MaxContainerRestartPeriod = 30 * time.Second
			c.Machine = nodestatus.Machine{
				Capacity: v1.ResourceList{v1.ResourceCPU: resource.MustParse("8")}, MaxPods: 20,
				KubeReserved:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")},
				SystemReserved: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi"), "pid": resource.MustParse("100")},
				EvictionHard:   map[string]string{"memory.available": "200Mi"}, MergeDefaultEvictionSettings: true,
			}
			c.Server = config.Server{Address: "127.0.0.1", Port: 10251, EnableDebuggingHandlers: true,
				Authentication: webhookAuthn, Authorization: webhookAuthz}
		}},
		{"authentication and authorization as kubeadm writes them", `authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true, cacheTTL: 0s}
  x509: {clientCAFile: /etc/kubernetes/pki/ca.crt}
authorization:
  mode: Webhook
  webhook: {cacheAuthorizedTTL: 0s, cacheUnauthorizedTTL: 0s}
tlsCertFile: /var/lib/kubelet/pki/kubelet.crt
tlsPrivateKeyFile: /var/lib/kubelet/pki/kubelet.key
`, func(c *config.Config) {
			c.Server.Authentication.ClientCAFile = "/etc/kubernetes/pki/ca.crt"
			c.Server.TLSCertFile, c.Server.TLSPrivateKeyFile = "/var/lib/kubelet/pki/kubelet.crt", "/var/lib/kubelet/pki/kubelet.key"
		}},
		{"an open server", "authentication: {anonymous: {enabled: true}, webhook: {enabled: false, cacheTTL: 10s}}\nauthorization: {mode: AlwaysAllow}\n", func(c *config.Config) {
			c.Server.Authentication = config.Authentication{Anonymous: true, WebhookCacheTTL: 10 * time.Second}
			c.Server.Authorization.Mode = config.AuthorizationAlwaysAllow
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, strictErr, err := resolve(tt.doc)
			if err != nil || strictErr != nil {
				t.Fatalf("resolve() = %v, %v, want no error", strictErr, err)
			}
			want := &config.Config{
				Sources:          config.Sources{FileCheckFrequency: 20 * time.Second, HTTPCheckFrequency: 20 * time.Second},
				SyncFrequency:    time.Minute,
				ImagePulls:       config.ImagePulls{Serialize: true},
				NodeStatus:       config.NodeStatus{UpdateFrequency: 10 * time.Second, ReportFrequency: 5 * time.Minute},
				CrashLoopBackOff: config.CrashLoopBackOff{MaxContainerRestartPeriod: 300 * time.Second},
				Machine:          nodestatus.Machine{MaxPods: 110},
				Server: config.Server{Enable: true, Address: "0.0.0.0", Port: 10250, EnableDebuggingHandlers: true,
					Authentication: webhookAuthn, Authorization: webhookAuthz},
			}
			tt.want(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("resolve(%q) mismatch (-want +got):\n%s", tt.doc, diff)
			}
		})
	}
	if diff := cmp.Diff(config.Default(), mustResolve(t, "")); diff != "" {
		t.Errorf("Default() differs from an empty document (-want +got):\n%s", diff)
	}
}

func mustResolve(t *testing.T, doc string) *config.Config {
	t.Helper()
	c, _, err := resolve(doc)
	if err != nil {
		t.Fatalf("resolve(%q) = %v", doc, err)
	}
	return c
}

// TestValidation checks each rule, with the kubelet's text where the kubelet has the rule.
func TestValidation(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string // the whole error
	}{
		{"serialized parallel pulls", "serializeImagePulls: true\nmaxParallelImagePulls: 2\n",
			"invalid configuration: maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls (--serialize-image-pulls) is set to false"},
		{"no parallel pulls", "serializeImagePulls: false\nmaxParallelImagePulls: 0\n", "invalid configuration: maxParallelImagePulls 0 must be a positive number"},
		{"negative maxPods", "maxPods: -1\n", "invalid configuration: maxPods (--max-pods) -1 must not be a negative number"},
		{"restart period too long", "crashLoopBackOff: {maxContainerRestartPeriod: 301s}\n",
			"invalid configuration: CrashLoopBackOff.MaxContainerRestartPeriod (got: 301 seconds) must be set between 1s and 300s"},
		{"restart period too short", "crashLoopBackOff: {maxContainerRestartPeriod: 999ms}\n",
			"invalid configuration: CrashLoopBackOff.MaxContainerRestartPeriod (got: 0.999 seconds) must be set between 1s and 300s"},
		{"restart period set to zero", "crashLoopBackOff: {maxContainerRestartPeriod: 0s}\n",
			"invalid configuration: FeatureGate KubeletCrashLoopBackOffMax is enabled, CrashLoopBackOff.MaxContainerRestartPeriod must be set"},
		{"restart period without its gate", "featureGates: {KubeletCrashLoopBackOffMax: false}\ncrashLoopBackOff: {maxContainerRestartPeriod: 30s}\n",
			"invalid configuration: FeatureGate KubeletCrashLoopBackOffMax not enabled, CrashLoopBackOff.MaxContainerRestartPeriod must not be set"},
		{"unknown gates, sorted", "featureGates: {Zed: true, Nope: false}\n", "unrecognized feature gate: Nope\nunrecognized feature gate: Zed"},
		{"locked gate", "featureGates: {SidecarContainers: false}\n", "cannot set feature gate SidecarContainers to false, feature is locked to true"},
		{"negative sync frequency", "syncFrequency: -1s\n", "invalid configuration: syncFrequency must be positive, got -1s"},
		{"negative file check frequency", "fileCheckFrequency: -1s\n", "invalid configuration: fileCheckFrequency must be positive, got -1s"},
		{"negative http check frequency", "httpCheckFrequency: -1s\n", "invalid configuration: httpCheckFrequency must be positive, got -1s"},
		{"negative update frequency", "nodeStatusUpdateFrequency: -1s\nnodeStatusReportFrequency: 1m\n", "invalid configuration: nodeStatusUpdateFrequency must be positive, got -1s"},
		{"negative report frequency", "nodeStatusReportFrequency: -1s\n", "invalid configuration: nodeStatusReportFrequency must be positive, got -1s"},
		{"port out of range", "port: 65536\n", "invalid configuration: port (--port) 65536 must be between 0 and 65535, inclusive"},
		{"unknown authorization mode", "authorization: {mode: RBAC}\n", "invalid configuration: unknown authorization mode RBAC"},
		{"a certificate without its key", "tlsCertFile: kubelet.crt\n",
			"invalid configuration: tlsCertFile (--tls-cert-file) and tlsPrivateKeyFile (--tls-private-key-file) must be given together"},
		{"reservation over capacity", "capacity: {cpu: \"2\"}\nkubeReserved: {cpu: \"3\"}\n",
			`invalid configuration: resource "cpu" has a reservation of 3 but capacity of 2. Expected capacity >= reservation`},
		{"reservation that does not parse", "kubeReserved: {cpu: lots}\n",
			`invalid configuration: kubeReserved: failed to parse quantity "lots" for "cpu" resource: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`},
		{"capacity of pods", "capacity: {pods: \"3\"}\n", "invalid configuration: capacity pods: only cpu, memory and ephemeral-storage can be set (pods is maxPods)"},
		{"several problems", "maxPods: -1\nport: -1\n",
			"invalid configuration: maxPods (--max-pods) -1 must not be a negative number\ninvalid configuration: port (--port) -1 must be between 0 and 65535, inclusive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := resolve(tt.doc)
			if err == nil || err.Error() != tt.want {
				t.Errorf("resolve(%q) error = %v, want %q", tt.doc, err, tt.want)
			}
		})
	}
}

// TestValidateZeroConfig checks that a Config built by hand is validated as a decoded one is:
// every value must be explicit.
func TestValidateZeroConfig(t *testing.T) {
	err := (&config.Config{}).Validate()
	if err == nil || !strings.Contains(err.Error(), "syncFrequency must be positive, got 0s") {
		t.Errorf("Config{}.Validate() = %v, want it to refuse the zero periods", err)
	}
	if err := config.Default().Validate(); err != nil {
		t.Errorf("Default().Validate() = %v, want nil", err)
	}
}

// TestDecode checks what is strict, what is lenient and what cannot be decoded at all.
func TestDecode(t *testing.T) {
	tests := []struct {
		name       string
		doc        string
		wantErr    string // the decoding fails
		wantStrict string // the strict decoding fails, the lenient one does not
		check      func(v *config.V1beta1) bool
	}{
		{name: "every key", doc: "maxPods: 3\npodPidsLimit: 10\nfeatureGates: {A: true}\n", check: func(v *config.V1beta1) bool {
			return v.MaxPods == 3 && *v.PodPidsLimit == 10 && v.FeatureGates["A"]
		}},
		{name: "json", doc: `{"maxPods": 3}`, check: func(v *config.V1beta1) bool { return v.MaxPods == 3 }},
		{name: "unknown field keeps the others", doc: "maxPodz: 3\nsyncFrequency: 30s\n", wantStrict: `strict decoding error: unknown field "maxPodz"`,
			check: func(v *config.V1beta1) bool { return v.SyncFrequency.Duration == 30*time.Second }},
		{name: "unknown nested field", doc: "crashLoopBackOff: {max: 3s}\n", wantStrict: `strict decoding error: unknown field "crashLoopBackOff.max"`},
		{name: "field names are case-sensitive", doc: "MaxPods: 3\n", wantStrict: `strict decoding error: unknown field "MaxPods"`,
			check: func(v *config.V1beta1) bool { return v.MaxPods == 0 }},
		{name: "duplicate field, the last wins", doc: "maxPods: 3\nmaxPods: 4\n",
			wantStrict: "strict decoding error: yaml: unmarshal errors:\n  line 2: key \"maxPods\" already set in map",
			check:      func(v *config.V1beta1) bool { return v.MaxPods == 4 }},
		{name: "every strict problem", doc: "maxPods: 3\nmaxPods: 4\nb: 1\na: 2\n",
			wantStrict: "strict decoding error: yaml: unmarshal errors:\n  line 2: key \"maxPods\" already set in map, unknown field \"a\", unknown field \"b\""},
		{name: "wrong type", doc: "maxPods: many\n", wantErr: "json: cannot unmarshal string into Go struct field KubeletConfiguration.maxPods of type int32"},
		{name: "reserved quantities are strings", doc: "kubeReserved: {cpu: 1}\n",
			wantErr: "json: cannot unmarshal number into Go struct field KubeletConfiguration.kubeReserved of type string"},
		{name: "bad duration", doc: "syncFrequency: soon\n", wantErr: `time: invalid duration "soon"`},
		{name: "bad capacity", doc: "capacity: {cpu: lots}\n",
			wantErr: "capacity: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
		{name: "not a mapping", doc: "[1]\n", wantErr: "json: cannot unmarshal array into Go value of type v1beta1.KubeletConfiguration"},
		{name: "bad YAML", doc: "maxPods: [\n", wantErr: "yaml: line 1: did not find expected node content"},
		{name: "another kind", doc: "apiVersion: v1\nkind: Pod\n",
			wantErr: `want apiVersion kubelet.config.k8s.io/v1beta1 and kind KubeletConfiguration, got "v1" "Pod"`},
		{name: "kind alone", doc: "kind: KubeletConfiguration\n",
			wantErr: `want apiVersion kubelet.config.k8s.io/v1beta1 and kind KubeletConfiguration, got "" "KubeletConfiguration"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, strictErr, err := config.Decode([]byte(tt.doc))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || v != nil {
					t.Errorf("Decode(%q) = %v, %v, want nil and error %q", tt.doc, v, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode(%q) error = %v", tt.doc, err)
			}
			var gotStrict string
			if strictErr != nil {
				gotStrict = strictErr.Error()
			}
			if gotStrict != tt.wantStrict {
				t.Errorf("Decode(%q) strict error = %q, want %q", tt.doc, gotStrict, tt.wantStrict)
			}
			if tt.check != nil && !tt.check(v) {
				t.Errorf("Decode(%q) = %+v, not what the document says", tt.doc, v)
			}
		})
	}
}

// TestCheckTypeMeta checks what a whole file must say it is.
func TestCheckTypeMeta(t *testing.T) {
	v, _, err := config.Decode([]byte("maxPods: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.CheckTypeMeta(); err == nil {
		t.Error("CheckTypeMeta() of a fragment = nil, want an error")
	}
	v, _, err = config.Decode([]byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.CheckTypeMeta(); err != nil {
		t.Errorf("CheckTypeMeta() = %v, want nil", err)
	}
}

// TestFeatureGates checks Enabled: set, then AllAlpha or AllBeta by the gate's stage, then the
// default.
func TestFeatureGates(t *testing.T) {
	tests := []struct {
		name  string
		gates config.FeatureGates
		gate  string
		want  bool
	}{
		{"beta default", nil, config.KubeletCrashLoopBackOffMax, true},
		{"alpha default", nil, config.ReduceDefaultCrashLoopBackOffDecay, false},
		{"set", config.FeatureGates{config.ReduceDefaultCrashLoopBackOffDecay: true}, config.ReduceDefaultCrashLoopBackOffDecay, true},
		{"AllAlpha", config.FeatureGates{"AllAlpha": true}, config.ReduceDefaultCrashLoopBackOffDecay, true},
		{"AllAlpha leaves beta gates", config.FeatureGates{"AllAlpha": false}, config.KubeletCrashLoopBackOffMax, true},
		{"AllBeta", config.FeatureGates{"AllBeta": false}, config.KubeletCrashLoopBackOffMax, false},
		{"a gate set wins over AllBeta", config.FeatureGates{"AllBeta": false, config.KubeletCrashLoopBackOffMax: true}, config.KubeletCrashLoopBackOffMax, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.gates.Enabled(tt.gate); got != tt.want {
				t.Errorf("%v.Enabled(%s) = %v, want %v", tt.gates, tt.gate, got, tt.want)
			}
		})
	}
}
