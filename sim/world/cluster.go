package world

import (
	"context"
	"fmt"
	"math/rand"
	randv2 "math/rand/v2"
	"net/http"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/api/eventrecord"
	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/nodestatus"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Cluster is the control plane around the replayed nodes: the fake API server, served in
// process, and beside it the controllers and the peer nodes (other nodes of the cluster, kept
// Ready by a heartbeat of their own, so that the cluster does not look fully disrupted when a
// simulated node stops).
type Cluster struct {
	clk    clock.PassiveClock
	tracer trace.Tracer
	server *fakeapiserver.Server
	client kubernetes.Interface
	// direct is the in-process client of the kubelets' hottest requests (writes.go).
	direct *fakeapiserver.Direct
	// eventNano is the name suffix counter every event recorder of the cluster shares.
	eventNano int64

	cores []controllers.Core
	peers []*nodestatus.Status
	// rv is the API server's resource version when the controllers last ran: they run again
	// when it moved (what their informers would have delivered) or when one wants to.
	rv     uint64
	synced bool
	// router is the nodes' shared pod watch, made with the first node's.
	router *PodRouter
	// onDeliver is the router's (OnPodDelivered).
	onDeliver func(node string, pod *v1.Pod)
	// onRead is told of the nodes and leases the controllers read (OnStoredRead).
	onRead func(reader string, obj runtime.Object)
}

// NewCluster starts the API server; its random source (the UIDs it assigns) is seeded with seed.
func NewCluster(clk clock.PassiveClock, tracer trace.Tracer, seed int64) (*Cluster, error) {
	c := &Cluster{clk: clk, tracer: tracer}
	var err error
	if c.server, err = fakeapiserver.New(fakeapiserver.Options{Clock: clk, Tracer: tracer, Rand: rand.New(rand.NewSource(seed))}); err != nil {
		return nil, err
	}
	if c.client, err = c.clientThrough(c.server.Transport()); err != nil {
		return nil, err
	}
	c.direct = c.server.Direct(userAgent)
	return c, nil
}

// clientThrough is a client of the API server whose requests go through rt, in the caller's
// goroutine.
func (c *Cluster) clientThrough(rt http.RoundTripper) (kubernetes.Interface, error) {
	return kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: rt, QPS: -1})
}

// Client is the API server's client for everyone but the kubelets: scenario steps and
// expectations, the controllers, the peers.
func (c *Cluster) Client() kubernetes.Interface { return c.client }

// Server is the API server itself, for a caller that serves it over HTTP as well.
func (c *Cluster) Server() *fakeapiserver.Server { return c.server }

// ResourceVersion is the API server's current resource version.
func (c *Cluster) ResourceVersion() uint64 { return c.server.ResourceVersion() }

// NodeLink is a new connection from a node to the API server, and a client that uses it.
func (c *Cluster) NodeLink() (*Link, kubernetes.Interface, error) {
	link := NewLink(c.server.Transport(), c.clk)
	client, err := c.clientThrough(link)
	return link, client, err
}

// APIWatch is a new watch of node's pods, over link. Every node's watch reads the cluster's one
// shared pod watch, routed by node name, as `run --nodes` does: the pod history is read once for
// the fleet, not once per node.
func (c *Cluster) APIWatch(node string, link *Link) *APIWatch {
	if c.router == nil {
		c.router = NewPodRouter(c.server)
		c.router.onDeliver = c.onDeliver
	}
	return c.router.Watch(node, link)
}

// OnPodDelivered has fn told of every pod the shared watch hands a node's api source: the API
// server's stored object itself, which both sides share read-only; and of every pod the
// controllers' cache takes in (from its list or the history), with node ControllersReader: a
// struct of its own over the stored object's fields, read-only the same way. A driver that checks the contract keeps a copy
// of each (replay.RunOptions.CheckReadOnlyPods). Call it before the first APIWatch.
func (c *Cluster) OnPodDelivered(fn func(node string, pod *v1.Pod)) {
	c.onDeliver = fn
	if c.router != nil {
		c.router.onDeliver = fn
	}
}

// OnStoredRead has fn told of every stored node and lease the controllers read (with reader
// ControllersReader): a struct of their own over the stored object's fields, read-only as the
// pods of OnPodDelivered. A driver that checks the contract keeps a copy of each
// (replay.RunOptions.CheckReadOnlyPods).
func (c *Cluster) OnStoredRead(fn func(reader string, obj runtime.Object)) { c.onRead = fn }

// Reached returns the nodes the shared pod watch queued a pod change for since the last call
// (PodRouter.Reached); nil before any node watches.
func (c *Cluster) Reached() []string {
	if c.router == nil {
		return nil
	}
	return c.router.Reached()
}

// KubeletEvents records a kubelet's Kubernetes events in the API server, synchronously, on the
// virtual clock, in process (writes.go).
func (c *Cluster) KubeletEvents(node string) (record.EventRecorder, error) {
	return eventrecord.NewAPIRecorder(eventrecord.APIRecorderOptions{Clock: c.clk, Sink: eventSink{c.direct},
		Source: v1.EventSource{Component: "kubelet", Host: node}, LastNano: &c.eventNano})
}

// ControllerNames checks a list of controller names and puts them in their canonical form.
func ControllerNames(names []string) ([]string, error) {
	return controllers.ParseNames(strings.Join(names, ","))
}

// StartControlPlane builds the controllers named and the peer nodes; peer i's InternalIP is
// NodeIP(first+i), after the simulated nodes', which are the fleet's first.
func (c *Cluster) StartControlPlane(names, peers []string, first int, seed int64) error {
	recorders := map[string]record.EventRecorder{}
	recorder := func(source string) record.EventRecorder {
		if r, ok := recorders[source]; ok {
			return r
		}
		api, err := eventrecord.NewAPIRecorder(eventrecord.APIRecorderOptions{Clock: c.clk, Sink: eventrecord.ClientsetSink{Client: c.client}, Source: v1.EventSource{Component: source}, LastNano: &c.eventNano})
		if err != nil {
			return nil
		}
		r, err := eventrecord.NewTracing(api, c.tracer)
		if err != nil {
			return nil
		}
		recorders[source] = r
		return r
	}
	// The controllers read pods and nodes from informers of their own, as the real ones do, fed
	// from the API server's history; the leases, which they get one at a time, in process.
	cache := newControllersCache(c)
	cores, err := controllers.New(controllers.Options{Names: names, Clock: c.clk, Tracer: c.tracer,
		Client: controllers.Client{Clientset: c.client, Direct: controllersReads{c},
			Pods: podLister{cache}, Nodes: nodeLister{cache}, Index: cache, Changes: cache}, Recorder: recorder})
	if err != nil {
		return err
	}
	c.cores = cores
	for i, name := range peers {
		ip, err := NodeIP(first + i)
		if err != nil {
			return fmt.Errorf("peer node %s: %w", name, err)
		}
		st, err := nodestatus.New(nodestatus.Options{NodeName: name, NodeIP: ip, Clock: c.clk, Tracer: c.tracer,
			Client: nodestatus.ClientsetClient{Client: c.client}, RuntimeState: healthyRuntime{},
			Rand: randv2.New(randv2.NewPCG(uint64(seed), uint64(i))), Jitter: randv2.New(randv2.NewPCG(uint64(seed), peerJitterSeed+uint64(i)))})
		if err != nil {
			return err
		}
		c.peers = append(c.peers, st)
	}
	return nil
}

// ControllersReader is the node OnPodDelivered and OnStoredRead name for the objects the
// controllers read.
const ControllersReader = "(controllers)"

// controllersReads are the controllers' reads that have no lister, in process (the API server's
// Direct: ListPods, ListNodes, GetLeaseView): the same requests as over the cluster's client,
// whose answers share the stored objects.
type controllersReads struct{ c *Cluster }

func (r controllersReads) ListPods(ctx context.Context, namespace string, opts metav1.ListOptions) (*v1.PodList, error) {
	list, err := r.c.direct.ListPods(ctx, namespace, opts)
	if r.c.onDeliver != nil {
		for i := range list.Items {
			r.c.onDeliver(ControllersReader, &list.Items[i])
		}
	}
	return list, err
}

func (r controllersReads) ListNodes(ctx context.Context, opts metav1.ListOptions) (*v1.NodeList, error) {
	list, err := r.c.direct.ListNodes(ctx, opts)
	if r.c.onRead != nil {
		for i := range list.Items {
			r.c.onRead(ControllersReader, &list.Items[i])
		}
	}
	return list, err
}

func (r controllersReads) GetLeaseView(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	lease, err := r.c.direct.GetLeaseView(ctx, namespace, name)
	if r.c.onRead != nil && err == nil {
		r.c.onRead(ControllersReader, lease)
	}
	return lease, err
}

// peerJitterSeed tells a peer's jitter stream (its node status and lease periods) from its report
// delays', drawn from the same seed.
const peerJitterSeed = 0x6a6974 << 32

// healthyRuntime is a peer node's runtime: always up, its PLEG healthy.
type healthyRuntime struct{}

func (healthyRuntime) Errors() error                   { return nil }
func (healthyRuntime) UpdateRuntimeUp(context.Context) {}

// Advance runs the peers' heartbeats and the controllers that are due, and reports whether it
// did anything.
func (c *Cluster) Advance(ctx context.Context) bool {
	now := c.clk.Now()
	progressed := false
	for _, p := range c.peers {
		if t, ok := p.NextWake(); ok && !t.After(now) {
			_ = p.Register(ctx)  // failures are in the trace
			_ = p.Heartbeat(ctx) // failures are in the trace
			progressed = true
		}
	}
	due := !c.synced || c.server.ResourceVersion() != c.rv
	for _, core := range c.cores {
		if t, ok := core.NextWake(); ok && !t.After(now) {
			due = true
		}
	}
	if !due || len(c.cores) == 0 {
		return progressed
	}
	c.synced = true
	before := c.server.ResourceVersion()
	for _, core := range c.cores {
		_ = core.Sync(ctx) // failures are retried at the next pass, as the controllers do
	}
	c.rv = c.server.ResourceVersion()
	return progressed || c.rv != before
}

// Wakes lists when the controllers and peers next want to run.
func (c *Cluster) Wakes() []time.Time {
	var out []time.Time
	for _, core := range c.cores {
		if t, ok := core.NextWake(); ok {
			out = append(out, t)
		}
	}
	for _, p := range c.peers {
		if t, ok := p.NextWake(); ok {
			out = append(out, t)
		}
	}
	return out
}

// ObjectKind is a kind the cluster's API server serves for get and list: what a scenario's check
// of any API object may name.
type ObjectKind = fakeapiserver.ReadableKind

// ObjectKinds lists the kinds the cluster's API server serves for get and list, in discovery's
// order.
func ObjectKinds() []ObjectKind { return fakeapiserver.ReadableKinds() }
