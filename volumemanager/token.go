package volumemanager

import (
	"context"
	"errors"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// The token manager's bounds (pkg/kubelet/token): a token is requested again after 24 hours, or
// once 80% of its lifetime has passed, less a jitter of up to 10 whole seconds.
const (
	maxTokenTTL    = 24 * time.Hour
	maxTokenJitter = 10 * time.Second
)

// TokenClient asks the API server for a service account token: create serviceaccounts/token.
type TokenClient interface {
	CreateToken(ctx context.Context, namespace, serviceAccount string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
}

// Rand is the token manager's jitter source; *rand.Rand satisfies it.
type Rand interface {
	Float64() float64
}

// TokenOptions configure a TokenManager.
type TokenOptions struct {
	// Clock decides when a token must be refreshed. Required.
	Clock clock.PassiveClock
	// Tracer receives each request. Required.
	Tracer trace.Tracer
	// Client makes the requests; nil is a standalone kubelet, which can get no token.
	Client TokenClient
	// Rand draws the refresh jitter. Required.
	Rand Rand
}

// TokenManager is the kubelet's service account token manager: it caches the tokens the
// projected volumes asked for, by request, and asks the API server again only when a cached one
// needs a refresh.
type TokenManager struct {
	opts  TokenOptions
	cache map[string]*authenticationv1.TokenRequest
}

// NewTokenManager returns a TokenManager.
func NewTokenManager(opts TokenOptions) (*TokenManager, error) {
	var missing []string
	if opts.Clock == nil {
		missing = append(missing, "Clock")
	}
	if opts.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	if opts.Rand == nil {
		missing = append(missing, "Rand")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("new token manager: options %v: %w", missing, minikubelet.ErrMissingOption)
	}
	return &TokenManager{opts: opts, cache: map[string]*authenticationv1.TokenRequest{}}, nil
}

// errNoClient is the standalone token manager's answer.
var errNoClient = errors.New("cannot use TokenManager when kubelet is in standalone mode")

// GetServiceAccountToken returns the cached token for the request unless it needs a refresh, else
// requests one; a failed refresh keeps serving the cached token until it expires, as the kubelet
// does.
func (t *TokenManager) GetServiceAccountToken(namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	key := tokenKey(name, namespace, tr)
	cached, ok := t.cache[key]
	if ok && !t.requiresRefresh(cached) {
		return cached, nil
	}
	got, err := t.request(namespace, name, tr, ok)
	if err != nil {
		switch {
		case !ok:
			return nil, fmt.Errorf("failed to fetch token: %w", err)
		case t.opts.Clock.Now().After(cached.Status.ExpirationTimestamp.Time):
			return nil, fmt.Errorf("token %s expired and refresh failed: %w", key, err)
		}
		return cached, nil
	}
	t.cache[key] = got
	return got, nil
}

// request asks the API server, and traces the request.
func (t *TokenManager) request(namespace, name string, tr *authenticationv1.TokenRequest, refresh bool) (*authenticationv1.TokenRequest, error) {
	if t.opts.Client == nil {
		return nil, errNoClient
	}
	e := trace.Event{Component: trace.VolumeManager, Event: trace.KindToken, Message: "serviceaccount " + namespace + "/" + name, Func: "GetServiceAccountToken"}
	if ref := tr.Spec.BoundObjectRef; ref != nil && ref.Kind == "Pod" {
		e.Pod, e.UID = namespace+"/"+ref.Name, string(ref.UID)
	}
	if refresh {
		e.Reason = "Refresh"
	}
	got, err := t.opts.Client.CreateToken(context.TODO(), namespace, name, tr)
	if err != nil {
		e.Event, e.Reason, e.Message = trace.KindError, "FailedTokenRequest", err.Error()
	}
	t.opts.Tracer.Emit(e)
	return got, err
}

// requiresRefresh is the kubelet's: after 24 hours, or past 80% of the token's lifetime, each
// less a jitter.
func (t *TokenManager) requiresRefresh(tr *authenticationv1.TokenRequest) bool {
	if tr.Spec.ExpirationSeconds == nil {
		return false
	}
	now := t.opts.Clock.Now()
	exp := tr.Status.ExpirationTimestamp.Time
	lifetime := time.Duration(*tr.Spec.ExpirationSeconds) * time.Second
	iat := exp.Add(-lifetime)
	jitter := time.Duration(t.opts.Rand.Float64()*maxTokenJitter.Seconds()) * time.Second
	if now.After(iat.Add(maxTokenTTL - jitter)) {
		return true
	}
	return now.After(exp.Add(-lifetime*20/100 - jitter))
}

// DeleteServiceAccountToken forgets the tokens bound to the pod (a projected volume's teardown).
func (t *TokenManager) DeleteServiceAccountToken(podUID types.UID) {
	for k, tr := range t.cache {
		if ref := tr.Spec.BoundObjectRef; ref != nil && ref.UID == podUID {
			delete(t.cache, k)
		}
	}
}

// tokenKey is the kubelet's keyFunc: the request's service account, namespace, audiences,
// expiry, bound object and UID.
func tokenKey(name, namespace string, tr *authenticationv1.TokenRequest) string {
	var exp int64
	if tr.Spec.ExpirationSeconds != nil {
		exp = *tr.Spec.ExpirationSeconds
	}
	var ref authenticationv1.BoundObjectReference
	if tr.Spec.BoundObjectRef != nil {
		ref = *tr.Spec.BoundObjectRef
	}
	return fmt.Sprintf("%q/%q/%#v/%#v/%#v/%q", name, namespace, tr.Spec.Audiences, exp, ref, tr.UID)
}
