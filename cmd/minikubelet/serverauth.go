package main

import (
	"time"

	"github.com/spf13/pflag"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/kubelet/config"
)

// serverAuthFlags are the kubelet's flags of its server's certificate, authentication and
// authorization. Each one given overrides what --config (or the defaults kubeletConfig starts
// from) says.
type serverAuthFlags struct {
	anonymous, webhook             bool
	webhookTTL                     time.Duration
	mode                           string
	authorizedTTL, deniedTTL       time.Duration
	clientCAFile                   string
	tlsCertFile, tlsPrivateKeyFile string
}

func (f *serverAuthFlags) bind(fs *pflag.FlagSet, defaults *config.Config) {
	d := defaults.Server
	fs.BoolVar(&f.anonymous, "anonymous-auth", true, "let requests to the kubelet servers that carry no credentials in as system:anonymous (authentication.anonymous.enabled; "+
		"the default without --config and without --kubeconfig)")
	fs.BoolVar(&f.webhook, "authentication-token-webhook", false, "authenticate bearer tokens with TokenReviews to the API server (authentication.webhook.enabled; "+
		"the default with --config or --kubeconfig)")
	fs.DurationVar(&f.webhookTTL, "authentication-token-webhook-cache-ttl", d.Authentication.WebhookCacheTTL, "how long a TokenReview's answer is kept (authentication.webhook.cacheTTL)")
	fs.StringVar(&f.mode, "authorization-mode", config.AuthorizationAlwaysAllow, "AlwaysAllow, or Webhook: SubjectAccessReviews to the API server (authorization.mode; "+
		"Webhook is the default with --config or --kubeconfig)")
	fs.DurationVar(&f.authorizedTTL, "authorization-webhook-cache-authorized-ttl", d.Authorization.CacheAuthorizedTTL, "how long an allowing SubjectAccessReview is kept (authorization.webhook.cacheAuthorizedTTL)")
	fs.DurationVar(&f.deniedTTL, "authorization-webhook-cache-unauthorized-ttl", d.Authorization.CacheUnauthorizedTTL, "how long a refusing SubjectAccessReview is kept (authorization.webhook.cacheUnauthorizedTTL)")
	fs.StringVar(&f.clientCAFile, "client-ca-file", "", "authorities whose client certificates authenticate their common name and organizations (authentication.x509.clientCAFile); "+
		"by default the API server's, from --kubeconfig or the embedded one")
	fs.StringVar(&f.tlsCertFile, "tls-cert-file", "", "the kubelet servers' certificate, every node's (tlsCertFile); by default one made at start for each node's name and address")
	fs.StringVar(&f.tlsPrivateKeyFile, "tls-private-key-file", "", "the key of --tls-cert-file (tlsPrivateKeyFile)")
}

// apply lays the flags that were set over v.
func (f *serverAuthFlags) apply(fs *pflag.FlagSet, v *config.V1beta1) error {
	if fs.Changed("anonymous-auth") {
		v.Authentication.Anonymous.Enabled = ptr.To(f.anonymous)
	}
	if fs.Changed("authentication-token-webhook") {
		v.Authentication.Webhook.Enabled = ptr.To(f.webhook)
	}
	if fs.Changed("authentication-token-webhook-cache-ttl") {
		v.Authentication.Webhook.CacheTTL.Duration = f.webhookTTL
	}
	if fs.Changed("authorization-mode") {
		v.Authorization.Mode = kubeletconfigv1beta1.KubeletAuthorizationMode(f.mode)
	}
	if fs.Changed("authorization-webhook-cache-authorized-ttl") {
		v.Authorization.Webhook.CacheAuthorizedTTL.Duration = f.authorizedTTL
	}
	if fs.Changed("authorization-webhook-cache-unauthorized-ttl") {
		v.Authorization.Webhook.CacheUnauthorizedTTL.Duration = f.deniedTTL
	}
	if fs.Changed("client-ca-file") {
		v.Authentication.X509.ClientCAFile = f.clientCAFile
	}
	if fs.Changed("tls-cert-file") {
		v.TLSCertFile = f.tlsCertFile
	}
	if fs.Changed("tls-private-key-file") {
		v.TLSPrivateKeyFile = f.tlsPrivateKeyFile
	}
	return nil
}
