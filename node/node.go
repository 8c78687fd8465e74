package node

import (
	"errors"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/pleg"
	"github.com/minikubelet/minikubelet/podmanager"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/status"
	"github.com/minikubelet/minikubelet/syncloop"
	"github.com/minikubelet/minikubelet/trace"
	"github.com/minikubelet/minikubelet/workqueue"
)

// Options configure one simulated kubelet.
type Options struct {
	// NodeName is the node's name, lowercase. Required.
	NodeName string
	// NodeIP is reported as the node's InternalIP and the pods' hostIP.
	NodeIP string
	// Clock is the time of every core. Required.
	Clock clock.PassiveClock
	// Tracer receives every core's trace events. Nil means trace.Discard.
	Tracer trace.Tracer
	// Seed seeds the pod workers' jitter.
	Seed uint64
	// Client is the API server. Nil is a standalone kubelet: no node object, no mirror pods, no
	// status writes.
	Client kubernetes.Interface
	// Recorder receives the kubelet's Kubernetes events. Nil records none.
	Recorder record.EventRecorder
	// Latencies are the fake runtime's.
	Latencies fakeruntime.Latencies
	// SyncFrequency is the pod workers' resync interval; zero is the kubelet's 1m.
	SyncFrequency time.Duration
	// SourcesReady is PodConfig's SeenAllSources. Nil means every source is ready.
	SourcesReady func(seen sets.Set[string]) bool
}

// Node is one simulated kubelet's sync side. Loop is its entry point; the other fields are the
// cores the scenario engine scripts and inspects.
type Node struct {
	Loop    *syncloop.Loop
	Runtime *fakeruntime.Runtime
	Pods    *podmanager.Manager
	Cache   *pleg.Cache
}

// New builds a Node.
func New(opts Options) (*Node, error) {
	if opts.Clock == nil {
		return nil, errors.New("node: Options.Clock is required")
	}
	tracer := opts.Tracer
	if tracer == nil {
		tracer = trace.Discard
	}
	rt := fakeruntime.New(fakeruntime.Options{
		Clock:     opts.Clock,
		Latencies: opts.Latencies,
		// The runtime's trace events double as the source of the kubelet's Pulling, Started,
		// Killing and BackOff events.
		Tracer: syncloop.RuntimeEvents{Next: tracer, Recorder: opts.Recorder},
	})
	cache := pleg.NewCache()
	pods := podmanager.New(podmanager.Options{Tracer: tracer})
	lo := syncloop.Options{
		NodeName:     opts.NodeName,
		NodeIP:       opts.NodeIP,
		Clock:        opts.Clock,
		Tracer:       tracer,
		Rand:         rand.New(rand.NewPCG(opts.Seed, opts.Seed)),
		PodManager:   pods,
		Workers:      podworkers.Options{ResyncInterval: opts.SyncFrequency},
		WorkQueue:    workqueue.New(opts.Clock),
		Runtime:      rt,
		PLEG:         pleg.New(pleg.Options{Runtime: rt, Cache: cache, Clock: opts.Clock, Tracer: tracer}),
		Cache:        cache,
		Recorder:     opts.Recorder,
		SourcesReady: opts.SourcesReady,
	}
	if opts.Client != nil {
		lo.NodeClient = syncloop.ClientsetNodeClient{Client: opts.Client}
		lo.MirrorClient = podmanager.NewMirrorClient(podmanager.MirrorClientOptions{Client: opts.Client, NodeName: opts.NodeName, Tracer: tracer})
		lo.Status = status.Options{Client: status.ClientsetAdapter{Client: opts.Client}}
	}
	loop, err := syncloop.New(lo)
	if err != nil {
		return nil, err
	}
	return &Node{Loop: loop, Runtime: rt, Pods: pods, Cache: cache}, nil
}
