package kubeletserver

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Auth is who may call a node's server, as the kubelet's authentication and authorization
// settings say (KubeletConfiguration's authentication and authorization): a caller is
// authenticated by its client certificate (x509.clientCAFile), else by its bearer token through
// the API server (webhook.enabled: a TokenReview), else it is anonymous if that is allowed
// (anonymous.enabled), and refused 401 otherwise. It is then authorized for the node and the
// subresource its path maps to (AttributesFor), by every caller (AlwaysAllow) or by a
// SubjectAccessReview to the API server (Webhook). Reviews are cached for their TTLs, as the
// kubelet caches them.
type Auth struct {
	// NodeName is the node the requests are authorized against: nodes/<name>.
	NodeName string
	// ClientCAs verify client certificates; nil authenticates none. The server's TLS
	// configuration must request the certificates (tls.RequestClientCert), as the kubelet's
	// does, without verifying them itself.
	ClientCAs *x509.CertPool
	// Tokens reviews bearer tokens; nil authenticates none.
	Tokens TokenReviewer
	// TokenTTL is how long a TokenReview's answer is kept (webhook.cacheTTL).
	TokenTTL time.Duration
	// Anonymous lets a request that carries no credentials in as system:anonymous.
	Anonymous bool
	// Access reviews each request (authorization mode Webhook); nil allows every
	// authenticated request (AlwaysAllow).
	Access AccessReviewer
	// AllowTTL and DenyTTL are how long a SubjectAccessReview's answer is kept
	// (webhook.cacheAuthorizedTTL and cacheUnauthorizedTTL).
	AllowTTL, DenyTTL time.Duration
	// FineGrained is the KubeletFineGrainedAuthz gate (on by default): /pods, /runningpods,
	// /healthz and /configz are tried as their own subresources before nodes/proxy.
	FineGrained bool
}

// TokenReviewer creates TokenReviews: client-go's TokenReviewInterface is one.
type TokenReviewer interface {
	Create(ctx context.Context, review *authenticationv1.TokenReview, opts metav1.CreateOptions) (*authenticationv1.TokenReview, error)
}

// AccessReviewer creates SubjectAccessReviews: client-go's SubjectAccessReviewInterface is one.
type AccessReviewer interface {
	Create(ctx context.Context, review *authorizationv1.SubjectAccessReview, opts metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error)
}

// The users and groups the kubelet's authenticators give.
const (
	anonymousUser       = "system:anonymous"
	unauthenticated     = "system:unauthenticated"
	authenticatedGroup  = "system:authenticated"
	authCacheMaxEntries = 8192
)

// errInvalidToken is the bearer token authenticator's answer to a token the review did not
// authenticate.
var errInvalidToken = errors.New("invalid bearer token")

// authFilter is an Auth at work: its caches, on the handler's clock.
type authFilter struct {
	a      Auth
	clock  clock.PassiveClock
	tokens *ttlCache[tokenAnswer]
	access *ttlCache[bool]
}

type tokenAnswer struct {
	user *authenticationv1.UserInfo // nil: not authenticated
}

func newAuthFilter(a Auth, clk clock.PassiveClock) *authFilter {
	return &authFilter{a: a, clock: clk,
		tokens: newTTLCache[tokenAnswer](clk, authCacheMaxEntries),
		access: newTTLCache[bool](clk, authCacheMaxEntries)}
}

// serve authenticates and authorizes r, as the kubelet's auth filter does, and passes it to
// next if both succeed; otherwise it answers 401, 403 or 500 with the kubelet's texts.
func (f *authFilter) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	logger := klog.FromContext(r.Context())
	user, err := f.authenticate(r)
	if err != nil {
		logger.Error(err, "Unable to authenticate the request due to an error")
	}
	if user == nil {
		writeText(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	attrs := AttributesFor(f.a.NodeName, r.Method, r.URL.Path, f.a.FineGrained)
	var subresources []string
	for _, attr := range attrs {
		subresources = append(subresources, attr.Subresource)
		allowed, err := f.authorize(r.Context(), user, attr)
		if err != nil {
			logger.Error(err, "Authorization error", "user", user.Username, "verb", attr.Verb, "resource", attr.Resource, "subresource", attr.Subresource)
			writeText(w, http.StatusInternalServerError, fmt.Sprintf("Authorization error (user=%s, verb=%s, resource=%s, subresource=%s)",
				user.Username, attr.Verb, attr.Resource, attr.Subresource))
			return
		}
		if allowed {
			next.ServeHTTP(w, r)
			return
		}
	}
	logger.V(2).Info("Forbidden", "user", user.Username, "verb", attrs[0].Verb, "resource", attrs[0].Resource, "subresource(s)", subresources)
	writeText(w, http.StatusForbidden, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=%s, subresource(s)=%v)\n",
		user.Username, attrs[0].Verb, attrs[0].Resource, subresources))
}

// authenticate is the kubelet's authenticator: the client certificate, then the bearer token,
// then anonymous. A nil user with a nil error is a request without credentials and anonymous
// requests refused; a credential that does not authenticate is an error, anonymous or not.
func (f *authFilter) authenticate(r *http.Request) (*authenticationv1.UserInfo, error) {
	var errs []error
	if f.a.ClientCAs != nil && r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		u, err := f.certUser(r.TLS.PeerCertificates)
		if err == nil {
			return u, nil
		}
		errs = append(errs, err)
	}
	if f.a.Tokens != nil {
		if token, ok := bearerToken(r); ok {
			u, err := f.tokenUser(r.Context(), token)
			if err == nil {
				// As kube-apiserver's bearer token authenticator, the token goes no further.
				r.Header.Del("Authorization")
				return u, nil
			}
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if f.a.Anonymous {
		return &authenticationv1.UserInfo{Username: anonymousUser, Groups: []string{unauthenticated}}, nil
	}
	return nil, nil
}

// certUser verifies the client's chain against the client CAs for client authentication: the
// user is its common name, the groups its organizations.
func (f *authFilter) certUser(chain []*x509.Certificate) (*authenticationv1.UserInfo, error) {
	opts := x509.VerifyOptions{Roots: f.a.ClientCAs, Intermediates: x509.NewCertPool(), CurrentTime: f.clock.Now(),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	for _, c := range chain[1:] {
		opts.Intermediates.AddCert(c)
	}
	leaf := chain[0]
	if _, err := leaf.Verify(opts); err != nil {
		return nil, fmt.Errorf("verifying certificate %s failed: %w", leaf.Subject.CommonName, err)
	}
	if leaf.Subject.CommonName == "" {
		return nil, errors.New("common name of the client certificate is empty")
	}
	return &authenticationv1.UserInfo{Username: leaf.Subject.CommonName, Groups: withAuthenticated(leaf.Subject.Organization)}, nil
}

// withAuthenticated is groups with system:authenticated, which every authenticated user is in.
func withAuthenticated(groups []string) []string {
	if slices.Contains(groups, authenticatedGroup) {
		return groups
	}
	return append(slices.Clone(groups), authenticatedGroup)
}

// bearerToken reads the Authorization header as kube-apiserver's bearer token authenticator
// does: "Bearer", in any case, a space, a token that is not empty.
func bearerToken(r *http.Request) (string, bool) {
	parts := strings.SplitN(strings.TrimSpace(r.Header.Get("Authorization")), " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") || parts[1] == "" {
		return "", false
	}
	return parts[1], true
}

// tokenUser reviews the token, or takes the review's answer from the cache.
func (f *authFilter) tokenUser(ctx context.Context, token string) (*authenticationv1.UserInfo, error) {
	sum := sha256.Sum256([]byte(token))
	key := string(sum[:])
	ans, ok := f.tokens.get(key)
	if !ok {
		review, err := f.a.Tokens.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("token review: %w", err)
		}
		if review.Status.Authenticated {
			u := review.Status.User
			u.Groups = withAuthenticated(u.Groups)
			ans.user = &u
		}
		f.tokens.put(key, ans, f.a.TokenTTL)
	}
	if ans.user == nil {
		return nil, errInvalidToken
	}
	return ans.user, nil
}

// authorize asks whether user may do attr: yes without an AccessReviewer (AlwaysAllow), else
// the SubjectAccessReview's answer, cached for AllowTTL or DenyTTL.
func (f *authFilter) authorize(ctx context.Context, user *authenticationv1.UserInfo, attr authorizationv1.ResourceAttributes) (bool, error) {
	if f.a.Access == nil {
		return true, nil
	}
	spec := authorizationv1.SubjectAccessReviewSpec{
		ResourceAttributes: &attr,
		User:               user.Username,
		Groups:             user.Groups,
		UID:                user.UID,
	}
	if len(user.Extra) > 0 {
		spec.Extra = map[string]authorizationv1.ExtraValue{}
		for k, v := range user.Extra {
			spec.Extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return false, err
	}
	key := string(b)
	if allowed, ok := f.access.get(key); ok {
		return allowed, nil
	}
	review, err := f.a.Access.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("subject access review: %w", err)
	}
	allowed := review.Status.Allowed // Denied only matters beside other authorizers
	ttl := f.a.DenyTTL
	if allowed {
		ttl = f.a.AllowTTL
	}
	f.access.put(key, allowed, ttl)
	return allowed, nil
}

// The kubelet's paths whose requests are authorized as a subresource of their own.
var subresourcePaths = []struct{ path, subresource string }{
	{"/stats", "stats"}, {"/metrics", "metrics"}, {"/logs", "log"}, {"/checkpoint", "checkpoint"},
	{"/statusz", "statusz"}, {"/flagz", "configz"},
}

// fineGrainedPaths are tried first under KubeletFineGrainedAuthz.
var fineGrainedPaths = []struct{ path, subresource string }{
	{"/pods", "pods"}, {"/healthz", "healthz"}, {"/configz", "configz"}, {"/runningpods/", "pods"},
}

// AttributesFor is the kubelet's GetRequestAttributes: the authorization attributes of a request
// to node's server, one per subresource to try in turn (any one allowing is enough). Every
// request is on the resource nodes/<node> (core group, v1) with the verb its method maps to
// (GET get, POST create, PUT update, PATCH patch, DELETE delete, others none). /stats, /metrics,
// /logs, /checkpoint, /statusz and /flagz have subresources of their own (stats, metrics, log,
// checkpoint, statusz, configz); every other path is proxy, /containerLogs and exec included.
// With fineGrained, /pods and /runningpods/ (pods), /healthz (healthz) and /configz (configz)
// are tried before proxy.
func AttributesFor(node, method, path string, fineGrained bool) []authorizationv1.ResourceAttributes {
	verb := map[string]string{http.MethodPost: "create", http.MethodGet: "get", http.MethodPut: "update",
		http.MethodPatch: "patch", http.MethodDelete: "delete"}[method]
	var subresources []string
	if fineGrained {
		for _, p := range fineGrainedPaths {
			if isSubpath(path, p.path) {
				subresources = append(subresources, p.subresource)
				break
			}
		}
	}
	last := "proxy"
	for _, p := range subresourcePaths {
		if isSubpath(path, p.path) {
			last = p.subresource
			break
		}
	}
	subresources = append(subresources, last)
	attrs := make([]authorizationv1.ResourceAttributes, len(subresources))
	for i, sub := range subresources {
		attrs[i] = authorizationv1.ResourceAttributes{Verb: verb, Version: "v1", Resource: "nodes", Subresource: sub, Name: node}
	}
	return attrs
}

// isSubpath reports whether subpath is path or below it.
func isSubpath(subpath, path string) bool {
	path = strings.TrimSuffix(path, "/")
	return subpath == path || (strings.HasPrefix(subpath, path) && len(subpath) > len(path) && subpath[len(path)] == '/')
}

// writeText answers with a plain text body, as go-restful's WriteErrorString: no newline added.
func writeText(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg)
}

// ttlCache keeps answers for a time on a clock, with at most max entries: when full, the
// expired ones are dropped, and if none has expired, all of them, so that callers who send
// ever new credentials cannot grow it without bound.
type ttlCache[V any] struct {
	clock clock.PassiveClock
	max   int

	mu sync.Mutex // guards m
	m  map[string]ttlEntry[V]
}

type ttlEntry[V any] struct {
	v       V
	expires time.Time
}

func newTTLCache[V any](clk clock.PassiveClock, max int) *ttlCache[V] {
	return &ttlCache[V]{clock: clk, max: max, m: map[string]ttlEntry[V]{}}
}

func (c *ttlCache[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || !c.clock.Now().Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c *ttlCache[V]) put(key string, v V, ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	if len(c.m) >= c.max {
		for k, e := range c.m {
			if !now.Before(e.expires) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= c.max {
			clear(c.m)
		}
	}
	c.m[key] = ttlEntry[V]{v: v, expires: now.Add(ttl)}
}
