package kubeletserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Fleet serves many nodes on one listener, routing each request to one node's handler.
type Fleet struct {
	// advertise is the host:port the nodes advertise, for /discovery/prometheus.
	advertise string

	mu    sync.RWMutex // guards nodes and names
	nodes map[string]fleetNode
	names []string // sorted
}

type fleetNode struct {
	h     *NodeHandler
	board *Board
}

// NewFleet returns an empty Fleet whose nodes are reached at advertise (host:port).
func NewFleet(advertise string) *Fleet {
	return &Fleet{advertise: advertise, nodes: map[string]fleetNode{}}
}

// Add serves a node. A node added again replaces the earlier one.
func (f *Fleet) Add(name string, h *NodeHandler, board *Board) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.nodes[name]; !ok {
		f.names = append(f.names, name)
		slices.Sort(f.names)
	}
	f.nodes[name] = fleetNode{h: h, board: board}
}

// podScoped are the kubelet paths that name a pod as /{path}/{namespace}/{pod}/...: the fleet
// finds the node that runs it.
var podScoped = []string{"containerLogs", "exec", "attach", "portForward", "run"}

// ServeHTTP routes: /nodes/{node}/{path} to that node's /{path}; a pod-scoped path to the node
// that runs the pod; /discovery/prometheus to the target list; any other path to the only node
// when there is one. With several nodes /healthz is the fleet's: ok when every node is healthy.
func (f *Fleet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	segs := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 4)
	switch {
	case segs[0] == "nodes" && len(segs) >= 2:
		n, ok := f.node(segs[1])
		if !ok {
			http.Error(w, fmt.Sprintf("node %q is not simulated here", segs[1]), http.StatusNotFound)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + strings.Join(segs[2:], "/")
		r2.URL.RawPath = ""
		n.h.ServeHTTP(w, r2)
		return
	case segs[0] == "discovery" && len(segs) == 2 && segs[1] == "prometheus":
		f.discovery(w)
		return
	case slices.Contains(podScoped, segs[0]) && len(segs) >= 3:
		n, ok := f.podNode(segs[1], segs[2])
		if !ok {
			http.Error(w, fmt.Sprintf("pod %q does not exist", segs[2]), http.StatusNotFound)
			return
		}
		n.h.ServeHTTP(w, r)
		return
	}
	f.mu.RLock()
	var only *fleetNode
	if len(f.names) == 1 {
		n := f.nodes[f.names[0]]
		only = &n
	}
	f.mu.RUnlock()
	if only != nil {
		only.h.ServeHTTP(w, r)
		return
	}
	if r.URL.Path == "/healthz" {
		f.healthz(w)
		return
	}
	http.Error(w, "this listener serves many nodes: use /nodes/{node}"+r.URL.Path, http.StatusNotFound)
}

func (f *Fleet) node(name string) (fleetNode, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	n, ok := f.nodes[name]
	return n, ok
}

// podNode finds the node whose latest snapshot holds the pod.
func (f *Fleet) podNode(namespace, pod string) (fleetNode, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, name := range f.names {
		n := f.nodes[name]
		if s, _ := n.board.Latest(); s != nil {
			if _, ok := s.find(namespace, pod); ok {
				return n, true
			}
		}
	}
	return fleetNode{}, false
}

// healthz is ok when every node's checks pass, else 500 naming the failing nodes.
func (f *Fleet) healthz(w http.ResponseWriter) {
	f.mu.RLock()
	var failing []string
	for _, name := range f.names {
		for _, c := range f.nodes[name].h.checks() {
			if c.run() != nil {
				failing = append(failing, name)
				break
			}
		}
	}
	f.mu.RUnlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if len(failing) > 0 {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "healthz check failed for nodes: %s\n", strings.Join(failing, ", "))
		return
	}
	fmt.Fprint(w, "ok")
}

// discovery is Prometheus' HTTP service discovery format: one target group per node, its
// metrics path and node name as labels.
func (f *Fleet) discovery(w http.ResponseWriter) {
	type group struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	f.mu.RLock()
	groups := make([]group, 0, len(f.names))
	for _, name := range f.names {
		groups = append(groups, group{Targets: []string{f.advertise}, Labels: map[string]string{
			"__metrics_path__": "/nodes/" + name + "/metrics", "node": name,
		}})
	}
	f.mu.RUnlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(groups)
}
