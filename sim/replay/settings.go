package replay

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubelet"
)

// Settings are the KubeletConfiguration fields of the sync side a scenario may set, under their
// KubeletConfiguration names. Unset ones keep the kubelet's defaults.
type Settings struct {
	// SerializeImagePulls: one image pull at a time on the node (default true).
	SerializeImagePulls *bool `json:"serializeImagePulls,omitempty"`
	// MaxParallelImagePulls bounds the pulls at once when SerializeImagePulls is false.
	MaxParallelImagePulls *int32 `json:"maxParallelImagePulls,omitempty"`
	// SyncFrequency is the pod workers' resync interval (default 1m); the top-level
	// syncFrequency is the same setting.
	SyncFrequency *Duration `json:"syncFrequency,omitempty"`
	// NodeStatusUpdateFrequency is how often the node status is computed and, when it changed,
	// written (default 10s).
	NodeStatusUpdateFrequency *Duration `json:"nodeStatusUpdateFrequency,omitempty"`
	// NodeStatusReportFrequency is how often an unchanged node status is written (default 5m).
	NodeStatusReportFrequency *Duration `json:"nodeStatusReportFrequency,omitempty"`
	// MaxPods is how many pods the node admits (default 110): the node's pods capacity and
	// allocatable, and the admit handler's limit (OutOfpods).
	MaxPods *int32 `json:"maxPods,omitempty"`
	// Capacity is the simulated machine's cpu, memory and ephemeral-storage (default 4, 8Gi,
	// 100Gi). It is not a KubeletConfiguration field: a real kubelet reads it from the machine.
	Capacity v1.ResourceList `json:"capacity,omitempty"`
	// KubeReserved and SystemReserved are held back from the node's allocatable.
	KubeReserved   v1.ResourceList `json:"kubeReserved,omitempty"`
	SystemReserved v1.ResourceList `json:"systemReserved,omitempty"`
	// EvictionHard are the hard eviction thresholds (signal: quantity or percentage); setting it
	// replaces the kubelet's defaults unless MergeDefaultEvictionSettings. memory.available and
	// nodefs.available are held back from allocatable memory and ephemeral-storage.
	EvictionHard                 map[string]string `json:"evictionHard,omitempty"`
	MergeDefaultEvictionSettings *bool             `json:"mergeDefaultEvictionSettings,omitempty"`
	// CrashLoopBackOff holds maxContainerRestartPeriod, the crash-loop back-off's cap when the
	// KubeletCrashLoopBackOffMax gate is on.
	CrashLoopBackOff *CrashLoopBackOffSettings `json:"crashLoopBackOff,omitempty"`
}

// CrashLoopBackOffSettings is KubeletConfiguration's crashLoopBackOff.
type CrashLoopBackOffSettings struct {
	MaxContainerRestartPeriod *Duration `json:"maxContainerRestartPeriod,omitempty"`
}

// kubeletOptions fills the kubelet options the settings and feature gates decide.
func (s *Scenario) kubeletOptions(o *kubelet.Options) {
	o.FeatureGates = s.FeatureGates
	o.SyncFrequency = durationOr(s.SyncFrequency, o.SyncFrequency)
	st := s.Settings
	if st == nil {
		return
	}
	o.SerializeImagePulls, o.MaxParallelImagePulls = st.SerializeImagePulls, st.MaxParallelImagePulls
	o.SyncFrequency = durationOr(st.SyncFrequency, o.SyncFrequency)
	o.NodeStatusUpdateFrequency = durationOr(st.NodeStatusUpdateFrequency, 0)
	o.NodeStatusReportFrequency = durationOr(st.NodeStatusReportFrequency, 0)
	if st.MaxPods != nil {
		o.MaxPods = *st.MaxPods
	}
	o.Capacity, o.KubeReserved, o.SystemReserved = st.Capacity, st.KubeReserved, st.SystemReserved
	o.EvictionHard = st.EvictionHard
	o.MergeDefaultEvictionSettings = st.MergeDefaultEvictionSettings != nil && *st.MergeDefaultEvictionSettings
	if c := st.CrashLoopBackOff; c != nil {
		o.MaxContainerRestartPeriod = durationOr(c.MaxContainerRestartPeriod, 0)
	}
}

// validateSettings checks the settings and feature gates with the kubelet's own rules.
func (s *Scenario) validateSettings() error {
	var errs []error
	if st := s.Settings; st != nil {
		if st.SyncFrequency != nil && s.SyncFrequency != nil {
			errs = append(errs, errors.New("settings.syncFrequency and syncFrequency are the same setting: give one"))
		}
		for name, d := range map[string]*Duration{"settings.syncFrequency": st.SyncFrequency,
			"settings.nodeStatusUpdateFrequency": st.NodeStatusUpdateFrequency, "settings.nodeStatusReportFrequency": st.NodeStatusReportFrequency} {
			if d != nil && d.Duration <= 0 {
				errs = append(errs, fmt.Errorf("%s must be positive", name))
			}
		}
		if c := st.CrashLoopBackOff; c != nil && c.MaxContainerRestartPeriod == nil {
			errs = append(errs, errors.New("settings.crashLoopBackOff needs maxContainerRestartPeriod"))
		}
	}
	var o kubelet.Options
	s.kubeletOptions(&o)
	if err := o.ValidateConfig(); err != nil {
		errs = append(errs, fmt.Errorf("settings: %w", err))
	}
	return errors.Join(errs...)
}
