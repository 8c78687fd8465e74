package config

import (
	"errors"
	"fmt"
	"time"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// Validate checks c with the kubelet's rules for the fields minikubelet models
// (ValidateKubeletConfiguration, the feature gates, and the checks the kubelet makes of its
// machine and reservations at start-up), and two of minikubelet's own: every period must be
// positive, since a source or heartbeat that never ticks is not a kubelet, and port 0 is allowed
// (a free port). Every problem is reported.
func (c *Config) Validate() error {
	var errs []error
	errs = append(errs, c.FeatureGates.validate()...)
	for _, p := range []struct {
		name string
		d    time.Duration
	}{
		{"syncFrequency", c.SyncFrequency},
		{"fileCheckFrequency", c.Sources.FileCheckFrequency},
		{"httpCheckFrequency", c.Sources.HTTPCheckFrequency},
		{"nodeStatusUpdateFrequency", c.NodeStatus.UpdateFrequency},
		{"nodeStatusReportFrequency", c.NodeStatus.ReportFrequency},
	} {
		if p.d <= 0 {
			errs = append(errs, fmt.Errorf("invalid configuration: %s must be positive, got %v", p.name, p.d))
		}
	}
	if c.Machine.MaxPods < 0 {
		errs = append(errs, fmt.Errorf("invalid configuration: maxPods (--max-pods) %v must not be a negative number", c.Machine.MaxPods))
	} else if err := c.Machine.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("invalid configuration: %w", err))
	}
	if max := c.ImagePulls.MaxParallel; max != nil {
		if *max < 1 {
			errs = append(errs, fmt.Errorf("invalid configuration: maxParallelImagePulls %v must be a positive number", *max))
		}
		if c.ImagePulls.Serialize && *max > 1 {
			errs = append(errs, errors.New("invalid configuration: maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls (--serialize-image-pulls) is set to false"))
		}
	}
	period := c.CrashLoopBackOff.MaxContainerRestartPeriod
	switch {
	case !c.FeatureGates.Enabled(KubeletCrashLoopBackOffMax):
		if period != 0 {
			errs = append(errs, errors.New("invalid configuration: FeatureGate KubeletCrashLoopBackOffMax not enabled, CrashLoopBackOff.MaxContainerRestartPeriod must not be set"))
		}
	case period == 0:
		errs = append(errs, errors.New("invalid configuration: FeatureGate KubeletCrashLoopBackOffMax is enabled, CrashLoopBackOff.MaxContainerRestartPeriod must be set"))
	case period.Milliseconds() < time.Second.Milliseconds() || period.Milliseconds() > kubecontainer.MaxContainerBackoff.Milliseconds():
		// Compared in whole milliseconds, as the kubelet does.
		errs = append(errs, fmt.Errorf("invalid configuration: CrashLoopBackOff.MaxContainerRestartPeriod (got: %v seconds) must be set between 1s and 300s", period.Seconds()))
	}
	if c.Server.Port < 0 || c.Server.Port > 65535 {
		errs = append(errs, fmt.Errorf("invalid configuration: port (--port) %v must be between 0 and 65535, inclusive", c.Server.Port))
	}
	if m := c.Server.Authorization.Mode; m != AuthorizationAlwaysAllow && m != AuthorizationWebhook {
		// The kubelet refuses it when it builds its authorizer (BuildAuthz).
		if m == "" {
			errs = append(errs, errors.New("invalid configuration: no authorization mode specified"))
		} else {
			errs = append(errs, fmt.Errorf("invalid configuration: unknown authorization mode %s", m))
		}
	}
	if (c.Server.TLSCertFile == "") != (c.Server.TLSPrivateKeyFile == "") {
		errs = append(errs, errors.New("invalid configuration: tlsCertFile (--tls-cert-file) and tlsPrivateKeyFile (--tls-private-key-file) must be given together"))
	}
	return errors.Join(errs...)
}
