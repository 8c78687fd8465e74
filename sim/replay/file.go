package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

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
	SandboxStart Duration `json:"sandboxStart"`
	ImagePull    Duration `json:"imagePull"`
	// ImagePullPresent is a pull of an image whose layers the runtime has (queued behind a pull
	// of the same image, or pullPolicy Always).
	ImagePullPresent Duration `json:"imagePullPresent"`
	ContainerStart   Duration `json:"containerStart"`
	ContainerStop    Duration `json:"containerStop"`
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
		st, err := decodeStep(rawStep)
		if err != nil {
			return nil, fail("step %d: %v", i+1, err)
		}
		s.Steps = append(s.Steps, st)
	}
	if err := s.validate(opts.maxDuration()); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, path, err)
	}
	// The steps that write a pod keep their JSON, not the decoded pod, for the replay (stowedPod).
	for i := range s.Steps {
		if k, ok := s.Steps[i].act.(stowable); ok {
			s.Steps[i].act = k.stow(s.Steps[i].name)
		}
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

// NodeList is the scenario's nodes: a list of names, or a count n for node-1 … node-n, at most
// MaxNodes either way.
type NodeList []string

// UnmarshalJSON decodes a count or a list of names, and refuses more than MaxNodes.
func (l *NodeList) UnmarshalJSON(data []byte) error {
	var n int
	if err := json.Unmarshal(data, &n); err == nil {
		switch {
		case n < 1:
			return fmt.Errorf("nodes: %d: want a positive count or a list of names", n)
		case n > MaxNodes:
			// Before a name is made: a count costs a few bytes in the file, each node a kubelet.
			return fmt.Errorf("nodes: %d: a replay simulates at most %d nodes", n, MaxNodes)
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
	if len(names) > MaxNodes {
		return fmt.Errorf("nodes: %d names: a replay simulates at most %d nodes", len(names), MaxNodes)
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
