package config

import (
	"net/http"
	"time"

	"github.com/minikubelet/minikubelet/nodestatus"
)

// Config is the configuration of one simulated kubelet: the KubeletConfiguration fields
// minikubelet models, with the v1beta1 defaults applied, and the simulated machine's capacity.
// It is the kubelet's internal KubeletConfiguration: every value is explicit (Default gives the
// kubelet's defaults), and FromV1beta1 is the one way to make it from what a user writes.
type Config struct {
	// Sources are the static pod sources: staticPodPath, staticPodURL and their periods.
	Sources Sources
	// SyncFrequency is syncFrequency: the pod workers' resync interval.
	SyncFrequency time.Duration
	// ImagePulls are serializeImagePulls and maxParallelImagePulls.
	ImagePulls ImagePulls
	// NodeStatus are nodeStatusUpdateFrequency and nodeStatusReportFrequency.
	NodeStatus NodeStatus
	// CrashLoopBackOff is crashLoopBackOff.
	CrashLoopBackOff CrashLoopBackOff
	// FeatureGates are featureGates as given: minikubelet acts on the gates in ModelledGates,
	// and checks the names of the others.
	FeatureGates FeatureGates
	// Machine is the node's size and reservations: maxPods, kubeReserved, systemReserved,
	// evictionHard, mergeDefaultEvictionSettings, and capacity, the one field that is not
	// KubeletConfiguration's (a real kubelet measures its machine).
	Machine nodestatus.Machine
	// Server is the kubelet server: enableServer, address, port, its certificate and who may
	// call it.
	Server Server
}

// Sources are the KubeletConfiguration fields of the static pod sources.
type Sources struct {
	// StaticPodPath is staticPodPath, a directory or file of static pods; empty is no file
	// source.
	StaticPodPath string
	// StaticPodURL is staticPodURL, where the http source polls; empty is no http source.
	StaticPodURL string
	// StaticPodURLHeader is staticPodURLHeader, sent with each poll.
	StaticPodURLHeader http.Header
	// FileCheckFrequency is fileCheckFrequency, how often StaticPodPath is listed again.
	FileCheckFrequency time.Duration
	// HTTPCheckFrequency is httpCheckFrequency, how often StaticPodURL is polled.
	HTTPCheckFrequency time.Duration
}

// ImagePulls say how many image pulls the node runs at once.
type ImagePulls struct {
	// Serialize is serializeImagePulls: one pull at a time.
	Serialize bool
	// MaxParallel is maxParallelImagePulls, the bound when Serialize is false; nil is no bound.
	MaxParallel *int32
}

// NodeStatus are the node status heartbeat's periods.
type NodeStatus struct {
	// UpdateFrequency is nodeStatusUpdateFrequency: how often the status is computed, and
	// written when it changed.
	UpdateFrequency time.Duration
	// ReportFrequency is nodeStatusReportFrequency: how often an unchanged status is written
	// all the same.
	ReportFrequency time.Duration
}

// CrashLoopBackOff is KubeletConfiguration's crashLoopBackOff.
type CrashLoopBackOff struct {
	// MaxContainerRestartPeriod caps the crash-loop back-off when the KubeletCrashLoopBackOffMax
	// gate is on (1s to 300s); it is zero, and must be, when the gate is off.
	MaxContainerRestartPeriod time.Duration
}

// Server is the kubelet server's KubeletConfiguration fields.
type Server struct {
	// Enable is enableServer.
	Enable bool
	// Address is address, the IP address it listens on.
	Address string
	// Port is port; 0 picks a free port (the kubelet refuses 0).
	Port int32
	// EnableDebuggingHandlers is enableDebuggingHandlers: the logs, configz and profiling
	// paths (on by default, as on the kubelet).
	EnableDebuggingHandlers bool
	// EnableProfilingHandler is enableProfilingHandler: the Go profiles under /debug/pprof.
	// It is off unless set, where the kubelet's default is on: a profile is the process's,
	// every node's (docs/fidelity.md).
	EnableProfilingHandler bool
	// TLSCertFile and TLSPrivateKeyFile are tlsCertFile and tlsPrivateKeyFile, the serving
	// certificate and its key; both empty makes a self-signed one at start.
	TLSCertFile, TLSPrivateKeyFile string
	// Authentication is authentication: who a caller is.
	Authentication Authentication
	// Authorization is authorization: what a caller may do.
	Authorization Authorization
}

// Authentication is KubeletConfiguration's authentication.
type Authentication struct {
	// ClientCAFile is x509.clientCAFile: a client certificate signed by one of its authorities
	// authenticates its common name as the user and its organizations as the groups. Empty
	// authenticates no certificate.
	ClientCAFile string
	// Webhook is webhook.enabled: a bearer token is authenticated by a TokenReview to the API
	// server.
	Webhook bool
	// WebhookCacheTTL is webhook.cacheTTL, how long a TokenReview's answer is kept.
	WebhookCacheTTL time.Duration
	// Anonymous is anonymous.enabled: a request with no credentials is system:anonymous rather
	// than refused.
	Anonymous bool
}

// The authorization modes (KubeletAuthorizationMode).
const (
	AuthorizationAlwaysAllow = "AlwaysAllow"
	AuthorizationWebhook     = "Webhook"
)

// Authorization is KubeletConfiguration's authorization.
type Authorization struct {
	// Mode is mode: AuthorizationAlwaysAllow, or AuthorizationWebhook, which asks the API
	// server with a SubjectAccessReview.
	Mode string
	// CacheAuthorizedTTL and CacheUnauthorizedTTL are webhook.cacheAuthorizedTTL and
	// webhook.cacheUnauthorizedTTL, how long a SubjectAccessReview's answer is kept.
	CacheAuthorizedTTL, CacheUnauthorizedTTL time.Duration
}

// Default returns the kubelet's default configuration: an empty KubeletConfiguration, defaulted
// and converted.
func Default() *Config {
	v := &V1beta1{}
	SetDefaults(v)
	c, err := FromV1beta1(v)
	if err != nil {
		panic("the default kubelet configuration is invalid: " + err.Error())
	}
	return c
}
