package nodelifecycle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
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

// The controller's defaults in v1.35 (kube-controller-manager's flags of the same names).
const (
	DefaultMonitorPeriod      = 5 * time.Second  // --node-monitor-period
	DefaultMonitorGracePeriod = 50 * time.Second // --node-monitor-grace-period
	DefaultStartupGracePeriod = 60 * time.Second // --node-startup-grace-period
	// unhealthyZoneThreshold and largeClusterThreshold are --unhealthy-zone-threshold and
	// --large-cluster-size-threshold.
	unhealthyZoneThreshold = 0.55
	largeClusterThreshold  = 50
	// evictionPeriod is how long after a node is queued for its NoExecute taint the tainting pass
	// takes it (scheduler.NodeEvictionPeriod); a node Ready again by then is not tainted.
	evictionPeriod = 100 * time.Millisecond
	// leaseNamespace holds the node leases.
	leaseNamespace = v1.NamespaceNodeLease
)

// Lister is what the controller reads. Errors are the API's.
type Lister interface {
	ListNodes(ctx context.Context) ([]*v1.Node, error)
	GetNode(ctx context.Context, name string) (*v1.Node, error)
	// ListPodsOnNode returns the pods bound to node: the real controller's pod index by node.
	ListPodsOnNode(ctx context.Context, node string) ([]*v1.Pod, error)
	GetLease(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error)
}

// NodeChanges names the nodes added, updated or deleted since its previous call, in name order,
// or says all when it cannot tell (its first call, after a relist): the node informer's event
// handlers, which queue each changed node for the NoSchedule taint pass.
type NodeChanges interface {
	ChangedNodes(ctx context.Context) (names []string, all bool, err error)
}

// Writer is what the controller writes.
type Writer interface {
	UpdateNode(ctx context.Context, node *v1.Node) (*v1.Node, error)
	UpdateNodeStatus(ctx context.Context, node *v1.Node) (*v1.Node, error)
	UpdatePodStatus(ctx context.Context, pod *v1.Pod) (*v1.Pod, error)
}

// Options configure a Controller.
type Options struct {
	// Clock is when things happen. Required.
	Clock clock.PassiveClock
	// Lister and Writer reach the API server. Required.
	Lister Lister
	Writer Writer
	// Tracer receives one event per action. Required; trace.Discard records nothing.
	Tracer trace.Tracer
	// Recorder records the Kubernetes events (RegisteredNode, RemovingNode, NodeNotReady). Nil
	// records none.
	Recorder record.EventRecorder
	// MonitorPeriod, MonitorGracePeriod and StartupGracePeriod are the controller's flags; zero
	// means the default.
	MonitorPeriod, MonitorGracePeriod, StartupGracePeriod time.Duration
	// Changes, when set, says which nodes changed between passes: the taint pass then looks at
	// those, the nodes whose NoExecute taint is due and the nodes whose last taint update failed,
	// rather than at every node. Nil looks at every node at every pass.
	Changes NodeChanges
}

func (o *Options) validate() error {
	if o.Clock == nil || o.Lister == nil || o.Writer == nil || o.Tracer == nil {
		return fmt.Errorf("node lifecycle controller: clock, lister, writer and tracer: %w", minikubelet.ErrMissingOption)
	}
	if o.MonitorPeriod <= 0 {
		o.MonitorPeriod = DefaultMonitorPeriod
	}
	if o.MonitorGracePeriod <= 0 {
		o.MonitorGracePeriod = DefaultMonitorGracePeriod
	}
	if o.StartupGracePeriod <= 0 {
		o.StartupGracePeriod = DefaultStartupGracePeriod
	}
	return nil
}

// health is what the controller remembers of one node between passes: the real controller's
// nodeHealthData.
type health struct {
	probe      time.Time         // when the node last showed a sign of life
	transition time.Time         // when its Ready condition last changed, as seen here
	ready      *v1.NodeCondition // the Ready condition last seen
	lease      *metav1.MicroTime // the lease's renewTime last seen
	uid        string            // for the events about a deleted node
}

// zoneState is the disruption state of a zone.
type zoneState string

const (
	stateInitial           zoneState = "Initial"
	stateNormal            zoneState = "Normal"
	stateFullDisruption    zoneState = "FullDisruption"
	statePartialDisruption zoneState = "PartialDisruption"
)

// Controller is the node lifecycle controller. Its zero value is not usable; call New.
type Controller struct {
	opts        Options
	health      map[string]*health
	zones       map[string]zoneState
	nextMonitor time.Time
	// tainting holds the nodes queued for a NoExecute taint and when the tainting pass takes
	// them: the real controller's zoneNoExecuteTainter queues.
	tainting map[string]time.Time
	// retry holds the nodes whose pods are still to be marked not ready: nodesToRetry.
	retry map[string]bool
	// retryTaints holds the nodes whose NoSchedule taint update failed, taken again at the next
	// pass whether or not they changed. v1.35 does not retry them (it logs the failure and is
	// done with the node until its next update); here the pass with a feed decides what the pass
	// over every node decides, and that one takes every node again anyway (docs/fidelity.md).
	retryTaints map[string]bool
	// relist is set when the taint pass's list of every node failed after the feed had said
	// all: the feed has let go of that answer, so the next pass takes every node again.
	relist bool
	// passNodes is the array of the last taint pass's nodes, which the next one reuses.
	passNodes []*v1.Node
}

// New returns a Controller whose first health check is due at once.
func New(opts Options) (*Controller, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Controller{opts: opts, health: map[string]*health{}, zones: map[string]zoneState{}, tainting: map[string]time.Time{}, retry: map[string]bool{}, retryTaints: map[string]bool{}}, nil
}

// NextWake returns when the next health check or tainting pass is due, and false before the
// first pass has set it.
func (c *Controller) NextWake() (time.Time, bool) {
	next := c.nextMonitor
	for _, t := range c.tainting {
		if t.Before(next) {
			next = t
		}
	}
	return next, !next.IsZero()
}

// Sync keeps the NoSchedule condition taints of the nodes that changed (of every node without
// Options.Changes), takes the nodes whose NoExecute taint is due, and when the monitor period
// has passed checks every node's health first. It returns every error it met, joined; a failed
// node is retried at the next pass, as the real controller's are.
func (c *Controller) Sync(ctx context.Context) error {
	var errs []error
	now := c.opts.Clock.Now()
	if !now.Before(c.nextMonitor) {
		nodes, err := c.opts.Lister.ListNodes(ctx)
		if err != nil {
			return fmt.Errorf("list nodes: %w", err)
		}
		sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
		c.nextMonitor = now.Add(c.opts.MonitorPeriod)
		if err := c.monitor(ctx, nodes, now); err != nil {
			errs = append(errs, err)
		}
	}
	// The monitor pass wrote to the nodes: the taint pass reads them after it.
	nodes, all, err := c.taintPassNodes(ctx, now)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, node := range nodes {
		delete(c.retryTaints, node.Name)
		if err := c.noScheduleTaints(ctx, node, now); err != nil {
			c.retryTaints[node.Name] = true
			errs = append(errs, err)
		}
		at, queued := c.tainting[node.Name]
		if !queued || at.After(now) {
			continue
		}
		// doNoExecuteTaintingPass: the condition as it is now decides; a Ready node is skipped.
		delete(c.tainting, node.Name)
		if cur := condition(&node.Status, v1.NodeReady); cur != nil && cur.Status != v1.ConditionTrue {
			if err := c.noExecuteTaints(ctx, node, cur.Status, now); err != nil {
				c.tainting[node.Name] = now.Add(evictionPeriod) // retried, as the queue retries
				errs = append(errs, err)
			}
		}
	}
	if all {
		// A deleted node leaves the queues.
		for _, name := range sortedKeys(c.tainting) {
			if !slices.ContainsFunc(nodes, func(n *v1.Node) bool { return n.Name == name }) {
				delete(c.tainting, name)
			}
		}
		for name := range c.retryTaints {
			if !slices.ContainsFunc(nodes, func(n *v1.Node) bool { return n.Name == name }) {
				delete(c.retryTaints, name)
			}
		}
	}
	return errors.Join(errs...)
}

// taintPassNodes returns, in name order, the nodes the taint pass looks at, and whether they are
// all the nodes. Without Options.Changes, when the feed cannot tell what changed, or when the
// list of every node failed at the last pass, they are all. Otherwise they are the nodes that changed since the last pass (the NoSchedule taints
// follow a node's conditions and spec only, so an unchanged node's were settled then), the
// nodes whose NoExecute taint is due and those whose last taint update failed; a node among
// them that is gone leaves the queues.
func (c *Controller) taintPassNodes(ctx context.Context, now time.Time) ([]*v1.Node, bool, error) {
	var changed []string
	all := true
	if c.opts.Changes != nil {
		var err error
		if changed, all, err = c.opts.Changes.ChangedNodes(ctx); err != nil {
			return nil, false, fmt.Errorf("changed nodes: %w", err)
		}
		all = all || c.relist
	}
	if all {
		nodes, err := c.opts.Lister.ListNodes(ctx)
		if err != nil {
			// The feed has let go of "all": the next pass lists every node again.
			c.relist = c.opts.Changes != nil
			return nil, true, fmt.Errorf("list nodes: %w", err)
		}
		c.relist = false
		sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
		return nodes, true, nil
	}
	names := changed
	for name, at := range c.tainting {
		if !at.After(now) {
			names = append(names, name)
		}
	}
	for name := range c.retryTaints {
		names = append(names, name)
	}
	if len(names) > len(changed) {
		slices.Sort(names)
		names = slices.Compact(names)
	}
	// Every node is read before any is written, as one list would read them.
	nodes := c.passNodes[:0]
	for _, name := range names {
		node, err := c.opts.Lister.GetNode(ctx, name)
		if err != nil && apierrors.IsNotFound(err) {
			delete(c.tainting, name)
			delete(c.retryTaints, name)
			continue
		}
		if err != nil {
			// The feed has let go of these names: they are looked at at the next pass.
			for _, n := range names {
				c.retryTaints[n] = true
			}
			return nil, false, fmt.Errorf("get node %s: %w", name, err)
		}
		nodes = append(nodes, node)
	}
	// The next pass writes its nodes over these.
	c.passNodes = nodes
	return nodes, false, nil
}

// monitor is monitorNodeHealth: it notes new and deleted nodes, updates every node's health,
// marks the pods of a node that just stopped being Ready not Ready, and decides the NoExecute
// taints, after the zones' disruption states allow them.
func (c *Controller) monitor(ctx context.Context, nodes []*v1.Node, now time.Time) error {
	logger := klog.FromContext(ctx)
	seen := map[string]bool{}
	for _, node := range nodes {
		seen[node.Name] = true
		if _, known := c.health[node.Name]; !known {
			logger.V(1).Info("Controller observed a new Node", "node", klog.KObj(node))
			c.nodeEvent(node.Name, string(node.UID), "RegisteredNode", fmt.Sprintf("Registered Node %v in Controller", node.Name))
			c.health[node.Name] = nil
		}
	}
	for _, name := range sortedKeys(c.health) {
		if seen[name] {
			continue
		}
		logger.V(1).Info("Controller observed a Node deletion", "node", klog.KRef("", name))
		uid := ""
		if h := c.health[name]; h != nil {
			uid = h.uid
		}
		c.nodeEvent(name, uid, "RemovingNode", fmt.Sprintf("Removing Node %v from Controller", name))
		delete(c.health, name)
		delete(c.retry, name)
	}
	var errs []error
	zoneConditions := map[string][]*v1.NodeCondition{}
	current := map[string]*v1.NodeCondition{}
	for _, node := range nodes {
		observed, cur, err := c.updateHealth(ctx, node, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		zone := zoneKey(node)
		if _, ok := c.zones[zone]; !ok {
			c.zones[zone] = stateInitial
		}
		if _, excluded := node.Labels["node.kubernetes.io/exclude-disruption"]; !excluded {
			zoneConditions[zone] = append(zoneConditions[zone], cur)
		}
		if cur == nil {
			delete(c.retry, node.Name)
			continue
		}
		// A node whose pods could not all be marked not ready is marked again at the next pass
		// (nodesToRetry), without a second NodeNotReady event.
		notReady := cur.Status != v1.ConditionTrue && observed.Status == v1.ConditionTrue
		retry := c.retry[node.Name] && observed.Status != v1.ConditionTrue
		if !notReady && !retry {
			current[node.Name] = cur
			delete(c.retry, node.Name)
			continue
		}
		pods, err := c.opts.Lister.ListPodsOnNode(ctx, node.Name)
		if err != nil {
			// As monitorNodeHealth, a failed read skips this node only: no event, no taint, and
			// a retry when it had just stopped being Ready.
			errs = append(errs, fmt.Errorf("list pods of node %s: %w", node.Name, err))
			if notReady {
				c.retry[node.Name] = true
			}
			continue
		}
		current[node.Name] = cur
		if notReady {
			c.nodeEvent(node.Name, string(node.UID), "NodeNotReady", fmt.Sprintf("Node %s status is now: %s", node.Name, "NodeNotReady"))
		}
		// ListPodsOnNode answers in key order, MarkPodsNotReady's order.
		if err := c.markPodsNotReady(ctx, pods, node.Name); err != nil {
			errs = append(errs, err)
			c.retry[node.Name] = true
			continue
		}
		delete(c.retry, node.Name)
	}
	taintable := c.handleDisruption(ctx, nodes, zoneConditions, now)
	for _, node := range nodes {
		cur, ok := current[node.Name]
		switch {
		case !ok:
		case cur.Status == v1.ConditionTrue:
			// markNodeAsReachable: a Ready node loses its NoExecute taints at once.
			delete(c.tainting, node.Name)
			if err := c.noExecuteTaints(ctx, node, cur.Status, now); err != nil {
				errs = append(errs, err)
			}
		case !taintable[zoneKey(node)]:
			// The zone's limiter is stopped: nothing is taken from its queue.
			delete(c.tainting, node.Name)
		case hasTaint(node.Spec.Taints, unreachableNoExecute) && cur.Status == v1.ConditionFalse,
			hasTaint(node.Spec.Taints, notReadyNoExecute) && cur.Status == v1.ConditionUnknown:
			// The other NoExecute taint is swapped at once, not queued.
			if err := c.noExecuteTaints(ctx, node, cur.Status, now); err != nil {
				errs = append(errs, err)
			}
		default:
			if _, queued := c.tainting[node.Name]; !queued && !c.hasNoExecuteFor(node, cur.Status) {
				c.tainting[node.Name] = now.Add(evictionPeriod)
			}
		}
	}
	return errors.Join(errs...)
}

// hasNoExecuteFor reports whether the node already has the NoExecute taint of status.
func (c *Controller) hasNoExecuteFor(node *v1.Node, status v1.ConditionStatus) bool {
	if status == v1.ConditionFalse {
		return hasTaint(node.Spec.Taints, notReadyNoExecute)
	}
	return hasTaint(node.Spec.Taints, unreachableNoExecute)
}

// updateHealth is tryUpdateNodeHealth: it returns the Ready condition as observed and as it is
// after the check, which sets the conditions Unknown once the node's heartbeat and lease are older
// than the grace period. node is the lister's, read-only: it is copied only when the check changes
// its conditions.
func (c *Controller) updateHealth(ctx context.Context, node *v1.Node, now time.Time) (v1.NodeCondition, *v1.NodeCondition, error) {
	h := c.health[node.Name]
	grace := c.opts.MonitorGracePeriod
	var observed v1.NodeCondition
	cur := condition(&node.Status, v1.NodeReady)
	if cur == nil {
		// The kubelet never posted a status: count from the node's creation.
		observed = v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionUnknown,
			LastHeartbeatTime: node.CreationTimestamp, LastTransitionTime: node.CreationTimestamp}
		grace = c.opts.StartupGracePeriod
		if h == nil {
			h = &health{probe: node.CreationTimestamp.Time, transition: node.CreationTimestamp.Time}
		}
	} else {
		observed = *cur
	}
	switch {
	case h == nil, h.ready == nil && cur != nil:
		h = &health{probe: now, transition: now, lease: leaseOf(h)}
	case h.ready != nil && cur == nil:
		h = &health{probe: now, transition: now}
	case h.ready != nil && !h.ready.LastHeartbeatTime.Equal(&cur.LastHeartbeatTime):
		transition := h.transition
		if !h.ready.LastTransitionTime.Equal(&cur.LastTransitionTime) {
			transition = now
		}
		h = &health{probe: now, transition: transition, lease: h.lease}
	}
	h.uid = string(node.UID)
	if cur != nil {
		h.ready = cur.DeepCopy()
	}
	c.health[node.Name] = h
	// A renewed lease is a sign of life too.
	lease, err := c.opts.Lister.GetLease(ctx, leaseNamespace, node.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return observed, cur, fmt.Errorf("get lease of node %s: %w", node.Name, err)
	}
	if lease != nil && lease.Spec.RenewTime != nil && (h.lease == nil || h.lease.Before(lease.Spec.RenewTime)) {
		h.lease = lease.Spec.RenewTime.DeepCopy()
		h.probe = now
	}
	if !now.After(h.probe.Add(grace)) {
		return observed, cur, nil
	}
	stamp := metav1.NewTime(now)
	node = node.DeepCopy()
	for _, t := range []v1.NodeConditionType{v1.NodeReady, v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure} {
		cond := condition(&node.Status, t)
		switch {
		case cond == nil:
			node.Status.Conditions = append(node.Status.Conditions, v1.NodeCondition{Type: t, Status: v1.ConditionUnknown,
				Reason: "NodeStatusNeverUpdated", Message: "Kubelet never posted node status.",
				LastHeartbeatTime: node.CreationTimestamp, LastTransitionTime: stamp})
		case cond.Status != v1.ConditionUnknown:
			cond.Status, cond.Reason, cond.Message = v1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
			cond.LastTransitionTime = stamp
		}
	}
	cur = condition(&node.Status, v1.NodeReady)
	if cur.Status == observed.Status && cur.Reason == observed.Reason && cur.Message == observed.Message &&
		cur.LastTransitionTime.Equal(&observed.LastTransitionTime) {
		return observed, cur, nil
	}
	updated, err := c.opts.Writer.UpdateNodeStatus(ctx, node)
	if err != nil {
		return observed, cur, fmt.Errorf("update status of node %s: %w", node.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Node hasn't been updated", "node", klog.KObj(node), "duration", now.Sub(h.probe))
	c.opts.Tracer.Emit(trace.Event{Component: trace.NodeLifecycle, Event: trace.KindReady, Pod: node.Name,
		From: string(observed.Status), To: string(cur.Status), Reason: cur.Reason, Message: cur.Message, Func: "tryUpdateNodeHealth"})
	h.ready = condition(&updated.Status, v1.NodeReady).DeepCopy()
	h.transition = now
	return observed, cur, nil
}

// markPodsNotReady is MarkPodsNotReady: every pod on the node with a Ready condition gets it
// False, and a NodeNotReady event.
func (c *Controller) markPodsNotReady(ctx context.Context, pods []*v1.Pod, nodeName string) error {
	var errs []error
	for _, p := range pods {
		if p.Spec.NodeName != nodeName {
			continue
		}
		pod := p.DeepCopy()
		cond := podCondition(&pod.Status, v1.PodReady)
		if cond == nil {
			continue
		}
		next := *cond
		next.Status = v1.ConditionFalse
		if !apidefaults.UpdatePodCondition(&pod.Status, next, c.opts.Clock.Now()) {
			continue
		}
		if _, err := c.opts.Writer.UpdatePodStatus(ctx, pod); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			errs = append(errs, fmt.Errorf("mark pod %s not ready: %w", podkey.Of(pod), err))
		}
		c.opts.Tracer.Emit(trace.Event{Component: trace.NodeLifecycle, Event: trace.KindNotReady, Pod: podkey.Of(pod),
			UID: string(pod.UID), Func: "MarkPodsNotReady"})
		if c.opts.Recorder != nil {
			c.opts.Recorder.Event(pod, v1.EventTypeWarning, "NodeNotReady", "Node is not ready")
		}
	}
	return errors.Join(errs...)
}

// handleDisruption computes each zone's state from its nodes' Ready conditions and returns the
// zones whose nodes may get NoExecute taints now. When every zone is fully disrupted the
// controller takes the control plane, not the nodes, to be cut off: it removes the NoExecute taints
// of every node and taints nothing until a node is Ready again.
func (c *Controller) handleDisruption(ctx context.Context, nodes []*v1.Node, zoneConditions map[string][]*v1.NodeCondition, now time.Time) map[string]bool {
	logger := klog.FromContext(ctx)
	states := map[string]zoneState{}
	sizes := map[string]int{}
	allFully := true
	for zone, conds := range zoneConditions {
		states[zone] = computeZoneState(conds)
		sizes[zone] = len(conds)
		if states[zone] != stateFullDisruption {
			allFully = false
		}
	}
	allWereFully := true
	for zone, st := range c.zones {
		if _, ok := zoneConditions[zone]; !ok {
			delete(c.zones, zone)
			continue
		}
		if st != stateFullDisruption {
			allWereFully = false
		}
	}
	taintable := map[string]bool{}
	switch {
	case allFully && allWereFully:
		// Still in master disruption mode: taint nothing.
	case allFully:
		logger.Info("Controller detected that all Nodes are not-Ready. Entering master disruption mode")
		for _, node := range nodes {
			if err := c.swapTaints(ctx, node, nil, []v1.Taint{unreachableNoExecute, notReadyNoExecute}, now); err != nil {
				logger.Error(err, "Failed to remove taints from Node", "node", klog.KObj(node))
			}
		}
		for zone := range c.zones {
			c.zones[zone] = stateFullDisruption
		}
	default:
		if allWereFully && len(c.zones) > 0 {
			logger.Info("Controller detected that some Nodes are Ready. Exiting master disruption mode")
			// Every node gets a fresh grace period.
			for _, h := range c.health {
				if h != nil {
					h.probe, h.transition = now, now
				}
			}
		}
		for zone, st := range states {
			c.zones[zone] = st
			taintable[zone] = st != statePartialDisruption || sizes[zone] > largeClusterThreshold
		}
	}
	return taintable
}

// computeZoneState is ComputeZoneState.
func computeZoneState(conds []*v1.NodeCondition) zoneState {
	ready, notReady := 0, 0
	for _, c := range conds {
		if c != nil && c.Status == v1.ConditionTrue {
			ready++
		} else {
			notReady++
		}
	}
	switch {
	case ready == 0 && notReady > 0:
		return stateFullDisruption
	case notReady > 2 && float64(notReady)/float64(notReady+ready) >= unhealthyZoneThreshold:
		return statePartialDisruption
	default:
		return stateNormal
	}
}

func (c *Controller) nodeEvent(name, uid, reason, msg string) {
	c.opts.Tracer.Emit(trace.Event{Component: trace.NodeLifecycle, Event: trace.KindNode, Pod: name, Reason: reason, Message: msg})
	if c.opts.Recorder == nil {
		return
	}
	ref := &v1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: name, UID: types.UID(uid)}
	if reason == "NodeNotReady" {
		c.opts.Recorder.Eventf(ref, v1.EventTypeNormal, reason, "%s", msg)
		return
	}
	c.opts.Recorder.Eventf(ref, v1.EventTypeNormal, reason, "Node %s event: %s", name, msg)
}

func condition(st *v1.NodeStatus, t v1.NodeConditionType) *v1.NodeCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

func podCondition(st *v1.PodStatus, t v1.PodConditionType) *v1.PodCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

func leaseOf(h *health) *metav1.MicroTime {
	if h == nil {
		return nil
	}
	return h.lease
}

// zoneKey is the node's failure domain, region and zone, as nodetopology.GetZoneKey builds it.
func zoneKey(node *v1.Node) string {
	region, zone := node.Labels[v1.LabelTopologyRegion], node.Labels[v1.LabelTopologyZone]
	if region == "" {
		region = node.Labels[v1.LabelFailureDomainBetaRegion]
	}
	if zone == "" {
		zone = node.Labels[v1.LabelFailureDomainBetaZone]
	}
	if region == "" && zone == "" {
		return ""
	}
	return region + ":\x00:" + zone
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
