package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
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

// Name is the scheduler's name: the pods it schedules have it (or nothing) in spec.schedulerName.
const Name = v1.DefaultSchedulerName

// RetryPeriod is how long an unschedulable pod waits at most before it is tried again:
// podMaxInUnschedulablePodsDuration.
const RetryPeriod = 5 * time.Minute

// noNodesMessage is ErrNoNodesAvailable's text.
const noNodesMessage = "no nodes available to schedule pods"

// Lister is what the scheduler reads. Errors are the API's.
type Lister interface {
	ListNodes(ctx context.Context) ([]*v1.Node, error)
	ListPods(ctx context.Context) ([]*v1.Pod, error)
	// ListUnboundPods returns the pods bound to no node: what feeds the scheduling queue.
	ListUnboundPods(ctx context.Context) ([]*v1.Pod, error)
	// ListPodsOnNode returns the pods bound to node, in the order of their namespace/name keys.
	ListPodsOnNode(ctx context.Context, node string) ([]*v1.Pod, error)
}

// Changes name what changed since their previous call, in name order, or say all when they
// cannot tell (their first call, after a relist): the scheduler's informer event handlers, which
// keep its cache of the nodes and of the pods bound to them.
type Changes interface {
	// ChangedNodes names the nodes added, updated or deleted.
	ChangedNodes(ctx context.Context) (names []string, all bool, err error)
	// ChangedPodNodes names the nodes a pod bound to was added to, updated on or deleted from:
	// a pod bound to a node, or moved off one, names it.
	ChangedPodNodes(ctx context.Context) (nodes []string, all bool, err error)
}

// Writer is what the scheduler writes.
type Writer interface {
	Bind(ctx context.Context, b *v1.Binding) error
	UpdatePodStatus(ctx context.Context, pod *v1.Pod) (*v1.Pod, error)
}

// Options configure a Scheduler.
type Options struct {
	// Clock is when things happen. Required.
	Clock clock.PassiveClock
	// Lister and Writer reach the API server. Required.
	Lister Lister
	Writer Writer
	// Tracer receives one event per binding or failed attempt. Required.
	Tracer trace.Tracer
	// Recorder records Scheduled and FailedScheduling. Nil records none.
	Recorder record.EventRecorder
	// Changes, when set, keep what the bound pods use and the cluster's fingerprint from one
	// pass that has a pod to place to the next, brought up to date from the nodes and the
	// nodes' pods that changed, as the real scheduler keeps its cache from its informers'
	// events. Nil reads every pod and every node's fingerprint at each such pass.
	Changes Changes
}

// attempt is the last failed attempt at a pod: when, and what the cluster looked like then.
type attempt struct {
	at          time.Time
	fingerprint string
}

// Scheduler is the scheduler core. Its zero value is not usable; call New.
type Scheduler struct {
	opts          Options
	unschedulable map[string]attempt // by pod UID
	// cache is what the pods bound to each node use and each node's part of the fingerprint,
	// kept with Options.Changes; nil until a pass needs them, and after a failed read.
	cache *clusterCache
}

// clusterCache is the scheduler's cache of the cluster, kept from Options.Changes.
type clusterCache struct {
	used map[string]usage
	// pieces holds each node's part of the fingerprint (fingerprintOf); fp is the fingerprint,
	// their concatenation in name order, and names the nodes it was made of.
	pieces map[string]string
	fp     string
	names  []string
	// counted are the nodes a pass counted a pod on as it bound it: what the pass's binding
	// did, or would have done had the pod not been bound or deleted meanwhile. The next pass
	// counts their pods again from what the API server holds.
	counted []string
}

// New returns a Scheduler.
func New(opts Options) (*Scheduler, error) {
	if opts.Clock == nil || opts.Lister == nil || opts.Writer == nil || opts.Tracer == nil {
		return nil, fmt.Errorf("scheduler: clock, lister, writer and tracer: %w", minikubelet.ErrMissingOption)
	}
	return &Scheduler{opts: opts, unschedulable: map[string]attempt{}}, nil
}

// NextWake returns when the earliest unschedulable pod is due for its periodic retry, and false
// when no pod waits for one.
func (s *Scheduler) NextWake() (time.Time, bool) {
	var next time.Time
	for _, a := range s.unschedulable {
		if t := a.at.Add(RetryPeriod); next.IsZero() || t.Before(next) {
			next = t
		}
	}
	return next, !next.IsZero()
}

// Sync tries every pending pod, highest priority and oldest first, and binds those that fit.
func (s *Scheduler) Sync(ctx context.Context) error {
	unbound, err := s.opts.Lister.ListUnboundPods(ctx)
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	var pending []*v1.Pod
	for _, p := range unbound {
		if p.Spec.NodeName != "" || p.DeletionTimestamp != nil || len(p.Spec.SchedulingGates) > 0 ||
			(p.Spec.SchedulerName != "" && p.Spec.SchedulerName != Name) ||
			p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		pending = append(pending, p)
	}
	if len(s.unschedulable) > 0 {
		live := map[string]bool{}
		for _, p := range pending {
			live[string(p.UID)] = true
		}
		for uid := range s.unschedulable {
			if !live[uid] {
				delete(s.unschedulable, uid) // bound, deleted or no longer ours
			}
		}
	}
	if len(pending) == 0 {
		return nil
	}
	// Only with a pod to place are the nodes read: an idle pass costs what waits, not the fleet.
	nodes, err := s.opts.Lister.ListNodes(ctx)
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	// Only with a pod to place are the bound pods read: what they use is the scheduler cache's
	// NodeInfo.
	cc, err := s.clusterState(ctx, nodes)
	if err != nil {
		return err
	}
	used := cc.used
	// PrioritySort: higher priority first, then the older pod.
	sort.Slice(pending, func(i, j int) bool {
		a, b := pending[i], pending[j]
		pa, pb := priority(a), priority(b)
		if pa != pb {
			return pa > pb
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return podkey.Of(a) < podkey.Of(b)
	})
	now := s.opts.Clock.Now()
	var errs []error
	fp := cc.fp
	for _, pod := range pending {
		if a, ok := s.unschedulable[string(pod.UID)]; ok && a.fingerprint == fp && now.Before(a.at.Add(RetryPeriod)) {
			continue
		}
		node, msg, rejected := s.schedule(ctx, pod, nodes, used)
		if node == "" {
			s.unschedulable[string(pod.UID)] = attempt{at: now, fingerprint: fp}
			errs = append(errs, s.fail(ctx, pod, msg, rejected))
			continue
		}
		delete(s.unschedulable, string(pod.UID))
		if err := s.bind(ctx, pod, node); err != nil {
			errs = append(errs, err)
			continue
		}
		add(used, node, pod)
		cc.counted = append(cc.counted, node)
		fp = cc.refresh(nodes, []string{node})
	}
	return errors.Join(errs...)
}

// clusterState returns what the bound pods use and the cluster's fingerprint: made anew from
// every pod and node without Options.Changes (or when they cannot tell what changed), and
// otherwise the kept ones brought up to date from the nodes and the nodes' pods that changed.
// The result is the pass's own to change; nodes are in name order.
func (s *Scheduler) clusterState(ctx context.Context, nodes []*v1.Node) (*clusterCache, error) {
	var changedNodes, podNodes []string
	allNodes, allPods := true, true
	if s.opts.Changes != nil {
		var err error
		if changedNodes, allNodes, err = s.opts.Changes.ChangedNodes(ctx); err != nil {
			s.cache = nil
			return nil, fmt.Errorf("changed nodes: %w", err)
		}
		if podNodes, allPods, err = s.opts.Changes.ChangedPodNodes(ctx); err != nil {
			s.cache = nil
			return nil, fmt.Errorf("changed pods: %w", err)
		}
	}
	cc := s.cache
	if cc == nil || allPods {
		pods, err := s.opts.Lister.ListPods(ctx)
		if err != nil {
			s.cache = nil
			return nil, fmt.Errorf("list pods: %w", err)
		}
		used := map[string]usage{}
		for _, p := range pods {
			if counts(p) {
				add(used, p.Spec.NodeName, p)
			}
		}
		cc = &clusterCache{used: used}
		allNodes = true
	} else {
		if len(cc.counted) > 0 {
			podNodes = append(podNodes, cc.counted...)
			slices.Sort(podNodes)
			podNodes = slices.Compact(podNodes)
			cc.counted = cc.counted[:0]
		}
		for _, name := range podNodes {
			pods, err := s.opts.Lister.ListPodsOnNode(ctx, name)
			if err != nil {
				s.cache = nil
				return nil, fmt.Errorf("list pods of node %s: %w", name, err)
			}
			delete(cc.used, name)
			for _, p := range pods {
				if p.Spec.NodeName == name && counts(p) {
					add(cc.used, name, p)
				}
			}
		}
	}
	if allNodes {
		cc.pieces, cc.names = nil, nil
		cc.refresh(nodes, nil)
	} else {
		cc.refresh(nodes, append(changedNodes, podNodes...))
	}
	if s.opts.Changes != nil {
		s.cache = cc
	}
	return cc, nil
}

// counts reports whether a pod counts in what its node's pods use: bound and not terminated.
func counts(p *v1.Pod) bool {
	return p.Spec.NodeName != "" && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed
}

// add counts pod in what node's pods use.
func add(used map[string]usage, node string, pod *v1.Pod) {
	u := used[node]
	if u.requests == nil {
		u.requests = v1.ResourceList{}
	}
	u.pods++
	addTo(u.requests, podRequests(pod))
	used[node] = u
}

// refresh brings the fingerprint up to date with nodes (in name order) and cc.used, making again
// the parts of the nodes named in changed, of the nodes it has none for, and all of them when
// pieces is nil; the whole is made again only when a part or the nodes changed. It returns the
// fingerprint.
func (cc *clusterCache) refresh(nodes []*v1.Node, changed []string) string {
	// Without parts the fingerprint is made anew, even of no node: the kept one is of nodes that
	// may be gone.
	moved := cc.pieces == nil || len(cc.names) != len(nodes)
	if cc.pieces == nil {
		cc.pieces = make(map[string]string, len(nodes))
	}
	for i, n := range nodes {
		if !moved && cc.names[i] != n.Name {
			moved = true
		}
		if _, ok := cc.pieces[n.Name]; !ok {
			cc.pieces[n.Name] = fingerprintOf(n, cc.used[n.Name])
			moved = true
		}
	}
	byName := map[string]*v1.Node{}
	if len(changed) > 0 {
		for _, n := range nodes {
			byName[n.Name] = n
		}
	}
	for _, name := range changed {
		n, ok := byName[name]
		if !ok {
			continue
		}
		if piece := fingerprintOf(n, cc.used[name]); piece != cc.pieces[name] {
			cc.pieces[name] = piece
			moved = true
		}
	}
	if !moved {
		return cc.fp
	}
	if len(cc.pieces) > len(nodes) {
		// A node is gone: its part goes with it.
		keep := make(map[string]bool, len(nodes))
		for _, n := range nodes {
			keep[n.Name] = true
		}
		for name := range cc.pieces {
			if !keep[name] {
				delete(cc.pieces, name)
			}
		}
	}
	var b strings.Builder
	cc.names = cc.names[:0]
	for _, n := range nodes {
		b.WriteString(cc.pieces[n.Name])
		cc.names = append(cc.names, n.Name)
	}
	cc.fp = b.String()
	return cc.fp
}

// schedule picks the node for pod, or returns the FitError message and whether the pod was
// rejected by the filters (reason Unschedulable) rather than by an error (SchedulerError).
func (s *Scheduler) schedule(ctx context.Context, pod *v1.Pod, nodes []*v1.Node, used map[string]usage) (string, string, bool) {
	if len(nodes) == 0 {
		return "", noNodesMessage, false
	}
	best, bestScore := "", -1.0
	reasons := map[string]int{}
	notHelpful, noVictims := 0, 0
	for _, n := range nodes {
		v := filter(ctx, pod, n, used[n.Name])
		if len(v.reasons) > 0 {
			for _, r := range v.reasons {
				reasons[r]++
			}
			if v.resolvable {
				noVictims++
			} else {
				notHelpful++
			}
			continue
		}
		if score := freeShare(pod, n, used[n.Name]); score > bestScore {
			best, bestScore = n.Name, score
		}
	}
	if best != "" {
		return best, "", true
	}
	return "", fitError(len(nodes), reasons, notHelpful, noVictims), true
}

// fitError is FitError.Error with the default preemption's PostFilter message appended: nodes
// that failed only on resources have no victims to preempt here, the others are not helped by
// preemption.
func fitError(all int, reasons map[string]int, notHelpful, noVictims int) string {
	msg := fmt.Sprintf("0/%d nodes are available: %s.", all, histogram(reasons))
	post := map[string]int{}
	if notHelpful > 0 {
		post["Preemption is not helpful for scheduling"] = notHelpful
	}
	if noVictims > 0 {
		post["No preemption victims found for incoming pod"] = noVictims
	}
	return msg + fmt.Sprintf(" preemption: 0/%d nodes are available: %s.", all, histogram(post))
}

func histogram(reasons map[string]int) string {
	out := make([]string, 0, len(reasons))
	for r, n := range reasons {
		out = append(out, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// bind is the DefaultBinder's Bind, then the Scheduled event.
func (s *Scheduler) bind(ctx context.Context, pod *v1.Pod, node string) error {
	key := podkey.Of(pod)
	b := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: node},
	}
	if err := s.opts.Writer.Bind(ctx, b); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil // deleted or bound meanwhile; the next Sync sees which
		}
		return fmt.Errorf("bind pod %s to %s: %w", key, node, err)
	}
	klog.FromContext(ctx).V(2).Info("Successfully bound pod to node", "pod", klog.KObj(pod), "node", node)
	s.opts.Tracer.Emit(trace.Event{Component: trace.Scheduler, Event: trace.KindBind, Pod: key, UID: string(pod.UID), To: node, Func: "bind"})
	if s.opts.Recorder != nil {
		s.opts.Recorder.Eventf(pod, v1.EventTypeNormal, "Scheduled", "Successfully assigned %v/%v to %v", pod.Namespace, pod.Name, node)
	}
	return nil
}

// fail is handleSchedulingFailure: the FailedScheduling event and the PodScheduled condition.
func (s *Scheduler) fail(ctx context.Context, pod *v1.Pod, msg string, rejected bool) error {
	key := podkey.Of(pod)
	reason := v1.PodReasonSchedulerError
	if rejected {
		reason = v1.PodReasonUnschedulable
	}
	klog.FromContext(ctx).V(2).Info("Unable to schedule pod; no fit; waiting", "pod", klog.KObj(pod), "err", msg)
	s.opts.Tracer.Emit(trace.Event{Component: trace.Scheduler, Event: trace.KindUnschedulable, Pod: key, UID: string(pod.UID),
		Reason: reason, Message: msg, Func: "handleSchedulingFailure"})
	if s.opts.Recorder != nil {
		s.opts.Recorder.Event(pod, v1.EventTypeWarning, "FailedScheduling", msg)
	}
	next := pod.DeepCopy()
	if !apidefaults.UpdatePodCondition(&next.Status, v1.PodCondition{Type: v1.PodScheduled, ObservedGeneration: pod.Generation,
		Status: v1.ConditionFalse, Reason: reason, Message: msg}, s.opts.Clock.Now()) {
		return nil
	}
	if _, err := s.opts.Writer.UpdatePodStatus(ctx, next); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("update status of pod %s: %w", key, err)
	}
	return nil
}

func priority(p *v1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// fingerprintOf is one node's part of the fingerprint, which sums up what decides whether a pod
// fits: the nodes' names, labels, taints, unschedulable flags and allocatable, and what their
// pods use. A failed pod is tried again when it changes, as the scheduling queue moves a pod back
// on a cluster event that may make it fit. The fingerprint is the nodes' parts in name order
// (clusterCache.refresh).
func fingerprintOf(n *v1.Node, u usage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%v|%v|%v|", n.Name, n.Labels, n.Spec.Unschedulable, len(n.Spec.Taints))
	for _, t := range n.Spec.Taints {
		fmt.Fprintf(&b, "%s,", t.ToString())
	}
	names := make([]string, 0, len(n.Status.Allocatable))
	for name, q := range n.Status.Allocatable {
		names = append(names, fmt.Sprintf("%s=%s", name, q.String()))
	}
	sort.Strings(names)
	fmt.Fprintf(&b, "%v|%d|", names, u.pods)
	req := make([]string, 0, len(u.requests))
	for name, q := range u.requests {
		req = append(req, fmt.Sprintf("%s=%s", name, q.String()))
	}
	sort.Strings(req)
	fmt.Fprintf(&b, "%v;", req)
	return b.String()
}
