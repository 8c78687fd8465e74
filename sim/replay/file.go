package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/minikubelet/minikubelet/kubelet/config"
)

// Scenario is one scenario file: the starting configuration of a simulated node and the steps
// to play against it. The YAML names are a contract (docs/scenarios.md).
type Scenario struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Node is the node name; default "node-1". Nodes, which excludes it, runs several nodes
	// against the one API server.
	Node  string   `json:"node,omitempty"`
	Nodes NodeList `json:"nodes,omitempty"`
	// Sources lists the configured pod sources among file, http and api.
	Sources            []string  `json:"sources"`
	SyncFrequency      *Duration `json:"syncFrequency,omitempty"`
	FileCheckFrequency *Duration `json:"fileCheckFrequency,omitempty"`
	HTTPCheckFrequency *Duration `json:"httpCheckFrequency,omitempty"`
	// Runtime sets the fake runtime's latencies.
	Runtime *RuntimeSettings `json:"runtime,omitempty"`
	// Seed seeds the jitter of the pod workers; default 1.
	Seed *int64 `json:"seed,omitempty"`
	// Settings are a KubeletConfiguration fragment (and the machine's capacity); FeatureGates is
	// its featureGates, and SyncFrequency, FileCheckFrequency and HTTPCheckFrequency its fields
	// of those names, given at the top level.
	Settings     *Settings       `json:"settings,omitempty"`
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
	// Controllers are the control-plane controllers replay runs beside the API server (package
	// controllers); none by default. PeerNodes are other nodes, kept Ready by a heartbeat of
	// their own, so that the cluster does not look fully disrupted when the node stops.
	Controllers []string `json:"controllers,omitempty"`
	PeerNodes   []string `json:"peerNodes,omitempty"`
	Steps       []Step   `json:"-"`

	// path is the file the scenario came from, for error messages.
	path string
	// kubelet is the kubelet configuration the settings make, resolved by validateSettings.
	kubelet *config.Config
}

// RuntimeSettings are the fake runtime's simulated latencies. Unset ones are zero.
type RuntimeSettings struct {
	SandboxStart   Duration `json:"sandboxStart"`
	ImagePull      Duration `json:"imagePull"`
	ContainerStart Duration `json:"containerStart"`
	ContainerStop  Duration `json:"containerStop"`
}

// Step is one action at one instant. Exactly one action field is set.
type Step struct {
	At Duration `json:"at"`
	// Node names the node the step acts on or checks, among the scenario's nodes. Empty: the
	// node that has the step's pod, or else the first.
	Node string `json:"node,omitempty"`

	WriteManifest      *WriteManifest      `json:"writeManifest,omitempty"`
	RemoveManifest     *RemoveManifest     `json:"removeManifest,omitempty"`
	RenameManifest     *RenameManifest     `json:"renameManifest,omitempty"`
	ServeHTTP          *ServeHTTP          `json:"serveHTTP,omitempty"`
	APICreatePod       *APIPod             `json:"apiCreatePod,omitempty"`
	APIUpdatePod       *APIPod             `json:"apiUpdatePod,omitempty"`
	APIUpdatePodStatus *APIUpdatePodStatus `json:"apiUpdatePodStatus,omitempty"`
	APIDeletePod       *APIDeletePod       `json:"apiDeletePod,omitempty"`
	APIDeleteMirrorPod *PodRef             `json:"apiDeleteMirrorPod,omitempty"`
	APICreateNamespace *NamespaceRef       `json:"apiCreateNamespace,omitempty"`
	APIDeleteNamespace *NamespaceRef       `json:"apiDeleteNamespace,omitempty"`
	ContainerExit      *ContainerExit      `json:"containerExit,omitempty"`
	CrashLoop          *CrashLoop          `json:"crashLoop,omitempty"`
	FailImagePull      *FailImagePull      `json:"failImagePull,omitempty"`
	RuntimeDown        *RuntimeDown        `json:"runtimeDown,omitempty"`
	APIServerDown      *APIServerDown      `json:"apiServerDown,omitempty"`
	Expect             *Expect             `json:"expect,omitempty"`
	ExpectEvent        *ExpectEvent        `json:"expectEvent,omitempty"`
	// The plugin registration steps (plugins.go).
	CreatePluginSocket *CreatePluginSocket `json:"createPluginSocket,omitempty"`
	RemovePluginSocket *RemovePluginSocket `json:"removePluginSocket,omitempty"`
	DeviceHealth       *DeviceHealth       `json:"deviceHealth,omitempty"`
	PluginFails        *PluginFails        `json:"pluginFails,omitempty"`
	ExpectPlugin       *ExpectPlugin       `json:"expectPlugin,omitempty"`
	ExpectNode         *ExpectNode         `json:"expectNode,omitempty"`
	ExpectNoEvent      *ExpectEvent        `json:"expectNoEvent,omitempty"`
	ContainerStop      *ContainerStop      `json:"containerStop,omitempty"`
	Hook               *Hook               `json:"hook,omitempty"`
	OOMKill            *ContainerRef       `json:"oomKill,omitempty"`
	KillSandbox        *PodKeyRef          `json:"killSandbox,omitempty"`
	FailRuntimeCall    *FailRuntimeCall    `json:"failRuntimeCall,omitempty"`
	RestartKubelet     *RestartKubelet     `json:"restartKubelet,omitempty"`
	ExpectMetric       *ExpectMetric       `json:"expectMetric,omitempty"`
	// The control-plane steps (controlplane.go).
	StopNode      *StopNode      `json:"stopNode,omitempty"`
	StartNode     *StartNode     `json:"startNode,omitempty"`
	APIDeleteNode *APIDeleteNode `json:"apiDeleteNode,omitempty"`
	Probe         *ProbeStep     `json:"probe,omitempty"`
}

// ProbeStep scripts what a container's probe answers from now on: Result for the next Times
// attempts, or for the next For, or (with neither) until another probe step replaces it. Then
// the probe succeeds again.
type ProbeStep struct {
	Pod       string `json:"pod"`
	Container string `json:"container"`
	// Type is liveness, readiness or startup.
	Type string `json:"type"`
	// Result is success, failure, unknown or error.
	Result string   `json:"result"`
	Times  int      `json:"times,omitempty"`
	For    Duration `json:"for,omitempty"`
}

// WriteManifest writes a file into the static pod directory. Content may be broken on purpose.
type WriteManifest struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// RemoveManifest deletes a file from the static pod directory.
type RemoveManifest struct {
	Name string `json:"name"`
}

// RenameManifest renames a file inside the static pod directory.
type RenameManifest struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// ServeHTTP sets what the manifest URL answers from now on.
type ServeHTTP struct {
	Status  int    `json:"status"`
	Content string `json:"content"`
}

// APIPod carries a pod for apiCreatePod and apiUpdatePod.
type APIPod struct {
	Pod v1.Pod `json:"pod"`
	// ExpectError, when set, says the API server must refuse the write with an error containing
	// this text (for example "pod updates may not change fields other than"); an accepted write,
	// or another error, fails the replay. The refusal is traced with reason Rejected.
	ExpectError string `json:"expectError,omitempty"`
}

// APIUpdatePodStatus replaces a pod's status through the status subresource.
type APIUpdatePodStatus struct {
	Namespace string       `json:"namespace"`
	Name      string       `json:"name"`
	Status    v1.PodStatus `json:"status"`
}

// APIDeletePod deletes a pod through the API, with an optional grace period.
type APIDeletePod struct {
	Namespace          string `json:"namespace"`
	Name               string `json:"name"`
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds,omitempty"`
}

// NamespaceRef names a namespace, for apiCreateNamespace and apiDeleteNamespace.
type NamespaceRef struct {
	Name string `json:"name"`
}

// PodRef names a pod by namespace and name.
type PodRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// ContainerExit makes a running container exit now.
type ContainerExit struct {
	Pod       string `json:"pod"`
	Container string `json:"container"`
	ExitCode  int    `json:"exitCode"`
}

// CrashLoop makes every run of a container, the current one included, exit with ExitCode after
// running for After.
type CrashLoop struct {
	Pod       string   `json:"pod"`
	Container string   `json:"container"`
	ExitCode  int      `json:"exitCode"`
	After     Duration `json:"after"`
}

// FailImagePull makes the next Times pulls of Image fail.
type FailImagePull struct {
	Image string `json:"image"`
	Times int    `json:"times"`
}

// RuntimeDown makes the runtime stop answering for a while.
type RuntimeDown struct {
	For Duration `json:"for"`
}

// Expect asserts the state of one pod at this instant. Container, State, RestartCount, Reason,
// ExitCode and Ready go together: they describe the named container. APIObject checks a field of
// any API object; with it, Pod may be empty.
type Expect struct {
	Pod          string `json:"pod,omitempty"`
	Phase        string `json:"phase,omitempty"`
	Present      *bool  `json:"present,omitempty"`
	WorkerState  string `json:"workerState,omitempty"`
	Mirror       string `json:"mirror,omitempty"`
	Container    string `json:"container,omitempty"`
	State        string `json:"state,omitempty"`
	RestartCount *int   `json:"restartCount,omitempty"`
	// Reason is the container's waiting or terminated reason ("" when it has none).
	Reason *string `json:"reason,omitempty"`
	// ExitCode is the container's terminated exit code.
	ExitCode *int `json:"exitCode,omitempty"`
	// Ready is the container's ready flag.
	Ready *bool `json:"ready,omitempty"`
	// Started is the container's started flag.
	Started *bool `json:"started,omitempty"`
	// Conditions maps a pod condition type to its status (True, False, Unknown) or "absent".
	Conditions map[string]string `json:"conditions,omitempty"`
	// PodReason and PodMessage are the pod status's reason and message.
	PodReason  *string `json:"podReason,omitempty"`
	PodMessage *string `json:"podMessage,omitempty"`
	// APIObject checks one field of an object in the API server.
	APIObject *APIObject `json:"apiObject,omitempty"`
}

// APIObject names an API object and a JSONPath into it, and the text the path must print.
type APIObject struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Path      string `json:"path"`
	Equals    string `json:"equals"`
}

// ExpectEvent asserts that a matching trace event happened since the previous step began (its
// own events included) and by this one. expectEvents in a row at one instant all look back to
// the step before the first of them. Empty optional fields match anything.
//
// ExpectNoEvent uses the same fields and asserts that no trace event matched in the same window.
type ExpectEvent struct {
	Component string `json:"component"`
	Event     string `json:"event"`
	Op        string `json:"op,omitempty"`
	Source    string `json:"source,omitempty"`
	Pod       string `json:"pod,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Container string `json:"container,omitempty"`
}

// Duration is a Go duration written as a string such as "1m30s".
type Duration struct{ time.Duration }

// UnmarshalJSON parses "10s"-style strings.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"10s\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("duration %q is negative", s)
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes the duration back as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// ErrInvalid wraps every problem found in a scenario file before it runs.
var ErrInvalid = errors.New("invalid scenario")

// ErrTooLong is wrapped, with ErrInvalid, by the error for a duration above
// LoadOptions.MaxDuration.
var ErrTooLong = errors.New("longer than the maximum replay duration")

// DefaultMaxDuration is the default LoadOptions.MaxDuration: a day of virtual time. It is far
// above anything the kubelet's own timers need to show (resyncs of 60–90s, the PLEG's 3m health
// threshold, the 5m cap of the crash-loop back-off), and it keeps a replay to seconds of CPU and
// its trace to megabytes; without a bound, `at: 2562047h` replays for hours and writes a trace of
// a hundred gigabytes.
const DefaultMaxDuration = 24 * time.Hour

// LoadOptions configure Load and Parse. The zero value is the default.
type LoadOptions struct {
	// MaxDuration bounds the durations that set how long a replay runs or that could only take
	// effect after it: every step's at, runtimeDown.for and crashLoop.after. Zero (or negative)
	// means DefaultMaxDuration.
	MaxDuration time.Duration
}

func (o LoadOptions) maxDuration() time.Duration {
	if o.MaxDuration <= 0 {
		return DefaultMaxDuration
	}
	return o.MaxDuration
}

// Load reads and validates a scenario file. Every problem is reported with the file and, where
// it belongs to a step, the step number (from 1) and its time.
func Load(path string, opts LoadOptions) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return Parse(path, data, opts)
}

// Parse decodes and validates scenario YAML that came from path.
func Parse(path string, data []byte, opts LoadOptions) (*Scenario, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalid, path, fmt.Sprintf(format, args...))
	}
	raw, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fail("%v", err)
	}
	var top struct {
		Scenario
		Steps []json.RawMessage `json:"steps"`
	}
	if err := strictJSON(raw, &top); err != nil {
		return nil, fail("%v", err)
	}
	s := top.Scenario
	s.path = path
	for i, rawStep := range top.Steps {
		var st Step
		if err := strictJSON(rawStep, &st); err != nil {
			return nil, fail("step %d: %v", i+1, err)
		}
		s.Steps = append(s.Steps, st)
	}
	if err := s.validate(opts.maxDuration()); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, path, err)
	}
	return &s, nil
}

// strictJSON decodes data into v, refusing unknown and duplicate fields and matching key names
// case-sensitively, as the API server's strict decoding does: a misspelt key in a scenario
// (`exitcode` for `exitCode`) would otherwise silently do nothing, or be taken for another.
func strictJSON(data []byte, v any) error {
	strict, err := sigsjson.UnmarshalStrict(data, v)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	if len(strict) > 0 {
		msgs := make([]string, len(strict))
		for i, e := range strict {
			msgs[i] = strings.TrimPrefix(e.Error(), "json: ")
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}

// NodeList is the scenario's nodes: a list of names, or a count n for node-1 … node-n.
type NodeList []string

func (l *NodeList) UnmarshalJSON(data []byte) error {
	var n int
	if err := json.Unmarshal(data, &n); err == nil {
		if n < 1 {
			return fmt.Errorf("nodes: %d: want a positive count or a list of names", n)
		}
		*l = make(NodeList, n)
		for i := range n {
			(*l)[i] = fmt.Sprintf("node-%d", i+1)
		}
		return nil
	}
	var names []string
	if err := json.Unmarshal(data, &names); err != nil {
		return errors.New("nodes: want a positive count or a list of names")
	}
	*l = names
	return nil
}

// nodeNames is every node of the scenario, in order; validate has filled Node or Nodes.
func (s *Scenario) nodeNames() []string {
	if len(s.Nodes) > 0 {
		return s.Nodes
	}
	return []string{s.Node}
}
