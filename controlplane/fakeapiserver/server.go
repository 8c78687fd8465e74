package fakeapiserver

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math/rand"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// DefaultHistorySize is how many watch events each resource keeps for watches that resume from
// an older resource version, when Options.HistorySize is zero.
const DefaultHistorySize = 10000

// DefaultMaxBodyBytes is the largest request body accepted when Options.MaxBodyBytes is zero:
// 3 MiB, the limit kube-apiserver applies to a single object.
const DefaultMaxBodyBytes = 3 << 20

// Options configures a Server.
type Options struct {
	// Clock stamps creationTimestamp, deletionTimestamp and table ages. Required. When it also
	// implements clock.Clock, watch timeoutSeconds are honoured on it.
	Clock clock.PassiveClock
	// Tracer receives one event per pod write. Required; trace.Discard records nothing.
	Tracer trace.Tracer
	// HistorySize is how many watch events each resource keeps. Zero means DefaultHistorySize.
	HistorySize int
	// HistoryBytes bounds the encoded size of each resource's watch history. Zero means
	// DefaultHistoryBytes.
	HistoryBytes int64
	// MaxUnauthenticatedConnections bounds the connections Serve keeps open that have not yet
	// carried an authenticated request: past it, the oldest of them is closed. Connections are
	// otherwise not capped. Zero means DefaultMaxUnauthenticatedConnections.
	MaxUnauthenticatedConnections int
	// MaxBodyBytes caps request bodies; larger ones get 413. Zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// BearerToken, when set, is the token every request must carry ("Authorization: Bearer
	// <token>"); any other request is answered 401 Unauthorized. Empty means no authentication.
	BearerToken string
	// DataDir, when set, is where the server keeps its objects (a bbolt database), so that a
	// server started again on it serves them with their resource versions. Empty means memory
	// only. A server with a DataDir must be closed with Close.
	DataDir string
	// ResourceMetrics, when set, is where the metrics.k8s.io API finds the nodes' and pods'
	// usage (resourcemetrics.go). Nil means the API is not served, as on a cluster without
	// metrics-server.
	ResourceMetrics ResourceMetrics
	// KubeletClientCertificate is what the server presents when it calls a kubelet (pods/log,
	// exec, attach, portforward, nodes/proxy): kube-apiserver's --kubelet-client-certificate
	// and --kubelet-client-key. Nil presents none.
	KubeletClientCertificate *tls.Certificate
	// KubeletCertificateAuthority verifies the kubelets' serving certificates:
	// kube-apiserver's --kubelet-certificate-authority. Nil verifies none, as kube-apiserver
	// without the flag (kubeadm's setting).
	KubeletCertificateAuthority *x509.CertPool
	// ServiceCIDR is the IPv4 range Services' cluster IPs are allocated from (kube-apiserver's
	// --service-cluster-ip-range). The zero value means DefaultServiceCIDR.
	ServiceCIDR netip.Prefix
	// Rand draws UIDs, generateName suffixes and cluster IPs; the server owns it from then on. Nil means a
	// source seeded with 1, so that a replay names its objects the same way every time; with a
	// DataDir, a randomly seeded one, so that a restarted server never draws the UIDs it stored.
	Rand *rand.Rand

	// afterTry, when set, runs in guaranteedUpdate after each try built its object and before
	// the write takes the store lock: where a concurrent writer may move the stored object. Only
	// the package's own tests set it, to make that race happen at a chosen try; it is fixed from
	// New on.
	afterTry func(try int)
}

func (o Options) validate() error {
	var missing []string
	if o.Clock == nil {
		missing = append(missing, "Clock")
	}
	if o.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	if len(missing) > 0 {
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	if o.ServiceCIDR.IsValid() && (!o.ServiceCIDR.Addr().Is4() || o.ServiceCIDR.Bits() > 30) {
		return fmt.Errorf("options ServiceCIDR %s: want an IPv4 range of at least 4 addresses", o.ServiceCIDR)
	}
	return nil
}

// Server is a Kubernetes API server that keeps its objects in memory, and on disk too with
// Options.DataDir. Its zero value is not usable; call New.
type Server struct {
	clock   clock.PassiveClock
	maxBody int64
	// maxUnauth is Options.MaxUnauthenticatedConnections.
	maxUnauth int
	token     string
	store     *store
	// serviceCIDR is the range of Services' cluster IPs (internal/registry/services.go).
	serviceCIDR netip.Prefix
	// metrics are the request families /metrics serves (apimetrics.go).
	metrics *apiMetrics
	// resourceMetrics is Options.ResourceMetrics.
	resourceMetrics ResourceMetrics
	// rootCA is the CA bundle of every kube-root-ca.crt (rootca.go); the store lock guards it.
	rootCA []byte
	// kubelets is the transport that calls the kubelets (kubeletproxy.go).
	kubelets *http.Transport
	// stop is closed by Serve when its context ends, which ends every open watch.
	stop     chan struct{}
	stopOnce sync.Once
	// afterTry is Options.afterTry.
	afterTry func(try int)
}

// New returns a Server with an empty store, or an error wrapping ErrMissingOption.
func New(opts Options) (*Server, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.HistorySize <= 0 {
		opts.HistorySize = DefaultHistorySize
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.HistoryBytes <= 0 {
		opts.HistoryBytes = DefaultHistoryBytes
	}
	if opts.MaxUnauthenticatedConnections <= 0 {
		opts.MaxUnauthenticatedConnections = DefaultMaxUnauthenticatedConnections
	}
	if !opts.ServiceCIDR.IsValid() {
		opts.ServiceCIDR = DefaultServiceCIDR
	}
	if opts.Rand == nil {
		opts.Rand = rand.New(rand.NewSource(1))
		if opts.DataDir != "" {
			opts.Rand = randomlySeeded()
		}
	}
	limitJSONPatchCopies()
	metrics, err := newAPIMetrics()
	if err != nil {
		return nil, fmt.Errorf("API server metrics: %w", err)
	}
	st := newStore(storeOptions{
		historySize: opts.HistorySize, historyBytes: opts.HistoryBytes, rand: opts.Rand, now: opts.Clock.Now,
		tracer: opts.Tracer,
	})
	if opts.DataDir != "" {
		if err := st.openDisk(opts.DataDir); err != nil {
			return nil, err
		}
	}
	s := &Server{
		clock:     opts.Clock,
		maxBody:   opts.MaxBodyBytes,
		maxUnauth: opts.MaxUnauthenticatedConnections,
		token:     opts.BearerToken,
		store:     st,

		serviceCIDR: opts.ServiceCIDR.Masked(),
		metrics:     metrics,

		resourceMetrics: opts.ResourceMetrics,
		kubelets:        kubeletTransport(opts.KubeletClientCertificate, opts.KubeletCertificateAuthority),
		stop:            make(chan struct{}),
		afterTry:        opts.afterTry,
	}
	if err := s.bootstrapNamespaces(); err != nil {
		_ = s.Close()
		return nil, err
	}
	// A namespace a crash left Terminating is finished before its service account could be
	// made again.
	if err := s.resumeNamespaceDeletions(); err != nil {
		_ = s.Close()
		return nil, err
	}
	if err := s.bootstrapServiceAccounts(); err != nil {
		_ = s.Close()
		return nil, err
	}
	if err := s.bootstrapRootCA(); err != nil {
		_ = s.Close()
		return nil, err
	}
	if err := s.bootstrapKubernetesService(); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// ResourceVersion returns the resource version of the latest write, so that a caller can wait
// until a watcher has seen everything written so far.
func (s *Server) ResourceVersion() uint64 {
	return s.store.currentRV()
}

// CloseWatches ends every open watch, as a restart of kube-apiserver or of its watch cache does.
// Clients see their watch stream end and re-establish it from the last resource version they
// saw, which is how a test makes a client resume from a version that may have been compacted.
func (s *Server) CloseWatches() {
	_ = s.store.locked(func() error {
		s.store.closeWatches()
		return nil
	})
}

// Handler returns the whole REST API as one http.Handler.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(s.serveHTTP)
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		// A panic is a bug in this package; answer with a Status instead of killing the
		// connection so that a fuzz test or a client sees it as a 500.
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			writeError(w, internalError(p))
		}
	}()
	if !s.authenticated(r) {
		// Negotiated, as kube-apiserver's authentication filter answers (ErrorNegotiated).
		writeErrorAs(w, answerForm(r), unauthorized())
		return
	}
	trustConn(r.Context())
	if r.Body != nil {
		limitBodyRead(w, r)
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
	}
	s.expireNow()
	switch p := r.URL.Path; {
	case p == "/version" || p == "/version/":
		s.serveVersion(w, r)
	case p == "/metrics":
		s.metrics.handler().ServeHTTP(w, r)
	case p == "/healthz" || p == "/livez" || p == "/readyz":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok"))
	case p == "/openapi/v3" || p == "/openapi/v3/" || hasPrefix(p, "/openapi/"):
		s.serveOpenAPI(w, r)
	default:
		s.serveAPI(w, r)
	}
	s.finalizeNow()
}

func hasPrefix(s, prefix string) bool {
	return len(s) >= len(prefix) && s[:len(prefix)] == prefix
}

func formatRV(rv uint64) string {
	return strconv.FormatUint(rv, 10)
}
