package fakeapiserver

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	compbasemetrics "k8s.io/component-base/metrics"
)

// The server's own /metrics: kube-apiserver's two request families, apiserver_request_total and
// apiserver_request_duration_seconds, with its names, help, buckets and labels, for the requests
// on resources. Each Server has its own registry, so that several servers in one process (tests,
// a replay) count apart. Durations are read on the server's clock: in replay, where the virtual
// clock stands still while a request runs, every request takes 0 s.

// apiMetrics are one server's request families.
type apiMetrics struct {
	reg      compbasemetrics.KubeRegistry
	requests *compbasemetrics.CounterVec
	latency  *compbasemetrics.HistogramVec
}

func newAPIMetrics() (*apiMetrics, error) {
	m := &apiMetrics{
		reg: compbasemetrics.NewKubeRegistry(),
		requests: compbasemetrics.NewCounterVec(&compbasemetrics.CounterOpts{
			Subsystem:      "apiserver",
			Name:           "request_total",
			Help:           "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
			StabilityLevel: compbasemetrics.STABLE,
		}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code"}),
		latency: compbasemetrics.NewHistogramVec(&compbasemetrics.HistogramOpts{
			Subsystem: "apiserver",
			Name:      "request_duration_seconds",
			Help:      "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
			Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
				4, 5, 6, 8, 10, 15, 20, 30, 45, 60},
			StabilityLevel: compbasemetrics.STABLE,
		}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}),
	}
	for _, c := range []compbasemetrics.Registerable{m.requests, m.latency} {
		if err := m.reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// handler serves the families in the Prometheus exposition format.
func (m *apiMetrics) handler() http.Handler {
	return compbasemetrics.HandlerFor(m.reg, compbasemetrics.HandlerOpts{})
}

// reportedVerb is the verb label kube-apiserver gives a request: the HTTP method in capitals,
// with GET of a collection LIST, a watch WATCH, an apply APPLY and a DELETE of a collection
// DELETECOLLECTION.
func reportedVerb(r *http.Request, verb verbs) string {
	switch verb {
	case verbWatch:
		return "WATCH"
	case verbList:
		return "LIST"
	case verbDeleteCollection:
		return "DELETECOLLECTION"
	case verbPatch:
		if ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";"); strings.TrimSpace(ct) == string(types.ApplyYAMLPatchType) {
			return "APPLY"
		}
	}
	return r.Method
}

// scope is kube-apiserver's CleanScope: "resource" for a request that names an object (or
// creates one), "namespace" for a namespace's collection, "cluster" for the rest.
func (t target) scope(verb verbs) string {
	switch {
	case t.name != "" || verb == verbCreate:
		return "resource"
	case t.namespace != "":
		return "namespace"
	}
	return "cluster"
}

// dryRunLabel is the dry_run label: the request's dryRun values, sorted and without duplicates.
func dryRunLabel(r *http.Request) string {
	if !strings.Contains(r.URL.RawQuery, "dryRun") {
		return "" // the common case, without parsing the query
	}
	values := r.URL.Query()["dryRun"]
	if len(values) == 0 {
		return ""
	}
	set := map[string]bool{}
	for _, v := range values {
		set[v] = true
	}
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// instrument serves a request on a resource with serve, counting it and its duration once it
// is answered. A verb the resource does not serve is not counted, as kube-apiserver has no route
// to count it on.
func (s *Server) instrument(w http.ResponseWriter, r *http.Request, t target, serve func(http.ResponseWriter)) {
	verb := requestVerb(r, t)
	if !t.allows(verb) {
		serve(w)
		return
	}
	start := s.clock.Now()
	sw := &statusWriter{ResponseWriter: w}
	serve(sw)
	code := sw.code
	if code == 0 {
		code = http.StatusOK
	}
	s.count(reportedVerb(r, verb), dryRunLabel(r), t, verb, code, start)
}

// count counts one answered request begun at start: the HTTP path's instrument and the
// in-process client (direct.go) label it alike.
func (s *Server) count(reported, dryRun string, t target, verb verbs, code int, start time.Time) {
	labels := [...]string{reported, dryRun, t.res.gv.Group, t.res.gv.Version, t.res.name,
		t.subresource, t.scope(verb), "apiserver", strconv.Itoa(code)}
	s.metrics.requests.WithLabelValues(labels[:]...).Inc()
	s.metrics.latency.WithLabelValues(labels[:len(labels)-1]...).Observe(s.clock.Since(start).Seconds())
}

// statusWriter notes the status code of a response. Unwrap lets http.ResponseController reach
// the connection beneath, for the flushes and deadlines of watches.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
