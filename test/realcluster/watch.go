package realcluster

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Watcher follows the cluster's nodes and one label's pods through informers (the harness's
// own watches, as admin: the audit log leaves them out) and records, at the moment an event
// arrives, when every expected node is Ready and every expected pod Running and Ready, and
// which nodes were lost: NotReady after being Ready, or tainted unreachable.
type Watcher struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced at every change

	nodeReady map[string]bool
	lost      map[string]string // node -> why
	podPhase  map[string]corev1.PodPhase
	podReady  map[string]bool
	podNode   map[string]string

	wantNodes, wantPods        int
	nodesReadyAt               time.Time
	podsRunningAt, podsReadyAt time.Time
	podSelector                labels.Selector
	stop                       context.CancelFunc
	done                       chan struct{}
}

// Watch starts a Watcher of the nodes and of the pods in namespace ns that match selector.
func Watch(ctx context.Context, client kubernetes.Interface, ns string, selector labels.Selector) (*Watcher, error) {
	w := &Watcher{
		changed: make(chan struct{}), nodeReady: map[string]bool{}, lost: map[string]string{},
		podPhase: map[string]corev1.PodPhase{}, podReady: map[string]bool{}, podNode: map[string]string{},
		podSelector: selector, done: make(chan struct{}),
	}
	ctx, w.stop = context.WithCancel(ctx)
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector.String() }))
	pods := f.Core().V1().Pods().Informer()
	nf := informers.NewSharedInformerFactory(client, 0)
	nodes := nf.Core().V1().Nodes().Informer()
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.pod(o, false) },
		UpdateFunc: func(_, o any) { w.pod(o, false) },
		DeleteFunc: func(o any) { w.pod(o, true) },
	}); err != nil {
		return nil, fmt.Errorf("pod informer: %w", err)
	}
	if _, err := nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.node(o, false) },
		UpdateFunc: func(_, o any) { w.node(o, false) },
		DeleteFunc: func(o any) { w.node(o, true) },
	}); err != nil {
		return nil, fmt.Errorf("node informer: %w", err)
	}
	f.Start(ctx.Done())
	nf.Start(ctx.Done())
	go func() {
		<-ctx.Done()
		f.Shutdown()
		nf.Shutdown()
		close(w.done)
	}()
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced, nodes.HasSynced) {
		w.Stop()
		return nil, fmt.Errorf("watch nodes and pods: %w", context.Cause(ctx))
	}
	return w, nil
}

// Stop ends the watches.
func (w *Watcher) Stop() {
	w.stop()
	<-w.done
}

// Expect sets the number of nodes and pods whose readiness the Watcher times; the times are
// taken from the next event on.
func (w *Watcher) Expect(nodes, pods int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wantNodes, w.wantPods = nodes, pods
	w.check()
}

func (w *Watcher) node(o any, deleted bool) {
	n, ok := o.(*corev1.Node)
	if !ok {
		if d, isTomb := o.(cache.DeletedFinalStateUnknown); isTomb {
			n, ok = d.Obj.(*corev1.Node)
		}
		if !ok {
			return
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if deleted {
		delete(w.nodeReady, n.Name)
		w.check()
		return
	}
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	if w.nodeReady[n.Name] && !ready && w.lost[n.Name] == "" {
		w.lost[n.Name] = "NotReady after Ready"
	}
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeUnreachable && w.lost[n.Name] == "" {
			w.lost[n.Name] = "tainted " + t.Key
		}
	}
	w.nodeReady[n.Name] = ready
	w.check()
}

func (w *Watcher) pod(o any, deleted bool) {
	p, ok := o.(*corev1.Pod)
	if !ok {
		if d, isTomb := o.(cache.DeletedFinalStateUnknown); isTomb {
			p, ok = d.Obj.(*corev1.Pod)
		}
		if !ok {
			return
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if deleted {
		delete(w.podPhase, p.Name)
		delete(w.podReady, p.Name)
		delete(w.podNode, p.Name)
		w.check()
		return
	}
	w.podPhase[p.Name] = p.Status.Phase
	w.podNode[p.Name] = p.Spec.NodeName
	ready := false
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	w.podReady[p.Name] = ready
	w.check()
}

// check records the times reached and wakes the waiters; w.mu is held.
func (w *Watcher) check() {
	now := time.Now()
	if w.wantNodes > 0 && w.nodesReadyAt.IsZero() && w.readyNodes() >= w.wantNodes {
		w.nodesReadyAt = now
	}
	if w.wantPods > 0 {
		running, ready := w.counts()
		if w.podsRunningAt.IsZero() && running >= w.wantPods {
			w.podsRunningAt = now
		}
		if w.podsReadyAt.IsZero() && ready >= w.wantPods {
			w.podsReadyAt = now
		}
	}
	close(w.changed)
	w.changed = make(chan struct{})
}

func (w *Watcher) readyNodes() int {
	n := 0
	for _, r := range w.nodeReady {
		if r {
			n++
		}
	}
	return n
}

func (w *Watcher) counts() (running, ready int) {
	for name, ph := range w.podPhase {
		if ph == corev1.PodRunning {
			running++
		}
		if w.podReady[name] {
			ready++
		}
	}
	return running, ready
}

// Snapshot is what the Watcher has seen.
type Snapshot struct {
	Nodes, ReadyNodes          int
	Pods, Running, Ready       int
	NodesReadyAt               time.Time
	PodsRunningAt, PodsReadyAt time.Time
	Lost                       []string // "node: why", sorted
	PodsByNode                 map[string]int
}

// Snapshot returns what the Watcher has seen so far.
func (w *Watcher) Snapshot() Snapshot {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := Snapshot{Nodes: len(w.nodeReady), ReadyNodes: w.readyNodes(), Pods: len(w.podPhase),
		NodesReadyAt: w.nodesReadyAt, PodsRunningAt: w.podsRunningAt, PodsReadyAt: w.podsReadyAt,
		PodsByNode: map[string]int{}}
	s.Running, s.Ready = w.counts()
	for n, why := range w.lost {
		s.Lost = append(s.Lost, n+": "+why)
	}
	sort.Strings(s.Lost)
	for _, n := range w.podNode {
		if n != "" {
			s.PodsByNode[n]++
		}
	}
	return s
}

// Wait waits until cond holds for the Watcher's snapshot, checking at every change, or until
// timeout passes or fail returns an error (a simulator that exited, say).
func (w *Watcher) Wait(ctx context.Context, timeout time.Duration, what string, cond func(Snapshot) bool, fail func() error) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	// fail is checked at least every few seconds, for processes that end without an event.
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		w.mu.Lock()
		changed := w.changed
		w.mu.Unlock()
		s := w.Snapshot()
		if cond(s) {
			return nil
		}
		if fail != nil {
			if err := fail(); err != nil {
				return fmt.Errorf("waiting for %s: %w", what, err)
			}
		}
		select {
		case <-changed:
		case <-tick.C:
		case <-deadline.C:
			return fmt.Errorf("%s: not within %s (nodes %d, %d Ready; pods %d, %d Running, %d Ready)",
				what, timeout, s.Nodes, s.ReadyNodes, s.Pods, s.Running, s.Ready)
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		}
	}
}
