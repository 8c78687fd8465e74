package sources

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/api/podintern"
	"github.com/minikubelet/minikubelet/podconfig"
)

// SharedAPINode is one node's end of a SharedAPIRunner: its API source core and its PodConfig
// channel.
type SharedAPINode struct {
	Core *API
	Out  chan<- podconfig.Update
}

// SharedAPIRunnerOptions configures NewSharedAPIRunner.
type SharedAPIRunnerOptions struct {
	// Client talks to the API server. Required.
	Client kubernetes.Interface
	// Clock drives the reflector's back-off. Required.
	Clock clock.WithTicker
	// Nodes are the simulated nodes by name. Required, at least one.
	Nodes map[string]SharedAPINode
	// Pods lists and watches every pod in their stead when not nil: the embedded API server's
	// list and watch in process, which answer as Client's typed pods client does over HTTP.
	// Nil lists and watches with Client.
	Pods PodListWatcher
}

// PodListWatcher lists and watches pods as a typed pods client does (its List and Watch).
type PodListWatcher interface {
	List(ctx context.Context, opts metav1.ListOptions) (*v1.PodList, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// SharedAPIRunner is the API server pod source of many simulated nodes in one process: one
// reflector over every pod instead of one watch per node, each change handed to the core of the
// node the pod is bound to, which sees what its own field-selected watch would have shown. A pod
// bound to no simulated node is ignored. It does not wait for a node informer: the nodes of a
// fleet register on their own.
type SharedAPIRunner struct {
	store     *routerStore
	reflector *cache.Reflector
}

// NewSharedAPIRunner returns a runner for opts, or an error wrapping ErrMissingOption.
func NewSharedAPIRunner(opts SharedAPIRunnerOptions) (*SharedAPIRunner, error) {
	var missing []string
	if opts.Client == nil {
		missing = append(missing, "Client")
	}
	if opts.Clock == nil {
		missing = append(missing, "Clock")
	}
	if len(opts.Nodes) == 0 {
		missing = append(missing, "Nodes")
	}
	if err := missingOptions(missing); err != nil {
		return nil, fmt.Errorf("shared api source: %w", err)
	}
	s := &routerStore{nodes: map[string]*apiStore{}, podNode: map[string]string{}}
	for name, n := range opts.Nodes {
		if n.Core == nil || n.Out == nil {
			return nil, fmt.Errorf("shared api source: node %s: options Core, Out: %w", name, minikubelet.ErrMissingOption)
		}
		s.nodes[name] = &apiStore{core: n.Core, out: n.Out}
	}
	pods := opts.Pods
	if pods == nil {
		pods = opts.Client.CoreV1().Pods(metav1.NamespaceAll)
		// Decoded pods are the reflector's alone until routed, and interned then; the
		// in-process watch's are the API server's stored objects, which nobody may rewrite.
		s.intern = podintern.New()
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return pods.Watch(ctx, o)
		},
	}
	r := &SharedAPIRunner{store: s}
	r.reflector = cache.NewReflectorWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, opts.Client), &v1.Pod{}, s,
		cache.ReflectorOptions{Name: "sources/api-shared", ResyncPeriod: 0, Clock: opts.Clock})
	return r, nil
}

// Run keeps every node's core in step with the API server until ctx is done, and returns nil.
func (r *SharedAPIRunner) Run(ctx context.Context) error {
	klog.FromContext(ctx).Info("Watching apiserver for every simulated node", "nodes", len(r.store.nodes))
	for _, n := range r.store.nodes {
		n.done = ctx.Done()
	}
	r.reflector.RunWithContext(ctx)
	return nil
}

// routerStore routes the reflector's changes to the nodes' stores by spec.nodeName. Like
// apiStore it is called only from Run's goroutine.
type routerStore struct {
	nodes   map[string]*apiStore
	podNode map[string]string // namespace/name → the simulated node it was last routed to
	// intern makes the decoded pods routed to a node share the strings they repeat; nil when
	// the pods are the embedded API server's own objects (Pods set).
	intern *podintern.Table
}

var _ cache.ReflectorStore = (*routerStore)(nil)

func podKeyOf(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// route sends pod to its node as an add or update, after a delete from the node it left, if any.
func (s *routerStore) route(obj any) error {
	pod, err := asPod(obj)
	if err != nil {
		return err
	}
	key := podKeyOf(pod)
	if prev, ok := s.podNode[key]; ok && prev != pod.Spec.NodeName {
		delete(s.podNode, key)
		s.nodes[prev].send(s.nodes[prev].core.Delete(pod))
	}
	if n, ok := s.nodes[pod.Spec.NodeName]; ok {
		s.podNode[key] = pod.Spec.NodeName
		if s.intern != nil {
			s.intern.Pod(pod)
		}
		n.send(n.core.Add(pod))
	}
	return nil
}

func (s *routerStore) Add(obj any) error    { return s.route(obj) }
func (s *routerStore) Update(obj any) error { return s.route(obj) }

func (s *routerStore) Delete(obj any) error {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, err := asPod(obj)
	if err != nil {
		return err
	}
	key := podKeyOf(pod)
	if prev, ok := s.podNode[key]; ok {
		delete(s.podNode, key)
		s.nodes[prev].send(s.nodes[prev].core.Delete(pod))
	}
	return nil
}

// Replace gives every node its share of the list, an empty one included, as each node's own
// relist would.
func (s *routerStore) Replace(objs []any, _ string) error {
	byNode := map[string][]*v1.Pod{}
	s.podNode = map[string]string{}
	for _, obj := range objs {
		pod, err := asPod(obj)
		if err != nil {
			return err
		}
		if _, ok := s.nodes[pod.Spec.NodeName]; ok {
			if s.intern != nil {
				s.intern.Pod(pod)
			}
			byNode[pod.Spec.NodeName] = append(byNode[pod.Spec.NodeName], pod)
			s.podNode[podKeyOf(pod)] = pod.Spec.NodeName
		}
	}
	for name, n := range s.nodes {
		pods := byNode[name]
		if pods == nil {
			pods = []*v1.Pod{}
		}
		n.send(n.core.Replace(pods))
	}
	return nil
}

// Resync does nothing, as apiStore's.
func (s *routerStore) Resync() error { return nil }
