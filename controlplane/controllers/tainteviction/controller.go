package tainteviction

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/api/apidefaults"
	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Lister is what the controller reads. Errors are the API's.
type Lister interface {
	ListNodes(ctx context.Context) ([]*v1.Node, error)
	GetNode(ctx context.Context, name string) (*v1.Node, error)
	// ListPodsOnNode returns the pods bound to node: the real controller's pod index by node.
	ListPodsOnNode(ctx context.Context, node string) ([]*v1.Pod, error)
	// GetPod returns the pod by name, as the real controller's pod lister does.
	GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error)
}

// NodeChanges names the nodes added, updated or deleted since its previous call, in name order,
// or says all when it cannot tell (its first call, after a relist): the node informer's event
// handlers, which hand the controller each node update (handleNodeUpdate).
type NodeChanges interface {
	ChangedNodes(ctx context.Context) (names []string, all bool, err error)
}

// Writer is what the controller sends to the API server itself: its writes, and deletePodHandler's
// read of a pod, which goes to the server rather than to a cache.
type Writer interface {
	UpdatePodStatus(ctx context.Context, pod *v1.Pod) (*v1.Pod, error)
	DeletePod(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error
	// FetchPod gets the pod from the API server, never from a cache.
	FetchPod(ctx context.Context, namespace, name string) (*v1.Pod, error)
}

// Options configure a Controller.
type Options struct {
	// Clock is when things happen. Required.
	Clock clock.PassiveClock
	// Lister and Writer reach the API server. Required.
	Lister Lister
	Writer Writer
	// Tracer receives one event per action. Required.
	Tracer trace.Tracer
	// Recorder records the TaintManagerEviction events. Nil records none.
	Recorder record.EventRecorder
	// Changes, when set, says which nodes changed between passes: the controller then keeps
	// each node's NoExecute taints from their updates instead of reading every node at every
	// pass. Nil reads every node.
	Changes NodeChanges
}

// work is one scheduled eviction: the real controller's TimedWorker.
type work struct {
	created, fire time.Time
	// node is the pod's when it was last seen. A pod deleted and created again under the same
	// name may be on another node now, where Sync looks it up by name.
	node string
	// tries counts the failed attempts to evict: deletePodHandler tries evictTries times, 10ms
	// apart, before it gives up. Once it has tried, a cancel does not stop it (see cancel), nor
	// does the pod's deletion: its remaining tries fail with the pod's NotFound. err is the
	// last try's error, which the handler returns once it has slept after its last try.
	tries int
	err   error
	// delayed is set for an eviction scheduled to fire later than it was scheduled, which the
	// real controller keeps as a timer; one due at once is a nil entry in its queue. cancelled
	// is set once a cancel has recorded its event during the retries.
	delayed, cancelled bool
}

// evictTries and evictRetryDelay are deletePodHandler's retries and the sleep between them.
const (
	evictTries      = 5
	evictRetryDelay = 10 * time.Millisecond
)

// Controller is the taint eviction controller. Its zero value is not usable; call New.
type Controller struct {
	opts      Options
	scheduled map[string]work // by namespace/name
	// tainted holds the NoExecute taints of each node that had some at the last pass, in the
	// node's order: the real controller's taintedNodes. A node whose taints changed has its pods
	// processed, as handleNodeUpdate does. With Options.Changes it is kept from the nodes that
	// changed rather than from every node.
	tainted map[string][]v1.Taint
	// nodes holds the UID of every node that existed at the last pass, by name. A node without
	// NoExecute taints now has its pods' evictions cancelled when it had some at the last pass or
	// did not exist then (NodeUpdated queues every added node); one that was deleted is only
	// forgotten. Reading every node fills nextNodes, swapped with nodes once the pass has read
	// everything, so that a steady pass allocates no map; a feed changes nodes in place.
	nodes, nextNodes map[string]types.UID
	listed           bool
	// undo holds what a pass with Options.Changes replaced in tainted and nodes, put back when
	// the pass fails before it has read everything, and relist makes the next pass read every
	// node then, since the feed's changes were taken.
	undo   []undoTaints
	relist bool
	// seen holds the pods on tainted nodes at the last pass, by namespace/name. A pod that is
	// new there, or whose tolerations changed, is processed, as PodUpdated and handlePodUpdate
	// do; the others wait for a change of their node's taints.
	seen map[string]seenPod
	// next is where a pass records what it reads, made seen once it has read everything; the
	// two maps swap, so that a steady pass allocates no map.
	next map[string]seenPod
}

// seenPod is what PodUpdated compares: the pod's node and tolerations, and its UID, since a pod
// created again under its name is an add.
type seenPod struct {
	uid         types.UID
	node        string
	tolerations []v1.Toleration
}

// New returns a Controller with nothing scheduled.
func New(opts Options) (*Controller, error) {
	if opts.Clock == nil || opts.Lister == nil || opts.Writer == nil || opts.Tracer == nil {
		return nil, fmt.Errorf("taint eviction controller: clock, lister, writer and tracer: %w", minikubelet.ErrMissingOption)
	}
	return &Controller{opts: opts, scheduled: map[string]work{}, tainted: map[string][]v1.Taint{},
		nodes: map[string]types.UID{}, nextNodes: map[string]types.UID{}, seen: map[string]seenPod{}, next: map[string]seenPod{},
		relist: true}, nil
}

// NextWake returns when the next scheduled eviction is due, and false when none is scheduled.
func (c *Controller) NextWake() (time.Time, bool) {
	var next time.Time
	for _, w := range c.scheduled {
		if next.IsZero() || w.fire.Before(next) {
			next = w.fire
		}
	}
	return next, !next.IsZero()
}

// Sync handles what changed since the last pass as the real controller's node and pod handlers
// would: it processes the pods of nodes whose NoExecute taints changed and the pods new on a
// tainted node or whose tolerations changed, cancels the evictions of pods on nodes whose taints
// were removed or that were added untainted, and of pods that are gone; then it evicts the pods
// whose time has come. It returns the errors of its reads; an eviction that fails is tried again,
// and logged once its tries are over, as deletePodHandler and its timed worker do.
func (c *Controller) Sync(ctx context.Context) error {
	now := c.opts.Clock.Now()
	// cleared are the nodes without NoExecute taints whose taints were removed or that were
	// added since the last pass. A node that was deleted is only forgotten (handleNodeUpdate
	// on a missing node): the evictions of its pods stay scheduled. changed are the tainted
	// nodes whose taints are new.
	taints, cleared, changed, err := c.nodeTaints(ctx)
	if err != nil {
		return err
	}
	clear(c.next)
	// Only the pods on tainted nodes and those with an eviction scheduled matter, so only their
	// nodes' pods are read, as the real controller handles the pods of a node whose taints
	// changed and the pods that changed: a fleet's other pods are not looked at.
	wanted := map[string]bool{}
	for name := range taints {
		wanted[name] = true
	}
	for _, w := range c.scheduled {
		wanted[w.node] = true
	}
	type keyed struct {
		key string
		pod *v1.Pod
		// handle is set for a pod on a tainted node that a node or pod change brings to
		// processPodOnNode.
		handle bool
	}
	var relevant []keyed
	present := map[string]*v1.Pod{}
	for _, node := range sortedKeys(wanted) {
		pods, err := c.opts.Lister.ListPodsOnNode(ctx, node)
		if err != nil {
			c.abandon()
			return fmt.Errorf("list pods of node %s: %w", node, err)
		}
		_, tainted := taints[node]
		for _, pod := range pods {
			if pod.Spec.NodeName != node {
				continue
			}
			key := podkey.Of(pod)
			handle := false
			if tainted {
				// handleNodeUpdate processes every pod of a node whose taints changed, and
				// PodUpdated a pod new on the node or whose tolerations changed. Neither looks
				// at the deletion mark: a pod being deleted is processed as any other, and one
				// whose eviction fired is not scheduled again until something changes.
				prev, ok := c.seen[key]
				handle = changed[node] || !ok || prev.uid != pod.UID || prev.node != node ||
					!tolerationsEqual(prev.tolerations, pod.Spec.Tolerations)
				c.next[key] = seenPod{uid: pod.UID, node: node, tolerations: pod.Spec.Tolerations}
			}
			if _, ok := c.scheduled[key]; !ok && !handle {
				continue
			}
			relevant = append(relevant, keyed{key, pod, handle})
			present[key] = pod
		}
	}
	// A pod with an eviction scheduled that is not on its node any more may have been deleted
	// and created again under the same name elsewhere: as handlePodUpdate, which gets the pod
	// by name, it is processed on the node it is on now, and is gone only when no pod has its
	// name. A pod of that name not bound yet keeps the eviction without being processed.
	for _, key := range sortedKeys(c.scheduled) {
		if _, ok := present[key]; ok {
			continue
		}
		ns, name := splitKey(key)
		pod, err := c.opts.Lister.GetPod(ctx, ns, name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			c.abandon()
			return fmt.Errorf("get pod %s: %w", key, err)
		}
		present[key] = pod
		if pod.Spec.NodeName != "" {
			relevant = append(relevant, keyed{key: key, pod: pod})
		}
	}
	// The reads are done: what this pass saw is what the next one compares with.
	c.tainted = taints
	if c.listed {
		c.nodes, c.nextNodes = c.nextNodes, c.nodes
		c.listed = false
	}
	c.undo = c.undo[:0]
	c.seen, c.next = c.next, c.seen
	sort.Slice(relevant, func(i, j int) bool { return relevant[i].key < relevant[j].key })
	for _, r := range relevant {
		node := r.pod.Spec.NodeName
		if w, ok := c.scheduled[r.key]; ok && w.node != node {
			w.node = node
			c.scheduled[r.key] = w
		}
		if t, ok := taints[node]; ok {
			if r.handle {
				c.process(ctx, r.pod, t, now)
			}
			continue
		}
		if cleared[node] {
			// handleNodeUpdate for a node without NoExecute taints cancels its pods' evictions.
			c.cancel(r.key, "no NoExecute taints")
		}
		// Otherwise the pod came to a node that has no NoExecute taints, which handlePodUpdate
		// leaves alone: its eviction stays scheduled and deletes it by name when due.
	}
	// A pod that is gone needs no eviction (handlePodUpdate on a deleted pod): cancel drops one
	// not tried yet. A handler that has tried goes on: its remaining tries find no pod.
	for _, key := range sortedKeys(c.scheduled) {
		if _, ok := present[key]; !ok {
			c.cancel(key, "pod gone")
		}
	}
	for _, key := range sortedKeys(c.scheduled) {
		w := c.scheduled[key]
		if w.fire.After(now) {
			continue
		}
		delete(c.scheduled, key)
		if w.tries == evictTries {
			// deletePodHandler has slept after its last failed try and returns that try's
			// error, which the timed worker logs: once per eviction, not per try.
			klog.FromContext(ctx).Error(w.err, "TaintEvictionController: timed worker failed")
			continue
		}
		var err error
		if pod, ok := present[key]; ok {
			err = c.evict(ctx, pod, w.tries == 0)
		} else {
			err = c.evictGone(ctx, key)
		}
		if err != nil {
			// Tried again by a pass 10ms later: the eviction is no longer processed on its own
			// once a pod does not change, so a lost try would be a lost eviction. The handler
			// sleeps after its last try too, so the work ends 10ms after it.
			w.tries++
			w.err = err
			w.fire = now.Add(evictRetryDelay)
			c.scheduled[key] = w
		}
	}
	return nil
}

// evictGone is a try of deletePodHandler for a pod the pass did not find: addConditionAndDeletePod
// gets the pod from the API server, which answers NotFound unless the pod is there again (then it
// is evicted). The error is the server's, which names the pod, returned unwrapped: v1.35's handler
// returns it as it is, and its timed worker logs it verbatim ("TaintEvictionController: timed
// worker failed"), as the pass does with the last try's.
func (c *Controller) evictGone(ctx context.Context, key string) error {
	ns, name := splitKey(key)
	pod, err := c.opts.Writer.FetchPod(ctx, ns, name)
	if err != nil {
		return err
	}
	return c.evict(ctx, pod, false)
}

// undoTaints is a node's entry in tainted before a pass changed it.
type undoTaints struct {
	node    string
	taints  []v1.Taint
	had     bool
	uid     types.UID
	existed bool
}

// nodeTaints returns the NoExecute taints of every node that has any, the nodes whose taints
// were cleared and those whose taints changed since the last pass. It reads every node without
// Options.Changes, on their first call or when they cannot tell what changed, and after a pass
// that failed; it reads only the changed nodes otherwise, changing tainted and nodes in place
// (the caller calls abandon if it fails before it has read everything). A changed node that is
// not found was deleted: it is forgotten, neither cleared nor changed. A node without NoExecute
// taints that did not exist at the last pass, or under another UID, was added: it is cleared.
func (c *Controller) nodeTaints(ctx context.Context) (taints map[string][]v1.Taint, cleared, changed map[string]bool, err error) {
	var names []string
	all := true
	if c.opts.Changes != nil {
		if names, all, err = c.opts.Changes.ChangedNodes(ctx); err != nil {
			// What the feed could not hand over may be lost: the next pass reads every node.
			c.relist = true
			return nil, nil, nil, fmt.Errorf("changed nodes: %w", err)
		}
	}
	note := func(name string, prev, cur []v1.Taint, had, has, added bool) {
		switch {
		case (had || added) && !has:
			if cleared == nil {
				cleared = map[string]bool{}
			}
			cleared[name] = true
		case has && (!had || !taintsEqual(prev, cur)):
			if changed == nil {
				changed = map[string]bool{}
			}
			changed[name] = true
		}
	}
	if all || c.relist {
		nodes, err := c.opts.Lister.ListNodes(ctx)
		if err != nil {
			c.relist = true
			return nil, nil, nil, fmt.Errorf("list nodes: %w", err)
		}
		taints = map[string][]v1.Taint{}
		clear(c.nextNodes)
		for _, n := range nodes {
			if t := noExecuteTaints(n); t != nil {
				taints[n.Name] = t
			}
			prev, had := c.tainted[n.Name]
			cur, has := taints[n.Name]
			uid, existed := c.nodes[n.Name]
			note(n.Name, prev, cur, had, has, !existed || uid != n.UID)
			c.nextNodes[n.Name] = n.UID
		}
		c.listed = true
		c.relist = false
		return taints, cleared, changed, nil
	}
	for _, name := range names {
		node, err := c.opts.Lister.GetNode(ctx, name)
		if err != nil && !apierrors.IsNotFound(err) {
			c.abandon()
			return nil, nil, nil, fmt.Errorf("get node %s: %w", name, err)
		}
		prev, had := c.tainted[name]
		uid, existed := c.nodes[name]
		c.undo = append(c.undo, undoTaints{node: name, taints: prev, had: had, uid: uid, existed: existed})
		if err != nil {
			delete(c.tainted, name)
			delete(c.nodes, name)
			continue
		}
		cur := noExecuteTaints(node)
		if cur == nil {
			delete(c.tainted, name)
		} else {
			c.tainted[name] = cur
		}
		c.nodes[name] = node.UID
		note(name, prev, cur, had, cur != nil, !existed || uid != node.UID)
	}
	return c.tainted, cleared, changed, nil
}

// abandon puts back the taints a failed pass changed and has the next pass read every node: the
// feed's changes were taken by this one, and the next compares with what the last complete pass
// saw, as the real controller's handlers see every update however long a worker takes.
func (c *Controller) abandon() {
	for i := len(c.undo) - 1; i >= 0; i-- {
		u := c.undo[i]
		if u.had {
			c.tainted[u.node] = u.taints
		} else {
			delete(c.tainted, u.node)
		}
		if u.existed {
			c.nodes[u.node] = u.uid
		} else {
			delete(c.nodes, u.node)
		}
	}
	c.undo = c.undo[:0]
	c.listed = false
	c.relist = true
}

// noExecuteTaints returns node's NoExecute taints, in its order, or nil when it has none.
func noExecuteTaints(node *v1.Node) []v1.Taint {
	var out []v1.Taint
	for _, t := range node.Spec.Taints {
		if t.Effect == v1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// process is processPodOnNode for a pod on a node with NoExecute taints (the only one the real
// controller ever calls it with): an untolerated taint evicts now, tolerated ones schedule the
// eviction at the smallest tolerationSeconds from when it was first scheduled, and tolerations
// without tolerationSeconds keep the pod for ever.
func (c *Controller) process(ctx context.Context, pod *v1.Pod, taints []v1.Taint, now time.Time) {
	key := podkey.Of(pod)
	if w, ok := c.scheduled[key]; ok && w.tries > 0 {
		// deletePodHandler is retrying: it goes on whatever the pod's taints or tolerations
		// are now.
		return
	}
	used, all := matchingTolerations(ctx, taints, pod.Spec.Tolerations)
	if !all {
		if w, ok := c.scheduled[key]; ok && !w.fire.After(now) {
			return
		}
		c.cancel(key, "a taint is not tolerated")
		c.schedule(key, pod, now, now)
		return
	}
	wait := minTolerationTime(used)
	if wait < 0 {
		c.cancel(key, "tolerated for ever")
		return
	}
	start, fire := now, now.Add(wait)
	if w, ok := c.scheduled[key]; ok {
		start = w.created
		if !start.Add(wait).After(fire) {
			return
		}
		c.cancel(key, "toleration changed")
	}
	c.schedule(key, pod, start, start.Add(wait))
}

func (c *Controller) schedule(key string, pod *v1.Pod, created, fire time.Time) {
	c.scheduled[key] = work{created: created, fire: fire, node: pod.Spec.NodeName, delayed: fire.After(created)}
	c.opts.Tracer.Emit(trace.Event{Component: trace.TaintEviction, Event: trace.KindEvictAt, Pod: key, UID: string(pod.UID),
		Delay: fire.Sub(c.opts.Clock.Now()), Func: "processPodOnNode"})
}

// cancel drops a scheduled eviction, with the event the real controller records. An eviction
// whose handler has tried already is not dropped: CancelWork cannot stop a running
// deletePodHandler, which goes on with its retries. It records the event only for an eviction
// that was delayed, once (CancelWork finds its timer, then forgets it), and none for one that
// fired at once (a nil entry).
func (c *Controller) cancel(key, why string) {
	w, ok := c.scheduled[key]
	if !ok {
		return
	}
	if w.tries > 0 {
		if w.delayed && !w.cancelled {
			w.cancelled = true
			c.scheduled[key] = w
			c.event(key, "Cancelling deletion of Pod %s")
		}
		return
	}
	delete(c.scheduled, key)
	c.opts.Tracer.Emit(trace.Event{Component: trace.TaintEviction, Event: trace.KindEvictCancel, Pod: key, Message: why, Func: "cancelWorkWithEvent"})
	c.event(key, "Cancelling deletion of Pod %s")
}

// evict is deletePodHandler with addConditionAndDeletePod: the DisruptionTarget condition, then a
// delete with the pod's own grace period. The handler logs and records the event once, before
// its first try. Any error fails the try, NotFound too (the pod was deleted meanwhile): the
// handler does not tell it apart, and its next try finds no pod. The errors are the server's,
// which name the pod, returned unwrapped: the handler returns the GET's and the delete's as they
// are and its timed worker logs the last verbatim, which the pass does too. (A failed status
// write is the exception: v1.35's PatchPodStatus puts its patch in front, which the PUT here has
// not; see docs/fidelity.md.)
func (c *Controller) evict(ctx context.Context, pod *v1.Pod, first bool) error {
	key := podkey.Of(pod)
	if first {
		klog.FromContext(ctx).Info("Deleting pod", "controller", "taint-eviction-controller", "pod", klog.KObj(pod))
		c.event(key, "Marking for deletion Pod %s")
	}
	next := pod.DeepCopy()
	if apidefaults.UpdatePodCondition(&next.Status, v1.PodCondition{
		Type: v1.DisruptionTarget, ObservedGeneration: pod.Generation, Status: v1.ConditionTrue,
		Reason: "DeletionByTaintManager", Message: "Taint manager: deleting due to NoExecute taint",
	}, c.opts.Clock.Now()) {
		if _, err := c.opts.Writer.UpdatePodStatus(ctx, next); err != nil {
			return err
		}
	}
	if err := c.opts.Writer.DeletePod(ctx, pod.Namespace, pod.Name, metav1.DeleteOptions{}); err != nil {
		return err
	}
	c.opts.Tracer.Emit(trace.Event{Component: trace.TaintEviction, Event: trace.KindEvict, Pod: key, UID: string(pod.UID),
		Reason: "DeletionByTaintManager", Func: "addConditionAndDeletePod"})
	return nil
}

func (c *Controller) event(key, format string) {
	if c.opts.Recorder == nil {
		return
	}
	ns, name := splitKey(key)
	ref := &v1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: name}
	c.opts.Recorder.Eventf(ref, v1.EventTypeNormal, "TaintManagerEviction", format, key)
}

// matchingTolerations is GetMatchingTolerations: for each taint the first toleration that
// tolerates it, and whether every taint is tolerated.
func matchingTolerations(ctx context.Context, taints []v1.Taint, tolerations []v1.Toleration) ([]v1.Toleration, bool) {
	logger := klog.FromContext(ctx)
	var used []v1.Toleration
	for i := range taints {
		found := false
		for j := range tolerations {
			if tolerations[j].ToleratesTaint(logger, &taints[i], false) {
				used = append(used, tolerations[j])
				found = true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return used, true
}

// minTolerationTime is getMinTolerationTime: the smallest tolerationSeconds, 0 when none match or
// one is not positive, and -1 (for ever) when none sets it.
func minTolerationTime(tolerations []v1.Toleration) time.Duration {
	if len(tolerations) == 0 {
		return 0
	}
	least := int64(math.MaxInt64)
	for _, t := range tolerations {
		if t.TolerationSeconds == nil {
			continue
		}
		if *t.TolerationSeconds <= 0 {
			return 0
		}
		least = min(least, *t.TolerationSeconds)
	}
	if least == math.MaxInt64 {
		return -1
	}
	return time.Duration(least) * time.Second
}

// taintsEqual is the Semantic.DeepEqual of NoExecute taint lists that NodeUpdated makes, without
// reflection: a pass compares every tainted node's.
func taintsEqual(a, b []v1.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Key != y.Key || x.Value != y.Value || x.Effect != y.Effect || (x.TimeAdded == nil) != (y.TimeAdded == nil) ||
			x.TimeAdded != nil && !x.TimeAdded.Equal(y.TimeAdded) {
			return false
		}
	}
	return true
}

// tolerationsEqual is the Semantic.DeepEqual of tolerations that PodUpdated makes, without
// reflection: a pass compares every pod's on a tainted node, most of them the same slice.
func tolerationsEqual(a, b []v1.Toleration) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Key != y.Key || x.Operator != y.Operator || x.Value != y.Value || x.Effect != y.Effect ||
			(x.TolerationSeconds == nil) != (y.TolerationSeconds == nil) ||
			x.TolerationSeconds != nil && *x.TolerationSeconds != *y.TolerationSeconds {
			return false
		}
	}
	return true
}

func splitKey(key string) (string, string) {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	return "", key
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
