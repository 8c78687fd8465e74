package kubelet

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sources"
	"github.com/minikubelet/minikubelet/volumemanager/objects"
)

// PodWatch is the one pod watch of a fleet of kubelets in one process: each node's Run adds its
// api source, and once every node has, one reflector over every pod feeds each node what its own
// field-selected watch would (sources.SharedAPIRunner). The nodes share it as they share the API
// server; it stands for N watches, not for anything a kubelet shares. Beside it run the fleet's
// other shared watches: its node informer, and the service informer and ConfigMap and Secret
// reflectors of Objects.
type PodWatch struct {
	client kubernetes.Interface
	pods   sources.PodListWatcher // nil: client's
	clock  clock.WithTicker
	want   int
	// nodes is the fleet's one node informer: each node's lister reads it, as each kubelet
	// reads its own field-selected one.
	nodeInformers informers.SharedInformerFactory
	lister        corelisters.NodeLister
	// objects are the fleet's one service informer and one reflector per watched ConfigMap or
	// Secret, whichever nodes watch it (objects.Reflectors counts them).
	objects *objects.Reflectors

	mu    sync.Mutex // guards nodes and ready's closing
	nodes map[string]sources.SharedAPINode
	ready chan struct{} // closed once want nodes were added
}

// PodWatchOptions configures NewPodWatch.
type PodWatchOptions struct {
	// Client is the API client the watch lists and watches with. Required.
	Client kubernetes.Interface
	// Pods, when not nil, lists and watches the pods in Client's stead: the embedded API
	// server's, in process (sources.SharedAPIRunnerOptions.Pods).
	Pods sources.PodListWatcher
	// Clock drives the reflectors' back-off. Required.
	Clock clock.WithTicker
	// Nodes is how many nodes the fleet has: the pods are watched once every one has joined.
	Nodes int
}

// NewPodWatch returns the pod watch of a fleet; nothing watches before Run.
func NewPodWatch(opts PodWatchOptions) (*PodWatch, error) {
	client, clk, nodes := opts.Client, opts.Clock, opts.Nodes
	if client == nil || clk == nil {
		return nil, fmt.Errorf("new pod watch: options Client and Clock: %w", minikubelet.ErrMissingOption)
	}
	if nodes < 1 {
		return nil, errors.New("new pod watch: a fleet has at least one node")
	}
	w := &PodWatch{client: client, pods: opts.Pods, clock: clk, want: nodes, nodes: map[string]sources.SharedAPINode{}, ready: make(chan struct{}),
		nodeInformers: informers.NewSharedInformerFactory(client, 0)}
	w.lister = w.nodeInformers.Core().V1().Nodes().Lister()
	w.objects = objects.NewReflectors(client)
	return w, nil
}

// Objects are the watches of the ConfigMaps and Secrets the fleet's pods reference and its
// service informer, which every node's World.Objects shares; Run runs them.
func (w *PodWatch) Objects() ObjectSource { return w.objects }

// nodeLister is the fleet's node lister.
func (w *PodWatch) nodeLister() corelisters.NodeLister { return w.lister }

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

// Run watches the nodes, the services and the objects the nodes watch at once, and the pods
// once every node has joined, until ctx is done.
func (w *PodWatch) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	// The object watches and the node informer end with ctx, or when the pod watch fails
	// (their Run never does): cancel first, since Shutdown waits for the informer's goroutines,
	// which end with ctx.
	defer cancel()
	wg.Go(func() { _ = w.objects.Run(ctx, w.clock) })
	w.nodeInformers.Start(ctx.Done())
	defer func() {
		cancel()
		w.nodeInformers.Shutdown()
	}()
	select {
	case <-ctx.Done():
		return nil
	case <-w.ready:
	}
	w.mu.Lock()
	nodes := w.nodes
	w.mu.Unlock()
	r, err := sources.NewSharedAPIRunner(sources.SharedAPIRunnerOptions{Client: w.client, Pods: w.pods, Clock: w.clock, Nodes: nodes})
	if err != nil {
		return err
	}
	return r.Run(ctx)
}
