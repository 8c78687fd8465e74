package objects

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// syncWait is how long Get waits for a new watch's first list, as the kubelet's cache does
// (PollImmediate every 10ms for 1s) before it answers "failed to sync".
const syncWait = time.Second

// Reflectors is the Source and the Services of a kubelet in `run`: a client-go reflector per
// watched object (list and watch with fieldSelector metadata.name, v1.35's watch-list
// semantics where the server has them) and the service informer (spec.clusterIP!=None), on
// goroutines of their own beside the sync loop. Watches asked for before Run starts when Run
// does; Run stops them all when its context ends. It is shared by the loop and the reflectors,
// and guards itself.
//
// A fleet's nodes (`run --nodes`) share one: one service informer, and one reflector per object
// however many nodes watch it. Each node's managers call Watch and Stop once per object (a
// Watch is always followed by one Stop), so the reflector counts the nodes that watch its object
// and stops when the last one stops; a node that starts watching an object another node already
// watches reads the reflector's store as it is, without waiting for a list of its own. A single
// node's object has one watcher, and its reflector lives exactly as long as its watch.
type Reflectors struct {
	client kubernetes.Interface

	mu sync.Mutex // guards clock, items and ctx
	// clock is Run's; nil until Run starts, when no watch has listed.
	clock clock.WithTicker
	// items are the watched objects.
	items map[Key]*watchItem
	// ctx is Run's context while Run runs; nil before and after.
	ctx context.Context
	wg  sync.WaitGroup

	services       corelisters.ServiceLister
	servicesSynced cache.InformerSynced
	factory        informers.SharedInformerFactory
}

// watchItem is one watched object: its store, closed synced once its reflector listed, the
// cancel of its reflector's context (nil until it runs), and how many Watches it has that no
// Stop ended.
type watchItem struct {
	watchers int
	store    cache.Store
	synced   chan struct{}
	once     sync.Once
	cancel   context.CancelFunc
}

// NewReflectors returns the watches of a kubelet whose API server is client. Nothing runs until
// Run.
func NewReflectors(client kubernetes.Interface) *Reflectors {
	// The kubelet's service informer does not watch headless services: they make no
	// environment variables (kubernetes issue 122394).
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermNotEqualSelector("spec.clusterIP", v1.ClusterIPNone).String()
	}))
	svc := factory.Core().V1().Services()
	return &Reflectors{client: client, items: map[Key]*watchItem{}, services: svc.Lister(), servicesSynced: svc.Informer().HasSynced, factory: factory}
}

// Run runs the service informer and the reflectors on clk until ctx is done, then stops them and
// returns once they have ended.
func (r *Reflectors) Run(ctx context.Context, clk clock.WithTicker) error {
	r.mu.Lock()
	r.ctx, r.clock = ctx, clk
	for k, it := range r.items {
		r.start(k, it)
	}
	r.mu.Unlock()
	r.factory.Start(ctx.Done())
	<-ctx.Done()
	r.mu.Lock()
	r.ctx = nil
	r.mu.Unlock()
	r.factory.Shutdown()
	r.wg.Wait()
	return nil
}

// Watch starts a reflector for k (at Run's start when Run is not running yet), or counts one
// more watcher of the reflector k has.
func (r *Reflectors) Watch(k Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if it, ok := r.items[k]; ok {
		it.watchers++
		return
	}
	it := &watchItem{watchers: 1, store: cache.NewStore(cache.MetaNamespaceKeyFunc), synced: make(chan struct{})}
	r.items[k] = it
	if r.ctx != nil {
		r.start(k, it)
	}
}

// Stop ends one watch of k; the last stops k's reflector and forgets what it held.
func (r *Reflectors) Stop(k Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	it, ok := r.items[k]
	if !ok {
		return
	}
	if it.watchers--; it.watchers > 0 {
		return
	}
	if it.cancel != nil {
		it.cancel()
	}
	delete(r.items, k)
}

// Get returns k's object from its reflector's store, after waiting up to a second for the
// reflector's first list, as the kubelet's cache waits.
func (r *Reflectors) Get(k Key) (runtime.Object, bool) {
	r.mu.Lock()
	it, ok := r.items[k]
	clk := r.clock
	r.mu.Unlock()
	if !ok || clk == nil {
		return nil, false
	}
	select {
	case <-it.synced:
	default:
		select {
		case <-it.synced:
		case <-clk.After(syncWait):
			return nil, false
		}
	}
	obj, exists, err := it.store.GetByKey(k.Namespace + "/" + k.Name)
	if err != nil || !exists {
		return nil, true
	}
	return obj.(runtime.Object), true
}

// List lists the Services the informer holds.
func (r *Reflectors) List() ([]*v1.Service, bool) {
	if !r.servicesSynced() {
		return nil, false
	}
	svcs, err := r.services.List(labels.Everything())
	if err != nil {
		return nil, false
	}
	return svcs, true
}

// start runs k's reflector on a goroutine of its own. The caller holds mu, with ctx set.
func (r *Reflectors) start(k Key, it *watchItem) {
	ctx, cancel := context.WithCancel(r.ctx)
	it.cancel = cancel
	lw := r.listWatch(k)
	var expected runtime.Object = &v1.ConfigMap{}
	if k.Kind == Secrets {
		expected = &v1.Secret{}
	}
	store := &syncedStore{Store: it.store, synced: func() { it.once.Do(func() { close(it.synced) }) }}
	refl := cache.NewReflectorWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, r.client), expected, store, cache.ReflectorOptions{
		Name: fmt.Sprintf("object-%q/%q", k.Namespace, k.Name), MinWatchTimeout: 30 * time.Minute, Clock: r.clock,
	})
	r.wg.Go(func() { refl.RunWithContext(ctx) })
}

// listWatch lists and watches the one object k names.
func (r *Reflectors) listWatch(k Key) *cache.ListWatch {
	selector := fields.OneTermEqualSelector(metav1.ObjectNameField, k.Name).String()
	core := r.client.CoreV1()
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = selector
			if k.Kind == Secrets {
				return core.Secrets(k.Namespace).List(ctx, o)
			}
			return core.ConfigMaps(k.Namespace).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = selector
			if k.Kind == Secrets {
				return core.Secrets(k.Namespace).Watch(ctx, o)
			}
			return core.ConfigMaps(k.Namespace).Watch(ctx, o)
		},
	}
}

// syncedStore is a store that says when its reflector first replaced its contents: the list,
// or the end of a watch-list's initial events.
type syncedStore struct {
	cache.Store
	synced func()
}

func (s *syncedStore) Replace(list []any, rv string) error {
	err := s.Store.Replace(list, rv)
	if err == nil {
		s.synced()
	}
	return err
}

// The implementations Run's wiring relies on.
var (
	_ Source   = (*Reflectors)(nil)
	_ Services = (*Reflectors)(nil)
)
