package tainteviction

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// Writer is what the controller writes.
type Writer interface {
	UpdatePodStatus(ctx context.Context, pod *v1.Pod) (*v1.Pod, error)
	DeletePod(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error
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
	// node is the pod's when it was scheduled. A pod deleted and created again under the same
	// name may be on another node now, where Sync looks it up by name.
	node string
}

// Controller is the taint eviction controller. Its zero value is not usable; call New.
type Controller struct {
	opts      Options
	scheduled map[string]work // by namespace/name
	// noExecute holds the NoExecute taints of each node that has any, in the node's order,
	// kept from Options.Changes.
	noExecute map[string][]v1.Taint
}

// New returns a Controller with nothing scheduled.
func New(opts Options) (*Controller, error) {
	if opts.Clock == nil || opts.Lister == nil || opts.Writer == nil || opts.Tracer == nil {
		return nil, fmt.Errorf("taint eviction controller: clock, lister, writer and tracer: %w", minikubelet.ErrMissingOption)
	}
	return &Controller{opts: opts, scheduled: map[string]work{}, noExecute: map[string][]v1.Taint{}}, nil
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

// Sync schedules or cancels the eviction of every pod from its node's NoExecute taints and its
// tolerations, then evicts the pods whose time has come.
func (c *Controller) Sync(ctx context.Context) error {
	now := c.opts.Clock.Now()
	taints, err := c.nodeTaints(ctx)
	if err != nil {
		return err
	}
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
	}
	var relevant []keyed
	present := map[string]*v1.Pod{}
	for _, node := range sortedKeys(wanted) {
		pods, err := c.opts.Lister.ListPodsOnNode(ctx, node)
		if err != nil {
			return fmt.Errorf("list pods of node %s: %w", node, err)
		}
		_, tainted := taints[node]
		for _, pod := range pods {
			if pod.Spec.NodeName != node || pod.DeletionTimestamp != nil {
				continue
			}
			key := podkey.Of(pod)
			if _, ok := c.scheduled[key]; !tainted && !ok {
				continue
			}
			relevant = append(relevant, keyed{key, pod})
			present[key] = pod
		}
	}
	// A pod with an eviction scheduled that is not on its node any more may have been deleted
	// and created again under the same name elsewhere: as handlePodUpdate, which gets the pod
	// by name, it is processed on the node it is on now, and is gone only when no pod bound
	// and not being deleted has its name.
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
			return fmt.Errorf("get pod %s: %w", key, err)
		}
		if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil {
			continue
		}
		relevant = append(relevant, keyed{key, pod})
		present[key] = pod
	}
	sort.Slice(relevant, func(i, j int) bool { return relevant[i].key < relevant[j].key })
	for _, r := range relevant {
		c.process(ctx, r.pod, taints[r.pod.Spec.NodeName], now)
	}
	// A pod that is gone or being deleted needs no eviction (handlePodUpdate on a deleted pod).
	for _, key := range sortedKeys(c.scheduled) {
		if _, ok := present[key]; !ok {
			c.cancel(key, "pod gone")
		}
	}
	var errs []error
	for _, key := range sortedKeys(c.scheduled) {
		w := c.scheduled[key]
		if w.fire.After(now) {
			continue
		}
		delete(c.scheduled, key)
		if err := c.evict(ctx, present[key]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// nodeTaints returns the NoExecute taints of every node that has any: read from every node
// without Options.Changes or when they cannot tell what changed, and otherwise brought up to date
// from the nodes that changed. The map is the controller's; the caller only reads it.
func (c *Controller) nodeTaints(ctx context.Context) (map[string][]v1.Taint, error) {
	var changed []string
	all := true
	if c.opts.Changes != nil {
		var err error
		if changed, all, err = c.opts.Changes.ChangedNodes(ctx); err != nil {
			return nil, fmt.Errorf("changed nodes: %w", err)
		}
	}
	if all || c.noExecute == nil {
		nodes, err := c.opts.Lister.ListNodes(ctx)
		if err != nil {
			// A feed's changes are gone with this pass: every node is read at the next.
			c.noExecute = nil
			return nil, fmt.Errorf("list nodes: %w", err)
		}
		c.noExecute = map[string][]v1.Taint{}
		for _, n := range nodes {
			c.noteTaints(n)
		}
		return c.noExecute, nil
	}
	for _, name := range changed {
		node, err := c.opts.Lister.GetNode(ctx, name)
		if err != nil && apierrors.IsNotFound(err) {
			delete(c.noExecute, name)
			continue
		}
		if err != nil {
			c.noExecute = nil
			return nil, fmt.Errorf("get node %s: %w", name, err)
		}
		delete(c.noExecute, name)
		c.noteTaints(node)
	}
	return c.noExecute, nil
}

// noteTaints files node's NoExecute taints, if it has any.
func (c *Controller) noteTaints(node *v1.Node) {
	for _, t := range node.Spec.Taints {
		if t.Effect == v1.TaintEffectNoExecute {
			c.noExecute[node.Name] = append(c.noExecute[node.Name], t)
		}
	}
}

// process is processPodOnNode: no taints cancel, an untolerated taint evicts now, tolerated ones
// schedule the eviction at the smallest tolerationSeconds from when it was first scheduled, and
// tolerations without tolerationSeconds keep the pod for ever.
func (c *Controller) process(ctx context.Context, pod *v1.Pod, taints []v1.Taint, now time.Time) {
	key := podkey.Of(pod)
	if len(taints) == 0 {
		c.cancel(key, "no NoExecute taints")
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
	c.scheduled[key] = work{created: created, fire: fire, node: pod.Spec.NodeName}
	c.opts.Tracer.Emit(trace.Event{Component: trace.TaintEviction, Event: trace.KindEvictAt, Pod: key, UID: string(pod.UID),
		Delay: fire.Sub(c.opts.Clock.Now()), Func: "processPodOnNode"})
}

// cancel drops a scheduled eviction, with the event the real controller records.
func (c *Controller) cancel(key, why string) {
	if _, ok := c.scheduled[key]; !ok {
		return
	}
	delete(c.scheduled, key)
	c.opts.Tracer.Emit(trace.Event{Component: trace.TaintEviction, Event: trace.KindEvictCancel, Pod: key, Message: why, Func: "cancelWorkWithEvent"})
	c.event(key, "Cancelling deletion of Pod %s")
}

// evict is deletePodHandler with addConditionAndDeletePod: the DisruptionTarget condition, then a
// delete with the pod's own grace period.
func (c *Controller) evict(ctx context.Context, pod *v1.Pod) error {
	key := podkey.Of(pod)
	klog.FromContext(ctx).V(2).Info("Deleting pod", "controller", "taint-eviction-controller", "pod", klog.KObj(pod))
	c.event(key, "Marking for deletion Pod %s")
	next := pod.DeepCopy()
	if apidefaults.UpdatePodCondition(&next.Status, v1.PodCondition{
		Type: v1.DisruptionTarget, ObservedGeneration: pod.Generation, Status: v1.ConditionTrue,
		Reason: "DeletionByTaintManager", Message: "Taint manager: deleting due to NoExecute taint",
	}, c.opts.Clock.Now()) {
		if _, err := c.opts.Writer.UpdatePodStatus(ctx, next); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("evict pod %s: %w", key, err)
		}
	}
	if err := c.opts.Writer.DeletePod(ctx, pod.Namespace, pod.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("evict pod %s: %w", key, err)
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
