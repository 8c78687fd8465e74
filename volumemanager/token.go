package volumemanager

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
	// beside is set once a TokenRunner makes the requests (`run`): a request is then an ask the
	// runner takes, and its answer comes back through answer. Unset (a replay), the request is
	// made at once, on the caller's goroutine.
	beside bool
	// asks are the requests not yet taken by the runner, in the order they were asked; inFlight
	// holds the key of every ask not yet answered, and failed the failed answers not yet served.
	asks     []tokenAsk
	inFlight map[string]types.UID
	failed   map[string]tokenFailure
	// served are the failures served during the SetUp under way: a SetUp that still waits for
	// another of its tokens gives them back (EndSetUp), so that they reach the FailedMount of
	// the SetUp that completes, as the kubelet's SetUp, asking one token after the other,
	// reports every failure it met.
	served map[string]tokenFailure
	// notify wakes the runner when an ask is queued.
	notify func()
}

// tokenAsk is a request the TokenRunner makes beside the sync loop.
type tokenAsk struct {
	key       string
	Namespace string
	Name      string
	Request   *authenticationv1.TokenRequest
	// Refresh is set when a cached token is being refreshed.
	Refresh bool
}

// tokenAnswer is the API server's answer to an ask, handled on the loop's goroutine.
type tokenAnswer struct {
	Ask   tokenAsk
	Token *authenticationv1.TokenRequest
	Err   error
}

// tokenFailure is a failed answer, with the UID of the pod the token was bound to.
type tokenFailure struct {
	uid types.UID
	err error
}

// boundUID is the UID of the pod the request binds the token to; empty for none.
func boundUID(tr *authenticationv1.TokenRequest) types.UID {
	if ref := tr.Spec.BoundObjectRef; ref != nil && ref.Kind == "Pod" {
		return ref.UID
	}
	return ""
}

// errTokenPending is a token manager's answer while the request runs beside the loop: the mount
// that asked waits for the answer, as the kubelet's mount operation waits in its goroutine.
var errTokenPending = errors.New("service account token request in flight")

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
	return &TokenManager{opts: opts, cache: map[string]*authenticationv1.TokenRequest{}, inFlight: map[string]types.UID{}, failed: map[string]tokenFailure{}}, nil
}

// errNoClient is the standalone token manager's answer.
var errNoClient = errors.New("cannot use TokenManager when kubelet is in standalone mode")

// GetServiceAccountToken returns the cached token for the request unless it needs a refresh, else
// requests one; a failed refresh keeps serving the cached token until it expires, as the kubelet
// does. Beside the loop the request is an ask: errTokenPending until its answer has come back.
func (t *TokenManager) GetServiceAccountToken(namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	var buf [256]byte // on the stack: a cached token is served without making the key a string
	kb := appendTokenKey(buf[:0], name, namespace, tr)
	cached, ok := t.cache[string(kb)]
	if ok && !t.requiresRefresh(cached) {
		return cached, nil
	}
	key := string(kb)
	var err error
	switch failed, answered := t.failed[key]; {
	case answered:
		delete(t.failed, key)
		if t.served == nil {
			t.served = map[string]tokenFailure{}
		}
		t.served[key] = failed
		err = failed.err
	case t.opts.Client == nil:
		err = errNoClient
	case t.beside:
		if _, asked := t.inFlight[key]; !asked {
			t.inFlight[key] = boundUID(tr)
			t.asks = append(t.asks, tokenAsk{key: key, Namespace: namespace, Name: name, Request: tr, Refresh: ok})
			t.notify()
		}
		return nil, errTokenPending
	default:
		a := tokenAsk{key: key, Namespace: namespace, Name: name, Request: tr, Refresh: ok}
		var got *authenticationv1.TokenRequest
		got, err = t.opts.Client.CreateToken(context.TODO(), namespace, name, tr)
		t.traced(a, err)
		if err == nil {
			t.cache[key] = got
			return got, nil
		}
	}
	switch {
	case !ok:
		return nil, fmt.Errorf("failed to fetch token: %w", err)
	case t.opts.Clock.Now().After(cached.Status.ExpirationTimestamp.Time):
		return nil, fmt.Errorf("token %s expired and refresh failed: %w", key, err)
	}
	return cached, nil
}

// EndSetUp ends a volume's SetUp: when it still waits for a token (pending), the failures it was
// served go back to be served again once it can complete.
func (t *TokenManager) EndSetUp(pending bool) {
	if pending {
		for k, f := range t.served {
			t.failed[k] = f
		}
	}
	clear(t.served)
}

// takeAsks hands the runner the asks queued since it last took them.
func (t *TokenManager) takeAsks() []tokenAsk {
	asks := t.asks
	t.asks = nil
	return asks
}

// answer takes an ask's answer: a token is cached, a failure kept for the next
// GetServiceAccountToken of the request to serve. An ask whose pod's tokens were deleted
// meanwhile is only traced.
func (t *TokenManager) answer(a tokenAnswer) {
	t.traced(a.Ask, a.Err)
	uid, asked := t.inFlight[a.Ask.key]
	if !asked {
		return
	}
	delete(t.inFlight, a.Ask.key)
	if a.Err != nil {
		t.failed[a.Ask.key] = tokenFailure{uid: uid, err: a.Err}
		return
	}
	t.cache[a.Ask.key] = a.Token
}

// traced traces a request made, with its failure.
func (t *TokenManager) traced(a tokenAsk, err error) {
	e := trace.Event{Component: trace.VolumeManager, Event: trace.KindToken, Message: "serviceaccount " + a.Namespace + "/" + a.Name, Func: "GetServiceAccountToken"}
	if ref := a.Request.Spec.BoundObjectRef; ref != nil && ref.Kind == "Pod" {
		e.Pod, e.UID = a.Namespace+"/"+ref.Name, string(ref.UID)
	}
	if a.Refresh {
		e.Reason = "Refresh"
	}
	if err != nil {
		e.Event, e.Reason, e.Message = trace.KindError, "FailedTokenRequest", err.Error()
	}
	t.opts.Tracer.Emit(e)
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

// DeleteServiceAccountToken forgets the tokens bound to the pod (a projected volume's teardown),
// and the answers to its asks still in flight.
func (t *TokenManager) DeleteServiceAccountToken(podUID types.UID) {
	for k, tr := range t.cache {
		if ref := tr.Spec.BoundObjectRef; ref != nil && ref.UID == podUID {
			delete(t.cache, k)
		}
	}
	for k, uid := range t.inFlight {
		if uid == podUID {
			delete(t.inFlight, k)
		}
	}
	for k, f := range t.failed {
		if f.uid == podUID {
			delete(t.failed, k)
		}
	}
}

// appendTokenKey appends the kubelet's keyFunc text to b: the request's service account,
// namespace, audiences, expiry, bound object and UID, as fmt.Sprintf("%q/%q/%#v/%#v/%#v/%q")
// formats them. It is written out because every remount of a projected volume, after every
// sync of its pod, asks for the token again, and fmt formats the audiences and the bound object
// with reflection.
func appendTokenKey(b []byte, name, namespace string, tr *authenticationv1.TokenRequest) []byte {
	var exp int64
	if tr.Spec.ExpirationSeconds != nil {
		exp = *tr.Spec.ExpirationSeconds
	}
	var ref authenticationv1.BoundObjectReference
	if tr.Spec.BoundObjectRef != nil {
		ref = *tr.Spec.BoundObjectRef
	}
	aud := tr.Spec.Audiences
	b = strconv.AppendQuote(b, name)
	b = append(b, '/')
	b = strconv.AppendQuote(b, namespace)
	b = append(b, "/[]string"...)
	if aud == nil {
		b = append(b, "(nil)"...)
	} else {
		b = append(b, '{')
		for i, a := range aud {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendQuote(b, a)
		}
		b = append(b, '}')
	}
	b = append(b, '/')
	b = strconv.AppendInt(b, exp, 10)
	b = append(b, "/v1.BoundObjectReference{Kind:"...)
	b = strconv.AppendQuote(b, ref.Kind)
	b = append(b, ", APIVersion:"...)
	b = strconv.AppendQuote(b, ref.APIVersion)
	b = append(b, ", Name:"...)
	b = strconv.AppendQuote(b, ref.Name)
	b = append(b, ", UID:"...)
	b = strconv.AppendQuote(b, string(ref.UID))
	b = append(b, "}/"...)
	return strconv.AppendQuote(b, string(tr.UID))
}
