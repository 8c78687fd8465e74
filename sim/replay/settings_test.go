package replay

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/minikubelet/minikubelet/kubelet/config"
)

// TestSettingsConfig checks what a scenario's settings and its top-level keys make of the
// kubelet's configuration: every KubeletConfiguration key is accepted, the modelled ones
// honoured, and the top-level keys are the same fields.
func TestSettingsConfig(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want func(c *config.Config)
	}{
		{"defaults", "", func(*config.Config) {}},
		{"top-level keys", "syncFrequency: 30s\nfileCheckFrequency: 5s\nhttpCheckFrequency: 7s\nfeatureGates: {ReduceDefaultCrashLoopBackOffDecay: true}\n",
			func(c *config.Config) {
				c.SyncFrequency, c.Sources.FileCheckFrequency, c.Sources.HTTPCheckFrequency = 30*time.Second, 5*time.Second, 7*time.Second
				c.FeatureGates = config.FeatureGates{"ReduceDefaultCrashLoopBackOffDecay": true}
			}},
		{"the same keys under settings", "settings: {syncFrequency: 30s, fileCheckFrequency: 5s, httpCheckFrequency: 7s, featureGates: {ReduceDefaultCrashLoopBackOffDecay: true}}\n",
			func(c *config.Config) {
				c.SyncFrequency, c.Sources.FileCheckFrequency, c.Sources.HTTPCheckFrequency = 30*time.Second, 5*time.Second, 7*time.Second
				c.FeatureGates = config.FeatureGates{"ReduceDefaultCrashLoopBackOffDecay": true}
			}},
		{"keys minikubelet does not model are accepted", "settings: {podPidsLimit: 10, cgroupDriver: systemd, featureGates: {SidecarContainers: true}}\n",
			func(c *config.Config) { c.FeatureGates = config.FeatureGates{"SidecarContainers": true} }},
		{"capacity", "settings: {capacity: {cpu: \"2\"}, maxPods: 5}\n", func(c *config.Config) {
			c.Machine.Capacity = v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}
			c.Machine.MaxPods = 5
		}},
		{"a lone update frequency sets the report frequency too", "settings: {nodeStatusUpdateFrequency: 4s}\n", func(c *config.Config) {
			c.NodeStatus.UpdateFrequency, c.NodeStatus.ReportFrequency = 4*time.Second, 4*time.Second
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("s.yaml", []byte("name: s\nsources: [file]\n"+tt.src), LoadOptions{})
			if err != nil {
				t.Fatalf("Parse() = %v", err)
			}
			want := config.Default()
			tt.want(want)
			if diff := cmp.Diff(want, s.kubelet); diff != "" {
				t.Errorf("kubelet configuration mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
