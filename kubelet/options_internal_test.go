package kubelet

import (
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestImagePullSlots checks serializeImagePulls and maxParallelImagePulls, with the kubelet's
// validation of the pair.
func TestImagePullSlots(t *testing.T) {
	tests := []struct {
		name      string
		serialize *bool
		max       *int32
		want      int
		wantErr   string
	}{
		{name: "defaults: serial", want: 1},
		{name: "serial, max 1", serialize: ptr.To(true), max: ptr.To[int32](1), want: 1},
		{name: "serial, max 3", serialize: ptr.To(true), max: ptr.To[int32](3), wantErr: "must be 1 or nil when serializeImagePulls is true"},
		{name: "parallel, no limit", serialize: ptr.To(false), want: 0},
		{name: "parallel, max 3", serialize: ptr.To(false), max: ptr.To[int32](3), want: 3},
		{name: "parallel, max 0", serialize: ptr.To(false), max: ptr.To[int32](0), wantErr: "must be a positive number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Options{SerializeImagePulls: tt.serialize, MaxParallelImagePulls: tt.max}.imagePullSlots()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("imagePullSlots() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("imagePullSlots() = %d, %v, want %d", got, err, tt.want)
			}
		})
	}
}

// TestCrashLoopBackOffSettings checks newCrashLoopBackOff's rules: the gates and the configured
// maximum.
func TestCrashLoopBackOffSettings(t *testing.T) {
	tests := []struct {
		name         string
		gates        map[string]bool
		max          time.Duration
		wantInitial  time.Duration
		wantMaximum  time.Duration
		wantValidErr string
	}{
		{name: "defaults", wantInitial: 10 * time.Second, wantMaximum: 300 * time.Second},
		{name: "configured maximum", max: 30 * time.Second, wantInitial: 10 * time.Second, wantMaximum: 30 * time.Second},
		{name: "maximum below the initial delay", max: 5 * time.Second, wantInitial: 5 * time.Second, wantMaximum: 5 * time.Second},
		{name: "gate off ignores the maximum", gates: map[string]bool{"KubeletCrashLoopBackOffMax": false}, max: 30 * time.Second, wantInitial: 10 * time.Second, wantMaximum: 300 * time.Second},
		{name: "reduced decay, configuration's default maximum wins", gates: map[string]bool{"ReduceDefaultCrashLoopBackOffDecay": true}, wantInitial: time.Second, wantMaximum: 300 * time.Second},
		{name: "reduced decay alone", gates: map[string]bool{"ReduceDefaultCrashLoopBackOffDecay": true, "KubeletCrashLoopBackOffMax": false}, wantInitial: time.Second, wantMaximum: time.Minute},
		{name: "unknown gate", gates: map[string]bool{"Nope": true}, wantValidErr: "unrecognized feature gate: Nope"},
		{name: "maximum out of range", max: 301 * time.Second, wantValidErr: "must be between 1s and 300s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{NodeName: "n", Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard, FeatureGates: tt.gates, MaxContainerRestartPeriod: tt.max}
			err := o.validate()
			if tt.wantValidErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantValidErr) {
					t.Errorf("validate() error = %v, want %q", err, tt.wantValidErr)
				}
				return
			}
			initial, maximum := o.crashLoopBackOff()
			if initial != tt.wantInitial || maximum != tt.wantMaximum {
				t.Errorf("crashLoopBackOff() = %v, %v, want %v, %v", initial, maximum, tt.wantInitial, tt.wantMaximum)
			}
		})
	}
}
