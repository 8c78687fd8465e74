package config

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/nodestatus"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/sources"
)

// defaultAddress is the kubelet server's default address: every interface.
const defaultAddress = "0.0.0.0"

// SetDefaults fills in the v1beta1 defaults of the fields minikubelet models, as the kubelet's
// SetDefaults_KubeletConfiguration does: an unset field (zero, or nil for a pointer) takes its
// default, a set one is kept. The kubelet defaults a config file as it decodes it and lays the
// command-line flags over the result, so a flag's zero is not defaulted; FromV1beta1 refuses it
// where it is invalid.
func SetDefaults(v *V1beta1) {
	if v.EnableServer == nil {
		v.EnableServer = ptr.To(true)
	}
	if v.EnableDebuggingHandlers == nil {
		v.EnableDebuggingHandlers = ptr.To(true)
	}
	defaultDuration(&v.SyncFrequency, podworkers.DefaultResyncInterval)
	defaultDuration(&v.FileCheckFrequency, sources.DefaultFileCheckFrequency)
	defaultDuration(&v.HTTPCheckFrequency, sources.DefaultHTTPCheckFrequency)
	if v.Address == "" {
		v.Address = defaultAddress
	}
	if v.Port == 0 {
		v.Port = nodestatus.DefaultKubeletPort
	}
	setAuthDefaults(v)
	// An unset report frequency follows an update frequency that is set, for compatibility
	// with the releases that had only the one.
	if v.NodeStatusReportFrequency.Duration == 0 {
		v.NodeStatusReportFrequency = v.NodeStatusUpdateFrequency
		defaultDuration(&v.NodeStatusReportFrequency, nodestatus.ReportPeriod)
	}
	defaultDuration(&v.NodeStatusUpdateFrequency, nodestatus.StatusPeriod)
	if v.MaxPods == 0 {
		v.MaxPods = nodestatus.DefaultMaxPods
	}
	// Pulls are serialized unless maxParallelImagePulls asks for more than one at a time, so
	// that setting it alone is enough.
	if v.SerializeImagePulls == nil {
		v.SerializeImagePulls = ptr.To(v.MaxParallelImagePulls == nil || *v.MaxParallelImagePulls < 2)
	}
	if v.MergeDefaultEvictionSettings == nil {
		v.MergeDefaultEvictionSettings = ptr.To(false)
	}
	// The kubelet defaults the cap under the gates the configuration itself sets.
	if v.CrashLoopBackOff.MaxContainerRestartPeriod == nil && FeatureGates(v.FeatureGates).Enabled(KubeletCrashLoopBackOffMax) {
		v.CrashLoopBackOff.MaxContainerRestartPeriod = &metav1.Duration{Duration: kubecontainer.MaxContainerBackoff}
	}
}

// setAuthDefaults is the v1beta1 defaults of authentication and authorization: webhook
// authentication and authorization through the API server, no anonymous requests. (The
// kubelet's flags alone start from the opposite, LegacyAuth.)
func setAuthDefaults(v *V1beta1) {
	authn, authz := &v.Authentication, &v.Authorization
	if authn.Anonymous.Enabled == nil {
		authn.Anonymous.Enabled = ptr.To(false)
	}
	if authn.Webhook.Enabled == nil {
		authn.Webhook.Enabled = ptr.To(true)
	}
	defaultDuration(&authn.Webhook.CacheTTL, 2*time.Minute)
	if authz.Mode == "" {
		authz.Mode = AuthorizationWebhook
	}
	defaultDuration(&authz.Webhook.CacheAuthorizedTTL, 5*time.Minute)
	defaultDuration(&authz.Webhook.CacheUnauthorizedTTL, 30*time.Second)
}

// LegacyAuth sets, where v leaves them unset, the authentication and authorization the
// kubelet's command line starts from when no config file is given (applyLegacyDefaults):
// anonymous requests allowed, no webhook, AlwaysAllow. SetDefaults fills in the rest.
func LegacyAuth(v *V1beta1) {
	if v.Authentication.Anonymous.Enabled == nil {
		v.Authentication.Anonymous.Enabled = ptr.To(true)
	}
	if v.Authentication.Webhook.Enabled == nil {
		v.Authentication.Webhook.Enabled = ptr.To(false)
	}
	if v.Authorization.Mode == "" {
		v.Authorization.Mode = AuthorizationAlwaysAllow
	}
}

func defaultDuration(d *metav1.Duration, def time.Duration) {
	if d.Duration == 0 {
		d.Duration = def
	}
}
