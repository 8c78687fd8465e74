package kubeletserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
)

// NodeOptions configure one node's handler.
type NodeOptions struct {
	// Board carries the node's snapshots. Required.
	Board *Board
	// Clock is the time of the health check, of sinceSeconds and of the made-up usage. Required.
	Clock clock.PassiveClock
	// Metrics serves /metrics. Nil answers 404 there.
	Metrics http.Handler
	// ProbeMetrics serves /metrics/probes, the prober's registry. Nil answers 404 there.
	ProbeMetrics http.Handler
	// Configz is what /configz shows under "kubeletconfig". Nil answers an empty object.
	Configz any
	// SyncLoopThreshold is how old the last sync loop pass may be before /healthz fails: the
	// kubelet's max(2 × syncFrequency, 5m). Zero means 5m.
	SyncLoopThreshold time.Duration
	// DisableDebugging is the kubelet's enableDebuggingHandlers set to false (it is true by
	// default): /containerLogs, /runningpods, /configz, exec, attach, port-forward, run and the
	// profiles are not served, and their paths answer the kubelet's 405 "Debug endpoints are
	// disabled.".
	DisableDebugging bool
	// Profiling is the kubelet's enableProfilingHandler: the process's Go profiles at
	// /debug/pprof/, unless DisableDebugging. Without it they answer the kubelet's 405
	// "profiling endpoint is disabled.". Unlike the kubelet's, it is off unless asked for: a
	// profile is the process's, every node's.
	Profiling bool
	// Cmdline is what /debug/pprof/cmdline shows, in its format (NUL-separated), in place of the
	// process's command line: the caller leaves out the secrets the command line carries.
	Cmdline []string
	// Auth authenticates and authorizes every request, as the kubelet's server does when it
	// has its authentication settings. Nil serves everyone, as the kubelet's read-only server.
	Auth *Auth
}

// defaultSyncLoopThreshold is the kubelet's minimum sync loop health threshold.
const defaultSyncLoopThreshold = 5 * time.Minute

// NodeHandler serves one node at the kubelet's paths.
type NodeHandler struct {
	opts NodeOptions
	mux  *http.ServeMux
	auth *authFilter // nil: no authentication
}

// NewNodeHandler returns the handler of one node.
func NewNodeHandler(opts NodeOptions) (*NodeHandler, error) {
	var missing []string
	if opts.Board == nil {
		missing = append(missing, "Board")
	}
	if opts.Clock == nil {
		missing = append(missing, "Clock")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("new kubelet server: options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	if opts.SyncLoopThreshold <= 0 {
		opts.SyncLoopThreshold = defaultSyncLoopThreshold
	}
	h := &NodeHandler{opts: opts, mux: http.NewServeMux()}
	if opts.Auth != nil {
		h.auth = newAuthFilter(*opts.Auth, opts.Clock)
	}
	h.mux.HandleFunc("/healthz", h.healthz)
	h.mux.HandleFunc("/healthz/{check}", h.healthzCheck)
	h.mux.HandleFunc("GET /pods", h.pods)
	h.mux.HandleFunc("GET /pods/{$}", h.pods)
	h.mux.HandleFunc("/stats/summary", h.statsSummary)
	h.mux.HandleFunc("GET /metrics/resource", h.resourceMetrics)
	if opts.ProbeMetrics != nil {
		h.mux.Handle("GET /metrics/probes", opts.ProbeMetrics)
	}
	if opts.Metrics != nil {
		h.mux.Handle("GET /metrics", opts.Metrics)
	}
	if opts.DisableDebugging {
		for _, p := range []string{"/run/", "/exec/", "/attach/", "/portForward/", "/containerLogs/", "/runningpods/", pprofBase, "/logs/"} {
			h.mux.Handle(p, disabled("Debug endpoints are disabled."))
		}
		return h, nil
	}
	h.mux.HandleFunc("GET /runningpods/", h.runningPods)
	h.mux.HandleFunc("GET /configz", h.configz)
	h.mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", h.containerLogs)
	if opts.Profiling {
		// The process's Go profiles, shared by every node of the process.
		h.mux.HandleFunc(pprofBase, pprof.Index)
		h.mux.HandleFunc(pprofBase+"cmdline", h.cmdline)
		h.mux.HandleFunc(pprofBase+"profile", pprof.Profile)
		h.mux.HandleFunc(pprofBase+"symbol", pprof.Symbol)
		h.mux.HandleFunc(pprofBase+"trace", pprof.Trace)
	} else {
		h.mux.Handle(pprofBase, disabled("profiling endpoint is disabled."))
	}
	for _, p := range []string{"/exec/", "/attach/", "/portForward/", "/run/"} {
		h.mux.HandleFunc(p, h.unsupported)
	}
	return h, nil
}

// pprofBase is where the kubelet serves the Go profiles.
const pprofBase = "/debug/pprof/"

// disabled answers a path the configuration turned off, as the kubelet does.
func disabled(msg string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, msg, http.StatusMethodNotAllowed)
	})
}

// cmdline is pprof's Cmdline with the command line the caller gave: pprof's own shows os.Args,
// and with them a --token.
func (h *NodeHandler) cmdline(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, strings.Join(h.opts.Cmdline, "\x00"))
}

// ServeHTTP authenticates and authorizes the request, if the handler has Auth, and routes it to
// the kubelet path it names.
func (h *NodeHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.auth != nil {
		h.auth.serve(w, r, h.mux)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// snapshot is the node's snapshot for r: the latest, or one the node takes for it when the
// latest is older than the board's freshness bound (Board.Get).
func (h *NodeHandler) snapshot(r *http.Request) *Snapshot {
	return h.opts.Board.Get(r.Context(), h.opts.Clock.Now())
}

// pods is the kubelet's getPods: the pods bound to the node as the pod manager holds them, with
// the status manager's status.
func (h *NodeHandler) pods(w http.ResponseWriter, r *http.Request) {
	s := h.snapshot(r)
	empty := v1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: []v1.Pod{}}
	writeJSONList(w, http.StatusOK, &empty, "items", len(s.Pods), func(i int) any {
		pv := s.Pods[i]
		p := *pv.Pod // shares its fields with the snapshot, which nothing mutates
		if pv.HasStatus {
			p.Status = pv.Status
		}
		return &p
	})
}

// runningPods is the kubelet's getRunningPods: the runtime's pods as API pods carrying only their
// UID, name, namespace and running containers' names and images.
func (h *NodeHandler) runningPods(w http.ResponseWriter, r *http.Request) {
	s := h.snapshot(r)
	list := v1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: []v1.Pod{}}
	var items []v1.Pod
	for _, pv := range s.Pods {
		rs := pv.Runtime
		if rs == nil {
			continue
		}
		p := v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: pv.Pod.UID, Name: pv.Pod.Name, Namespace: pv.Pod.Namespace}}
		for _, c := range rs.ContainerStatuses {
			if c.State == "running" {
				p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: c.Name, Image: c.Image})
			}
		}
		if len(p.Spec.Containers) > 0 {
			items = append(items, p)
		}
	}
	writeJSONList(w, http.StatusOK, &list, "items", len(items), func(i int) any { return &items[i] })
}

// configz writes {"kubeletconfig": ...}, as component-base's configz does.
func (h *NodeHandler) configz(w http.ResponseWriter, _ *http.Request) {
	cfg := h.opts.Configz
	if cfg == nil {
		cfg = struct{}{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"kubeletconfig": cfg})
}

// unsupported answers exec, attach, port-forward and run: the simulated runtime runs no process.
func (h *NodeHandler) unsupported(w http.ResponseWriter, r *http.Request) {
	op := strings.Trim(strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)[0], "/")
	writeStatus(w, http.StatusNotImplemented, metav1.StatusReasonNotAcceptable,
		fmt.Sprintf("%s is not supported by the simulated runtime: minikubelet runs no container processes", op))
}

// writeJSON writes v as JSON with the status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// writeStatus writes a metav1.Status failure.
func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	writeJSON(w, code, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: msg, Reason: reason, Code: int32(code),
	})
}
