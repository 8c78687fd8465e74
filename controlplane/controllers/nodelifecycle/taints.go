package nodelifecycle

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// The NoExecute taints of an unreachable or not-ready node, which the taint eviction controller
// acts on: the real controller's UnreachableTaintTemplate and NotReadyTaintTemplate.
var (
	unreachableNoExecute = v1.Taint{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}
	notReadyNoExecute    = v1.Taint{Key: v1.TaintNodeNotReady, Effect: v1.TaintEffectNoExecute}
)

// conditionTaints maps a node condition's status to the key of the NoSchedule taint it calls for
// (nodeConditionToTaintKeyStatusMap).
var conditionTaints = []struct {
	cond   v1.NodeConditionType
	status v1.ConditionStatus
	key    string
}{
	{v1.NodeReady, v1.ConditionFalse, v1.TaintNodeNotReady},
	{v1.NodeReady, v1.ConditionUnknown, v1.TaintNodeUnreachable},
	{v1.NodeMemoryPressure, v1.ConditionTrue, v1.TaintNodeMemoryPressure},
	{v1.NodeDiskPressure, v1.ConditionTrue, v1.TaintNodeDiskPressure},
	{v1.NodeNetworkUnavailable, v1.ConditionTrue, v1.TaintNodeNetworkUnavailable},
	{v1.NodePIDPressure, v1.ConditionTrue, v1.TaintNodePIDPressure},
}

// managedNoSchedule reports whether the controller owns a NoSchedule taint with this key.
func managedNoSchedule(key string) bool {
	if key == v1.TaintNodeUnschedulable {
		return true
	}
	for _, ct := range conditionTaints {
		if ct.key == key {
			return true
		}
	}
	return false
}

// noScheduleTaints is doNoScheduleTaintingPass: the node's NoSchedule taints follow its conditions
// and spec.unschedulable.
func (c *Controller) noScheduleTaints(ctx context.Context, node *v1.Node, now time.Time) error {
	var want []v1.Taint
	for _, ct := range conditionTaints {
		if cond := condition(&node.Status, ct.cond); cond != nil && cond.Status == ct.status {
			want = append(want, v1.Taint{Key: ct.key, Effect: v1.TaintEffectNoSchedule})
		}
	}
	if node.Spec.Unschedulable {
		want = append(want, v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule})
	}
	var have []v1.Taint
	for _, t := range node.Spec.Taints {
		if t.Effect == v1.TaintEffectNoSchedule && managedNoSchedule(t.Key) {
			have = append(have, t)
		}
	}
	add, remove := taintDiff(want, have), taintDiff(have, want)
	if len(add) == 0 && len(remove) == 0 {
		return nil
	}
	return c.swapTaints(ctx, node, add, remove, now)
}

// noExecuteTaints taints a node that is not Ready with the NoExecute taint of its condition and
// removes the other one, or removes both from a Ready node (processTaintBaseEviction,
// doNoExecuteTaintingPass and markNodeAsReachable).
func (c *Controller) noExecuteTaints(ctx context.Context, node *v1.Node, status v1.ConditionStatus, now time.Time) error {
	var add, remove []v1.Taint
	switch status {
	case v1.ConditionFalse:
		add, remove = []v1.Taint{notReadyNoExecute}, []v1.Taint{unreachableNoExecute}
	case v1.ConditionUnknown:
		add, remove = []v1.Taint{unreachableNoExecute}, []v1.Taint{notReadyNoExecute}
	default:
		remove = []v1.Taint{unreachableNoExecute, notReadyNoExecute}
	}
	return c.swapTaints(ctx, node, add, remove, now)
}

// swapTaints is SwapNodeControllerTaint: it adds the taints the node lacks, stamped with now, and
// removes the ones it has, in one update. It writes nothing when nothing changes, and node, the
// lister's, is only read: it is copied for the update.
func (c *Controller) swapTaints(ctx context.Context, node *v1.Node, add, remove []v1.Taint, now time.Time) error {
	var added, removed []v1.Taint
	var kept []v1.Taint
	for _, t := range node.Spec.Taints {
		if hasTaint(remove, t) {
			removed = append(removed, t)
			continue
		}
		kept = append(kept, t)
	}
	stamp := metav1.NewTime(now)
	for _, t := range add {
		if hasTaint(kept, t) {
			continue
		}
		t.TimeAdded = &stamp
		kept = append(kept, t)
		added = append(added, t)
	}
	if len(added) == 0 && len(removed) == 0 {
		return nil
	}
	next := node.DeepCopy()
	next.Spec.Taints = kept
	if _, err := c.opts.Writer.UpdateNode(ctx, next); err != nil {
		return fmt.Errorf("update taints of node %s: %w", node.Name, err)
	}
	for _, t := range added {
		klog.FromContext(ctx).V(4).Info("Added taint to node", "taint", t.ToString(), "node", klog.KObj(node))
		c.opts.Tracer.Emit(trace.Event{Component: trace.NodeLifecycle, Event: trace.KindTaint, Pod: node.Name, Reason: t.ToString(), Func: "SwapNodeControllerTaint"})
	}
	for _, t := range removed {
		klog.FromContext(ctx).V(4).Info("Removed taint from node", "taint", t.ToString(), "node", klog.KObj(node))
		c.opts.Tracer.Emit(trace.Event{Component: trace.NodeLifecycle, Event: trace.KindUntaint, Pod: node.Name, Reason: t.ToString(), Func: "SwapNodeControllerTaint"})
	}
	return nil
}

// hasTaint reports whether list holds a taint with t's key and effect (Taint.MatchTaint).
func hasTaint(list []v1.Taint, t v1.Taint) bool {
	for i := range list {
		if list[i].MatchTaint(&t) {
			return true
		}
	}
	return false
}

// taintDiff returns the taints of a that b lacks.
func taintDiff(a, b []v1.Taint) []v1.Taint {
	var out []v1.Taint
	for _, t := range a {
		if !hasTaint(b, t) {
			out = append(out, t)
		}
	}
	return out
}
