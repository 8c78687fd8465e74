package kubelet

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sources"
)

// PodWatch is the one pod watch of a fleet of kubelets in one process: each node's Run adds its
// api source, and once every node has, one reflector over every pod feeds each node what its own
// field-selected watch would (sources.SharedAPIRunner). The nodes share it as they share the API
// server; it stands for N watches, not for anything a kubelet shares.
type PodWatch struct {
	client kubernetes.Interface
	clock  clock.WithTicker
	want   int

	mu    sync.Mutex // guards nodes and ready's closing
	nodes map[string]sources.SharedAPINode
	ready chan struct{} // closed once want nodes were added
}

// NewPodWatch returns the pod watch of a fleet of nodes kubelets; nothing watches before Run.
func NewPodWatch(client kubernetes.Interface, clk clock.WithTicker, nodes int) (*PodWatch, error) {
	if client == nil || clk == nil {
		return nil, fmt.Errorf("new pod watch: options client and clock: %w", minikubelet.ErrMissingOption)
	}
	if nodes < 1 {
		return nil, errors.New("new pod watch: a fleet has at least one node")
	}
	return &PodWatch{client: client, clock: clk, want: nodes, nodes: map[string]sources.SharedAPINode{}, ready: make(chan struct{})}, nil
}

// add is a node's api source joining; the last of the fleet's lets the watch start.
func (w *PodWatch) add(name string, n sources.SharedAPINode) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nodes[name] = n
	select {
	case <-w.ready:
		// A node added once the watch runs would need a relist to see its pods; a fleet's
		// nodes all join before.
	default:
		if len(w.nodes) == w.want {
			close(w.ready)
		}
	}
}

// Run waits until every node has joined, then watches until ctx is done.
func (w *PodWatch) Run(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case <-w.ready:
	}
	w.mu.Lock()
	nodes := w.nodes
	w.mu.Unlock()
	r, err := sources.NewSharedAPIRunner(sources.SharedAPIRunnerOptions{Client: w.client, Clock: w.clock, Nodes: nodes})
	if err != nil {
		return err
	}
	return r.Run(ctx)
}
