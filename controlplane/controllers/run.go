package controllers

import (
	"context"
	"errors"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/api/eventrecord"
	"github.com/minikubelet/minikubelet/api/listwatch"
	"github.com/minikubelet/minikubelet/api/podintern"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// minInterval is the shortest time between two passes that a change triggered: a burst of
// writes (a fleet's status updates) makes one pass, not one per write.
const minInterval = 50 * time.Millisecond

// RunnerOptions configure a Runner.
type RunnerOptions struct {
	// Names are the controllers to run.
	Names []string
	// Clientset reaches the API server. Required.
	Clientset kubernetes.Interface
	// Clock is the real clock, or a fake one in tests. Required.
	Clock clock.WithTicker
	// Tracer receives the controllers' trace events and Kubernetes events. Required.
	Tracer trace.Tracer
	// NodeMonitorPeriod and NodeMonitorGracePeriod are Options' fields of the same names.
	NodeMonitorPeriod, NodeMonitorGracePeriod time.Duration
	// Pods, when not nil, lists and watches every pod in Clientset's stead: the embedded API
	// server's list and watch in process (fakeapiserver.Direct's ListPods and WatchPods), which
	// answer as Clientset's typed pods client does over HTTP, with the server's stored pods,
	// shared read-only (docs/design/008-shared-pods.md), where the HTTP watch decodes a copy of
	// each. Nil lists and watches with Clientset.
	Pods listwatch.Interface[*v1.PodList]
	// Nodes and Leases, when not nil, list and watch every node and every lease as Pods lists
	// and watches the pods (Direct's ListNodes and WatchNodes, ListLeases and WatchLeases).
	Nodes  listwatch.Interface[*v1.NodeList]
	Leases listwatch.Interface[*coordinationv1.LeaseList]
}

// Runner runs controllers on one goroutine against a live API server: informers keep caches of
// the nodes, pods and leases, and each change, or a core's wake-up, makes the runner sync every
// core in order.
type Runner struct {
	opts RunnerOptions
}

// NewRunner returns a Runner; it starts nothing.
func NewRunner(opts RunnerOptions) (*Runner, error) {
	if opts.Clientset == nil || opts.Clock == nil || opts.Tracer == nil {
		return nil, errors.New("controllers runner: clientset, clock and tracer are required")
	}
	return &Runner{opts: opts}, nil
}

// Run runs the controllers until ctx is done, then stops its informers and event broadcasters.
func (r *Runner) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(r.opts.Clientset, 0, informers.WithTransform(cacheTransform(r.opts.Pods == nil)))
	// Registered first, so that the factory's informer of each kind (and its lister) is the one
	// in process.
	inProcessInformer(factory, &v1.Pod{}, r.opts.Pods)
	inProcessInformer(factory, &v1.Node{}, r.opts.Nodes)
	inProcessInformer(factory, &coordinationv1.Lease{}, r.opts.Leases)
	changed := make(chan struct{}, 1)
	poke := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { notify(changed) },
		UpdateFunc: func(any, any) { notify(changed) },
		DeleteFunc: func(any) { notify(changed) },
	}
	nodes, pods, leases := factory.Core().V1().Nodes(), factory.Core().V1().Pods(), factory.Coordination().V1().Leases()
	for _, inf := range []cache.SharedIndexInformer{nodes.Informer(), pods.Informer(), leases.Informer()} {
		if _, err := inf.AddEventHandler(poke); err != nil {
			return err
		}
	}
	// The pods of one node are read from an index by node name, as the real controllers'
	// (getPodsAssignedToNode), not by filtering every pod at each read.
	podIndex, err := newInformerPodIndex(pods.Informer())
	if err != nil {
		return err
	}
	var broadcasters []record.EventBroadcaster
	defer func() {
		for _, b := range broadcasters {
			b.Shutdown()
		}
	}()
	recorder := func(source string) record.EventRecorder {
		b := record.NewBroadcaster(record.WithContext(ctx))
		b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: r.opts.Clientset.CoreV1().Events("")})
		broadcasters = append(broadcasters, b)
		rec, _ := eventrecord.NewTracing(b.NewRecorder(scheme.Scheme, v1.EventSource{Component: source}), r.opts.Tracer)
		return rec
	}
	cores, err := New(Options{
		Names: r.opts.Names, Clock: r.opts.Clock, Tracer: r.opts.Tracer, Recorder: recorder,
		NodeMonitorPeriod: r.opts.NodeMonitorPeriod, NodeMonitorGracePeriod: r.opts.NodeMonitorGracePeriod,
		Client: Client{Clientset: r.opts.Clientset, Nodes: nodes.Lister(), Pods: pods.Lister(), Leases: leases.Lister(), Index: podIndex},
	})
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			logger.Info("Controllers stopped before their caches synced", "type", typ)
			return nil
		}
	}
	logger.Info("Started controllers", "controllers", r.opts.Names)
	for {
		for _, c := range cores {
			if err := c.Sync(ctx); err != nil {
				logger.Error(err, "Controller pass failed")
			}
		}
		var wake <-chan time.Time
		var timer clock.Timer
		if next := earliest(cores); !next.IsZero() {
			timer = r.opts.Clock.NewTimer(max(next.Sub(r.opts.Clock.Now()), 0))
			wake = timer.C()
		}
		stop := func() {
			if timer != nil {
				timer.Stop()
			}
		}
		select {
		case <-ctx.Done():
			stop()
			return nil
		case <-wake:
		case <-changed:
			stop()
			// Let a burst of writes land before the next pass.
			select {
			case <-ctx.Done():
				return nil
			case <-r.opts.Clock.After(minInterval):
			}
		}
	}
}

// inProcessInformer registers with factory, when lw is not nil, the informer of obj's kind that
// client-go's factory makes (the namespace index, resync), listing and watching with lw instead
// of the factory client's typed client of the kind.
func inProcessInformer[L runtime.Object](factory informers.SharedInformerFactory, obj runtime.Object, lw listwatch.Interface[L]) {
	if lw == nil {
		return
	}
	factory.InformerFor(obj, func(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		return listWatchInformer(lw, obj, client, resync)
	})
}

// listWatchInformer is the informer of obj's kind that client-go's factory makes, listing and
// watching with lw. The reflector gets the same watch-list semantics as over client
// (cache.ToListWatcherWithWatchListSemantics), so its initial events, bookmarks, resource
// versions and relists are the ones the HTTP watch gives.
func listWatchInformer[L runtime.Object](lw listwatch.Interface[L], obj runtime.Object, client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
	funcs := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return lw.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return lw.Watch(ctx, o)
		},
	}
	return cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(funcs, client), obj, resync,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

// cacheTransform is what the informers do to each object before they cache it. Like
// kube-controller-manager's shared informers, they drop its managed fields, which no controller
// reads: an update built from a cached object sends none, and the API server keeps the stored
// ones. With internPods, the pods, a fleet's tens of thousands each decoded anew at every
// change, share the strings pods of one template or node repeat (podintern.Table.Pod), as the
// kubelet side's api source does; values do not change. A decoded object is the decoder's alone
// when it arrives. Without internPods the pods are the embedded API server's stored objects
// (RunnerOptions.Pods): each arrives as a struct of its own, whose managed fields' slice may be
// dropped, over metadata, spec and status that are the server's, which nobody may rewrite, and
// which the server interned as it stored them. The nodes and leases of RunnerOptions.Nodes and
// Leases arrive the same way (they are never interned: a node's or a lease's strings are its
// own). The informers' goroutines call it at once, and a table is one goroutine's: a mutex
// takes turns.
func cacheTransform(internPods bool) cache.TransformFunc {
	var mu sync.Mutex
	table := podintern.New()
	return func(obj any) (any, error) {
		if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
			m.SetManagedFields(nil)
		}
		if pod, ok := obj.(*v1.Pod); ok && internPods {
			mu.Lock()
			table.Pod(pod)
			mu.Unlock()
		}
		return obj, nil
	}
}

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// earliest returns the earliest non-zero wake-up of the cores.
func earliest(cores []Core) time.Time {
	var next time.Time
	for _, c := range cores {
		if t, ok := c.NextWake(); ok && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next
}
