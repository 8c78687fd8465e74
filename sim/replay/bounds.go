package replay

import (
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/kubelet/config"
)

// A scenario file of a hundred bytes could otherwise ask for work without end: `nodes: 100000`
// builds a hundred thousand kubelets before the first step, and a check frequency of 1ns makes a
// trace line every nanosecond of virtual time. Load refuses both, with the limits below; together
// with LoadOptions.MaxDuration they bound what one scenario costs. docs/scenarios.md (Bounds) and
// docs/security.md list them.
const (
	// MaxNodes bounds a scenario's nodes, and apart from them its peerNodes. Each node is a whole
	// kubelet process on the one virtual clock: BenchmarkReplayHourOfAFleet plays 100 nodes of 30
	// pods each for an hour, and a thousand idle nodes replay a minute of virtual time in about
	// 9 s of CPU and 400 MB.
	MaxNodes = 1000
	// MinPeriod is the shortest period a scenario may give the kubelet's sources, resync and node
	// status (fileCheckFrequency, httpCheckFrequency, syncFrequency, nodeStatusUpdateFrequency,
	// nodeStatusReportFrequency). The kubelet validates none of them beyond being positive; the
	// floor is the simulator's. Nothing in the kubelet's own loops runs more often than once a
	// second (the sync loop's tick, the PLEG's relist), so a faster period only adds trace
	// lines, and without a floor a day of virtual time is billions of them. Probe periods need
	// no floor here: they are whole seconds, at least 1, as the API server validates them.
	MinPeriod = time.Second
	// MaxPluginDevices bounds the devices one simulated device plugin offers: above KubeVirt's
	// 1,000 /dev/kvm devices, far below what would exhaust memory.
	MaxPluginDevices = 10000
)

// validateBounds refuses the periods below MinPeriod and the peer nodes above MaxNodes; nodes
// are bounded as they are decoded (NodeList), before any is made. A period of zero or less is
// refused elsewhere, as not positive.
func (s *Scenario) validateBounds() error {
	var errs []error
	if len(s.PeerNodes) > MaxNodes {
		errs = append(errs, fmt.Errorf("peerNodes: %d names: a replay simulates at most %d peer nodes", len(s.PeerNodes), MaxNodes))
	}
	for _, p := range s.periods() {
		if p.d > 0 && p.d < MinPeriod {
			errs = append(errs, fmt.Errorf("%s %v is below the minimum of %v a replay simulates", p.field, p.d, MinPeriod))
		}
	}
	return errors.Join(errs...)
}

// periods lists the periods the scenario sets that MinPeriod bounds, named as in the file.
func (s *Scenario) periods() []namedDuration {
	var out []namedDuration
	add := func(field string, d *Duration) {
		if d != nil {
			out = append(out, namedDuration{field, d.Duration})
		}
	}
	add("syncFrequency", s.SyncFrequency)
	add("fileCheckFrequency", s.FileCheckFrequency)
	add("httpCheckFrequency", s.HTTPCheckFrequency)
	if st := s.Settings; st != nil && st.doc != nil {
		// The fragment's own errors are validateSettings'; a period it sets is bounded here.
		if v, _, err := config.Decode(st.doc); err == nil {
			for _, set := range []struct {
				field string
				d     metav1.Duration
			}{
				{"settings.syncFrequency", v.SyncFrequency},
				{"settings.fileCheckFrequency", v.FileCheckFrequency},
				{"settings.httpCheckFrequency", v.HTTPCheckFrequency},
				{"settings.nodeStatusUpdateFrequency", v.NodeStatusUpdateFrequency},
				{"settings.nodeStatusReportFrequency", v.NodeStatusReportFrequency},
			} {
				if set.d.Duration != 0 {
					out = append(out, namedDuration{set.field, set.d.Duration})
				}
			}
		}
	}
	return out
}
