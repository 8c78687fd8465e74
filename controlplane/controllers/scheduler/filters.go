package scheduler

import (
	"context"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/klog/v2"
)

// The filters' reasons, kube-scheduler's words.
const (
	reasonUnschedulable = "node(s) were unschedulable"
	reasonNodeName      = "node(s) didn't match the requested node name"
	reasonTaints        = "node(s) had untolerated taint(s)"
	reasonAffinity      = "node(s) didn't match Pod's node affinity/selector"
	reasonTooManyPods   = "Too many pods"
)

// verdict is one node's filter result: no reasons means it fits; resolvable means preemption
// could help in principle (only NodeResourcesFit fails that way).
type verdict struct {
	reasons    []string
	resolvable bool
}

// filter runs the filters in the default profile's order and stops at the first that fails.
func filter(ctx context.Context, pod *v1.Pod, node *v1.Node, used usage) verdict {
	logger := klog.FromContext(ctx)
	if node.Spec.Unschedulable && !tolerates(ctx, pod, v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}) {
		return verdict{reasons: []string{reasonUnschedulable}}
	}
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != node.Name {
		return verdict{reasons: []string{reasonNodeName}}
	}
	for _, t := range node.Spec.Taints {
		if t.Effect != v1.TaintEffectNoSchedule && t.Effect != v1.TaintEffectNoExecute {
			continue
		}
		if !tolerates(ctx, pod, t) {
			logger.V(4).Info("node had untolerated taints", "node", klog.KObj(node), "pod", klog.KObj(pod), "untoleratedTaint", t.ToString())
			return verdict{reasons: []string{reasonTaints}}
		}
	}
	if !matchesAffinity(pod, node) {
		return verdict{reasons: []string{reasonAffinity}}
	}
	if r := fits(pod, node, used); len(r) > 0 {
		return verdict{reasons: r, resolvable: true}
	}
	return verdict{}
}

func tolerates(ctx context.Context, pod *v1.Pod, t v1.Taint) bool {
	for i := range pod.Spec.Tolerations {
		if pod.Spec.Tolerations[i].ToleratesTaint(klog.FromContext(ctx), &t, false) {
			return true
		}
	}
	return false
}

// matchesAffinity is the NodeAffinity filter: spec.nodeSelector and the required node affinity.
func matchesAffinity(pod *v1.Pod, node *v1.Node) bool {
	if len(pod.Spec.NodeSelector) > 0 && !labels.SelectorFromSet(pod.Spec.NodeSelector).Matches(labels.Set(node.Labels)) {
		return false
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	// The terms are ORed; the requirements of a term ANDed.
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if termMatches(term, node) {
			return true
		}
	}
	return false
}

func termMatches(term v1.NodeSelectorTerm, node *v1.Node) bool {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return false
	}
	for _, req := range term.MatchExpressions {
		if !requirementMatches(req, labels.Set(node.Labels)) {
			return false
		}
	}
	for _, req := range term.MatchFields {
		if req.Key != "metadata.name" || !requirementMatches(req, labels.Set{"metadata.name": node.Name}) {
			return false
		}
	}
	return true
}

func requirementMatches(req v1.NodeSelectorRequirement, set labels.Set) bool {
	ops := map[v1.NodeSelectorOperator]selection.Operator{
		v1.NodeSelectorOpIn: selection.In, v1.NodeSelectorOpNotIn: selection.NotIn, v1.NodeSelectorOpExists: selection.Exists,
		v1.NodeSelectorOpDoesNotExist: selection.DoesNotExist, v1.NodeSelectorOpGt: selection.GreaterThan, v1.NodeSelectorOpLt: selection.LessThan,
	}
	op, ok := ops[req.Operator]
	if !ok {
		return false
	}
	r, err := labels.NewRequirement(req.Key, op, req.Values)
	if err != nil {
		return false
	}
	return r.Matches(set)
}

// usage is what the pods bound to a node request, and how many they are.
type usage struct {
	pods     int
	requests v1.ResourceList
}

// podRequests is what a pod asks of a node: the sum of its containers' requests, or the largest
// init container's when that is more, plus its overhead (the resource helper's PodRequests, for
// pods without sidecars or pod-level resources).
func podRequests(pod *v1.Pod) v1.ResourceList {
	out := v1.ResourceList{}
	for _, c := range pod.Spec.Containers {
		addTo(out, c.Resources.Requests)
	}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			addTo(out, c.Resources.Requests)
			continue
		}
		for name, q := range c.Resources.Requests {
			if cur, ok := out[name]; !ok || q.Cmp(cur) > 0 {
				out[name] = q.DeepCopy()
			}
		}
	}
	addTo(out, pod.Spec.Overhead)
	return out
}

func addTo(dst, src v1.ResourceList) {
	for name, q := range src {
		cur := dst[name]
		cur.Add(q)
		dst[name] = cur
	}
}

// fits is the NodeResourcesFit filter: the pod count, then every resource the pod requests.
func fits(pod *v1.Pod, node *v1.Node, used usage) []string {
	var reasons []string
	alloc := node.Status.Allocatable
	if maxPods, ok := alloc[v1.ResourcePods]; ok && int64(used.pods+1) > maxPods.Value() {
		reasons = append(reasons, reasonTooManyPods)
	}
	req := podRequests(pod)
	names := make([]string, 0, len(req))
	for name := range req {
		names = append(names, string(name))
	}
	// cpu, memory and ephemeral-storage come first, as the filter checks them first.
	order := map[string]int{string(v1.ResourceCPU): 0, string(v1.ResourceMemory): 1, string(v1.ResourceEphemeralStorage): 2}
	sort.Slice(names, func(i, j int) bool {
		oi, iok := order[names[i]]
		oj, jok := order[names[j]]
		switch {
		case iok && jok:
			return oi < oj
		case iok != jok:
			return iok
		}
		return names[i] < names[j]
	})
	for _, n := range names {
		name := v1.ResourceName(n)
		q := req[name]
		if q.IsZero() || name == v1.ResourcePods {
			continue
		}
		have := alloc[name]
		need := used.requests[name].DeepCopy()
		need.Add(q)
		if need.Cmp(have) > 0 {
			reasons = append(reasons, fmt.Sprintf("Insufficient %v", name))
		}
	}
	return reasons
}

// freeShare is how much of the node's cpu and memory stays free with the pod on it, 0 to 1: the
// LeastAllocated score without weights.
func freeShare(pod *v1.Pod, node *v1.Node, used usage) float64 {
	req := podRequests(pod)
	var sum float64
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		alloc := node.Status.Allocatable[name]
		if alloc.IsZero() {
			continue
		}
		taken := used.requests[name].DeepCopy()
		taken.Add(req[name])
		sum += 1 - float64(taken.MilliValue())/float64(alloc.MilliValue())
	}
	return sum / 2
}
