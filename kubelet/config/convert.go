package config

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/minikubelet/minikubelet/nodestatus"
)

// FromV1beta1 converts a defaulted KubeletConfiguration (SetDefaults, then any flags) into a
// Config and validates it. Fields minikubelet does not model are ignored. A pointer left nil
// reads as its default; a zero left by a flag stays zero, and is refused where the kubelet (or a
// period that must tick) cannot take it.
func FromV1beta1(v *V1beta1) (*Config, error) {
	kubeReserved, kerr := parseReserved("kubeReserved", v.KubeReserved)
	systemReserved, serr := parseReserved("systemReserved", v.SystemReserved)
	if err := errors.Join(kerr, serr); err != nil {
		return nil, err
	}
	c := &Config{
		Sources: Sources{
			StaticPodPath:      v.StaticPodPath,
			StaticPodURL:       v.StaticPodURL,
			StaticPodURLHeader: header(v.StaticPodURLHeader),
			FileCheckFrequency: v.FileCheckFrequency.Duration,
			HTTPCheckFrequency: v.HTTPCheckFrequency.Duration,
		},
		SyncFrequency: v.SyncFrequency.Duration,
		ImagePulls: ImagePulls{
			Serialize:   v.SerializeImagePulls == nil || *v.SerializeImagePulls,
			MaxParallel: v.MaxParallelImagePulls,
		},
		NodeStatus: NodeStatus{
			UpdateFrequency: v.NodeStatusUpdateFrequency.Duration,
			ReportFrequency: v.NodeStatusReportFrequency.Duration,
		},
		FeatureGates: FeatureGates(maps.Clone(v.FeatureGates)),
		Machine: nodestatus.Machine{
			Capacity:                     v.Capacity,
			MaxPods:                      v.MaxPods,
			KubeReserved:                 kubeReserved,
			SystemReserved:               systemReserved,
			EvictionHard:                 maps.Clone(v.EvictionHard),
			MergeDefaultEvictionSettings: v.MergeDefaultEvictionSettings != nil && *v.MergeDefaultEvictionSettings,
		},
		Server: Server{
			Enable:                  v.EnableServer == nil || *v.EnableServer,
			Address:                 v.Address,
			Port:                    v.Port,
			EnableDebuggingHandlers: v.EnableDebuggingHandlers == nil || *v.EnableDebuggingHandlers,
			// Not defaulted: off unless the configuration asks for it (Server's comment).
			EnableProfilingHandler: v.EnableProfilingHandler != nil && *v.EnableProfilingHandler,
			TLSCertFile:            v.TLSCertFile,
			TLSPrivateKeyFile:      v.TLSPrivateKeyFile,
			Authentication: Authentication{
				ClientCAFile:    v.Authentication.X509.ClientCAFile,
				Webhook:         v.Authentication.Webhook.Enabled == nil || *v.Authentication.Webhook.Enabled,
				WebhookCacheTTL: v.Authentication.Webhook.CacheTTL.Duration,
				Anonymous:       v.Authentication.Anonymous.Enabled != nil && *v.Authentication.Anonymous.Enabled,
			},
			Authorization: Authorization{
				Mode:                 string(v.Authorization.Mode),
				CacheAuthorizedTTL:   v.Authorization.Webhook.CacheAuthorizedTTL.Duration,
				CacheUnauthorizedTTL: v.Authorization.Webhook.CacheUnauthorizedTTL.Duration,
			},
		},
	}
	if p := v.CrashLoopBackOff.MaxContainerRestartPeriod; p != nil {
		c.CrashLoopBackOff.MaxContainerRestartPeriod = p.Duration
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// parseReserved parses kubeReserved or systemReserved, which v1beta1 writes as strings, as the
// kubelet's parseResourceList does at start-up. Which resources may be reserved, and how much, is
// the machine's validation.
func parseReserved(field string, m map[string]string) (v1.ResourceList, error) {
	if len(m) == 0 {
		return nil, nil
	}
	rl := make(v1.ResourceList, len(m))
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(m)) {
		q, err := resource.ParseQuantity(m[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("invalid configuration: %s: failed to parse quantity %q for %q resource: %w", field, m[name], name, err))
			continue
		}
		rl[v1.ResourceName(name)] = q
	}
	return rl, errors.Join(errs...)
}

// header is staticPodURLHeader as an http.Header, its names canonical.
func header(m map[string][]string) http.Header {
	if m == nil {
		return nil
	}
	h := http.Header{}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		for _, value := range m[name] {
			h.Add(name, value)
		}
	}
	return h
}
