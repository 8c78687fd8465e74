package kubelet

import (
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/kubelet/config"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestImagePullSlots checks how many pulls serializeImagePulls and maxParallelImagePulls allow
// at once.
func TestImagePullSlots(t *testing.T) {
	tests := []struct {
		name      string
		serialize bool
		max       *int32
		want      int
	}{
		{name: "defaults: serial", serialize: true, want: 1},
		{name: "serial, max 1", serialize: true, max: ptr.To[int32](1), want: 1},
		{name: "parallel, no limit", want: 0},
		{name: "parallel, max 3", max: ptr.To[int32](3), want: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Default()
			c.ImagePulls = config.ImagePulls{Serialize: tt.serialize, MaxParallel: tt.max}
			if got := imagePullSlots(c); got != tt.want {
				t.Errorf("imagePullSlots() = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestCrashLoopBackOffSettings checks newCrashLoopBackOff's rules: the gates and the configured
// maximum.
func TestCrashLoopBackOffSettings(t *testing.T) {
	tests := []struct {
		name        string
		gates       config.FeatureGates
		max         time.Duration
		wantInitial time.Duration
		wantMaximum time.Duration
	}{
		{name: "defaults", max: 300 * time.Second, wantInitial: 10 * time.Second, wantMaximum: 300 * time.Second},
		{name: "configured maximum", max: 30 * time.Second, wantInitial: 10 * time.Second, wantMaximum: 30 * time.Second},
		{name: "maximum below the initial delay", max: 5 * time.Second, wantInitial: 5 * time.Second, wantMaximum: 5 * time.Second},
		{name: "gate off", gates: config.FeatureGates{"KubeletCrashLoopBackOffMax": false}, wantInitial: 10 * time.Second, wantMaximum: 300 * time.Second},
		{name: "reduced decay, configuration's default maximum wins", gates: config.FeatureGates{"ReduceDefaultCrashLoopBackOffDecay": true}, max: 300 * time.Second,
			wantInitial: time.Second, wantMaximum: 300 * time.Second},
		{name: "reduced decay alone", gates: config.FeatureGates{"ReduceDefaultCrashLoopBackOffDecay": true, "KubeletCrashLoopBackOffMax": false},
			wantInitial: time.Second, wantMaximum: time.Minute},
		{name: "every alpha gate", gates: config.FeatureGates{"AllAlpha": true}, max: 300 * time.Second, wantInitial: time.Second, wantMaximum: 300 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Default()
			c.FeatureGates, c.CrashLoopBackOff.MaxContainerRestartPeriod = tt.gates, tt.max
			if err := c.Validate(); err != nil {
				t.Fatalf("Validate() = %v, want a valid configuration", err)
			}
			initial, maximum := crashLoopBackOff(c)
			if initial != tt.wantInitial || maximum != tt.wantMaximum {
				t.Errorf("crashLoopBackOff() = %v, %v, want %v, %v", initial, maximum, tt.wantInitial, tt.wantMaximum)
			}
		})
	}
}

// TestNewValidatesConfig checks that New refuses an invalid configuration with the configuration's
// own error, whoever built it.
func TestNewValidatesConfig(t *testing.T) {
	c := config.Default()
	c.ImagePulls.MaxParallel = ptr.To[int32](0)
	_, err := New(Options{NodeName: "n", Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard, Config: c})
	want := "new kubelet: invalid configuration: maxParallelImagePulls 0 must be a positive number"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("New() error = %v, want %q", err, want)
	}
}
