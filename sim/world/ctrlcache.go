package world

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// controllersCache is the controllers' pod and node informers in a stepped world: the pods and
// nodes as the API server holds them, listed once and then kept from the server's history of
// changes, caught up at each read, so that a read answers what a list made then would and costs
// what changed since the last one rather than a copy of every object. Pods are indexed by the
// node they are bound to ("" for none), as the real controllers' informers index them. The
// objects are views of the stored ones (the stored object's fields, without apiVersion and kind,
// as a list's items), shared read-only. It is read from the engine's goroutine only.
type controllersCache struct {
	c *Cluster

	podsListed, nodesListed bool
	podRV, nodeRV           uint64 // the resource version each has read up to
	// podLists and nodeLists count the lists: the first, then one per compacted history.
	podLists, nodeLists int
	pods                map[string]*v1.Pod
	// podKeys is pods' keys in order; nil when a pod came or went since it was built.
	podKeys []string
	// byNode holds each node's pods by key, and the pods bound to none under "".
	byNode    map[string]map[string]*v1.Pod
	nodes     map[string]*v1.Node
	nodeNames []string // nodes' names in order; nil when a node came or went since
	// feeds are the node feeds handed out (NodeFeed), each told of every node change applied;
	// podFeeds the feeds of the nodes whose pods changed (PodNodeFeed).
	feeds, podFeeds []*nodeFeed
}

func newControllersCache(c *Cluster) *controllersCache {
	return &controllersCache{c: c, pods: map[string]*v1.Pod{}, byNode: map[string]map[string]*v1.Pod{}, nodes: map[string]*v1.Node{}}
}

// syncPods catches the pods up with the API server: the first time, and after the history lost
// changes it had not read (410 Gone), by a list; otherwise by the changes since it last looked.
func (cc *controllersCache) syncPods(ctx context.Context) error {
	srv := cc.c.server
	// As the list this read stands in for would, first: expiry happens at the same moments.
	srv.ExpireNow()
	now := srv.ResourceVersion()
	if cc.podsListed && now == cc.podRV {
		return nil
	}
	if cc.podsListed {
		next, err := srv.PodChangesSince(cc.podRV, func(ev fakeapiserver.PodEvent) { cc.putPod(ev.Type, ev.Pod) })
		if err == nil {
			cc.podRV = max(now, next)
			return nil
		}
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			return fmt.Errorf("pods since %d: %w", cc.podRV, err)
		}
	}
	list, err := cc.c.direct.ListPods(ctx, metav1.NamespaceAll, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	rv, err := strconv.ParseUint(list.ResourceVersion, 10, 64)
	if err != nil {
		return fmt.Errorf("list pods: resource version %q: %w", list.ResourceVersion, err)
	}
	clear(cc.pods)
	clear(cc.byNode)
	cc.podKeys = nil
	for _, f := range cc.podFeeds {
		f.all = true
		clear(f.changed)
	}
	for i := range list.Items {
		cc.notePod(podkey.Of(&list.Items[i]), &list.Items[i])
	}
	cc.podsListed, cc.podRV = true, rv
	cc.podLists++
	return nil
}

// putPod applies one change: stored is the API server's object, of which the cache keeps a view.
func (cc *controllersCache) putPod(typ watch.EventType, stored *v1.Pod) {
	key := podkey.Of(stored)
	old, had := cc.pods[key]
	for _, f := range cc.podFeeds {
		if f.all {
			continue
		}
		if had && old.Spec.NodeName != "" {
			f.changed[old.Spec.NodeName] = struct{}{}
		}
		if stored.Spec.NodeName != "" {
			f.changed[stored.Spec.NodeName] = struct{}{}
		}
	}
	if had {
		on := cc.byNode[old.Spec.NodeName]
		delete(on, key)
		// A node's pods go with its last pod, so that the names of nodes long gone are not kept.
		if len(on) == 0 {
			delete(cc.byNode, old.Spec.NodeName)
		}
	}
	if typ == watch.Deleted {
		delete(cc.pods, key)
		cc.podKeys = nil
		return
	}
	if !had {
		cc.podKeys = nil
	}
	pod := new(v1.Pod)
	*pod = *stored
	pod.TypeMeta = metav1.TypeMeta{}
	cc.notePod(key, pod)
}

// notePod holds pod under key, in place of what it held there.
func (cc *controllersCache) notePod(key string, pod *v1.Pod) {
	cc.pods[key] = pod
	on := cc.byNode[pod.Spec.NodeName]
	if on == nil {
		on = map[string]*v1.Pod{}
		cc.byNode[pod.Spec.NodeName] = on
	}
	on[key] = pod
	if cc.c.onDeliver != nil {
		cc.c.onDeliver(ControllersReader, pod)
	}
}

// syncNodes catches the nodes up as syncPods does the pods.
func (cc *controllersCache) syncNodes(ctx context.Context) error {
	srv := cc.c.server
	srv.ExpireNow()
	now := srv.ResourceVersion()
	if cc.nodesListed && now == cc.nodeRV {
		return nil
	}
	if cc.nodesListed {
		next, err := srv.NodeChangesSince(cc.nodeRV, func(typ watch.EventType, node *v1.Node, _ uint64) { cc.putNode(typ, node) })
		if err == nil {
			cc.nodeRV = max(now, next)
			return nil
		}
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			return fmt.Errorf("nodes since %d: %w", cc.nodeRV, err)
		}
	}
	list, err := cc.c.direct.ListNodes(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	rv, err := strconv.ParseUint(list.ResourceVersion, 10, 64)
	if err != nil {
		return fmt.Errorf("list nodes: resource version %q: %w", list.ResourceVersion, err)
	}
	clear(cc.nodes)
	cc.nodeNames = nil
	// What changed between the history's end and the list is not known: every node may have.
	for _, f := range cc.feeds {
		f.all = true
		clear(f.changed)
	}
	for i := range list.Items {
		cc.noteNode(&list.Items[i])
	}
	cc.nodesListed, cc.nodeRV = true, rv
	cc.nodeLists++
	return nil
}

func (cc *controllersCache) putNode(typ watch.EventType, stored *v1.Node) {
	for _, f := range cc.feeds {
		if !f.all {
			f.changed[stored.Name] = struct{}{}
		}
	}
	if typ == watch.Deleted {
		delete(cc.nodes, stored.Name)
		cc.nodeNames = nil
		return
	}
	node := new(v1.Node)
	*node = *stored
	node.TypeMeta = metav1.TypeMeta{}
	cc.noteNode(node)
}

func (cc *controllersCache) noteNode(node *v1.Node) {
	if _, ok := cc.nodes[node.Name]; !ok {
		cc.nodeNames = nil
	}
	cc.nodes[node.Name] = node
	if cc.c.onRead != nil {
		cc.c.onRead(ControllersReader, node)
	}
}

// NodeFeed is controllers.ChangeFeeds': a feed of the nodes this cache sees change from its
// first read on, as a node informer's event handler would queue them.
func (cc *controllersCache) NodeFeed() controllers.NodeFeed {
	f := &nodeFeed{all: true, changed: map[string]struct{}{}, sync: cc.syncNodes}
	cc.feeds = append(cc.feeds, f)
	return f
}

// PodNodeFeed is controllers.ChangeFeeds': a feed of the nodes whose bound pods this cache sees
// change from its first read on.
func (cc *controllersCache) PodNodeFeed() controllers.PodNodeFeed {
	f := &nodeFeed{all: true, changed: map[string]struct{}{}, sync: cc.syncPods}
	cc.podFeeds = append(cc.podFeeds, f)
	return f
}

// nodeFeed is one reader's names of the nodes changed, or whose pods changed, since it last
// asked.
type nodeFeed struct {
	// sync catches the cache up before an answer: syncNodes for a node feed, syncPods for a feed
	// of the nodes' pods.
	sync func(context.Context) error
	// all is set until the first call and by a relist: every node may have changed.
	all     bool
	changed map[string]struct{}
	// names is the last answer's slice, whose array the next answer reuses.
	names []string
}

// ChangedNodes is controllers.NodeFeed's: it catches the cache up with the API server first, as
// a read of the nodes would.
func (f *nodeFeed) ChangedNodes(ctx context.Context) ([]string, bool, error) {
	if err := f.sync(ctx); err != nil {
		return nil, false, err
	}
	if f.all {
		f.all = false
		return nil, true, nil
	}
	if len(f.changed) == 0 {
		return nil, false, nil
	}
	// The answer is read before the next call, so its array serves every answer.
	f.names = f.names[:0]
	for name := range f.changed {
		f.names = append(f.names, name)
	}
	slices.Sort(f.names)
	clear(f.changed)
	return f.names, false, nil
}

// ChangedPodNodes is controllers.PodNodeFeed's: it catches the cache up with the API server
// first, as a read of the pods would.
func (f *nodeFeed) ChangedPodNodes(ctx context.Context) ([]string, bool, error) {
	return f.ChangedNodes(ctx)
}

// PodsOnNode is controllers.PodIndex's.
func (cc *controllersCache) PodsOnNode(node string) ([]*v1.Pod, error) {
	if err := cc.syncPods(context.Background()); err != nil {
		return nil, err
	}
	on := cc.byNode[node]
	out := make([]*v1.Pod, 0, len(on))
	for _, p := range on {
		out = append(out, p)
	}
	slices.SortFunc(out, comparePods)
	return out, nil
}

// UnboundPods is controllers.PodIndex's.
func (cc *controllersCache) UnboundPods() ([]*v1.Pod, error) { return cc.PodsOnNode("") }

// comparePods orders pods as their namespace/name keys (podkey.Of) do, without building them.
func comparePods(a, b *v1.Pod) int {
	if a.Namespace == b.Namespace {
		return strings.Compare(a.Name, b.Name)
	}
	n := min(len(a.Namespace), len(b.Namespace))
	if c := strings.Compare(a.Namespace[:n], b.Namespace[:n]); c != 0 {
		return c
	}
	// One namespace starts the other: in the keys, the shorter one's '/' meets a byte of the
	// longer one, which a namespace never has as '/'.
	if len(a.Namespace) < len(b.Namespace) {
		return cmp.Compare('/', b.Namespace[n])
	}
	return cmp.Compare(a.Namespace[n], '/')
}

// allPods returns every pod in key order.
func (cc *controllersCache) allPods() ([]*v1.Pod, error) {
	if err := cc.syncPods(context.Background()); err != nil {
		return nil, err
	}
	if cc.podKeys == nil {
		cc.podKeys = slices.Sorted(maps.Keys(cc.pods))
	}
	out := make([]*v1.Pod, len(cc.podKeys))
	for i, k := range cc.podKeys {
		out[i] = cc.pods[k]
	}
	return out, nil
}

// allNodes returns every node in name order.
func (cc *controllersCache) allNodes() ([]*v1.Node, error) {
	if err := cc.syncNodes(context.Background()); err != nil {
		return nil, err
	}
	if cc.nodeNames == nil {
		cc.nodeNames = slices.Sorted(maps.Keys(cc.nodes))
	}
	out := make([]*v1.Node, len(cc.nodeNames))
	for i, n := range cc.nodeNames {
		out[i] = cc.nodes[n]
	}
	return out, nil
}

// podLister and nodeLister are the cache as client-go's listers, which controllers.Client reads
// its lists through.
type (
	podLister  struct{ cc *controllersCache }
	nodeLister struct{ cc *controllersCache }
	// podNamespaceLister is podLister in one namespace.
	podNamespaceLister struct {
		cc        *controllersCache
		namespace string
	}
)

var (
	_ corelisters.PodLister  = podLister{}
	_ corelisters.NodeLister = nodeLister{}
)

func (l podLister) List(selector labels.Selector) ([]*v1.Pod, error) {
	pods, err := l.cc.allPods()
	if err != nil || selector.Empty() {
		return pods, err
	}
	return slices.DeleteFunc(pods, func(p *v1.Pod) bool { return !selector.Matches(labels.Set(p.Labels)) }), nil
}

func (l podLister) Pods(namespace string) corelisters.PodNamespaceLister {
	return podNamespaceLister{cc: l.cc, namespace: namespace}
}

func (l podNamespaceLister) List(selector labels.Selector) ([]*v1.Pod, error) {
	pods, err := podLister{l.cc}.List(selector)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(pods, func(p *v1.Pod) bool { return p.Namespace != l.namespace }), nil
}

func (l podNamespaceLister) Get(name string) (*v1.Pod, error) {
	if err := l.cc.syncPods(context.Background()); err != nil {
		return nil, err
	}
	if p, ok := l.cc.pods[podkey.Build(l.namespace, name)]; ok {
		return p, nil
	}
	return nil, apierrors.NewNotFound(v1.Resource("pods"), name)
}

func (l nodeLister) List(selector labels.Selector) ([]*v1.Node, error) {
	nodes, err := l.cc.allNodes()
	if err != nil || selector.Empty() {
		return nodes, err
	}
	return slices.DeleteFunc(nodes, func(n *v1.Node) bool { return !selector.Matches(labels.Set(n.Labels)) }), nil
}

func (l nodeLister) Get(name string) (*v1.Node, error) {
	if err := l.cc.syncNodes(context.Background()); err != nil {
		return nil, err
	}
	if n, ok := l.cc.nodes[name]; ok {
		return n, nil
	}
	return nil, apierrors.NewNotFound(v1.Resource("nodes"), name)
}
