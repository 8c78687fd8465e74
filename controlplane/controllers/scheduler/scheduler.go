package scheduler

import (
	"context"
	"errors"
	"fmt"
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
	// Only with a pod to place are the bound pods read: what they use is the scheduler cache's
	// NodeInfo.
	pods, err := s.opts.Lister.ListPods(ctx)
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	used := map[string]usage{}
	for _, p := range pods {
		if p.Spec.NodeName == "" || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		u := used[p.Spec.NodeName]
		if u.requests == nil {
			u.requests = v1.ResourceList{}
		}
		u.pods++
		addTo(u.requests, podRequests(p))
		used[p.Spec.NodeName] = u
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
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
	fp := fingerprint(nodes, used)
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
		u := used[node]
		if u.requests == nil {
			u.requests = v1.ResourceList{}
		}
		u.pods++
		addTo(u.requests, podRequests(pod))
		used[node] = u
		fp = fingerprint(nodes, used)
	}
	return errors.Join(errs...)
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

// fingerprint sums up what decides whether a pod fits: the nodes' names, labels, taints,
// unschedulable flags and allocatable, and what their pods use. A failed pod is tried again when
// it changes, as the scheduling queue moves a pod back on a cluster event that may make it fit.
func fingerprint(nodes []*v1.Node, used map[string]usage) string {
	var b strings.Builder
	for _, n := range nodes {
		fmt.Fprintf(&b, "%s|%v|%v|%v|", n.Name, n.Labels, n.Spec.Unschedulable, len(n.Spec.Taints))
		for _, t := range n.Spec.Taints {
			fmt.Fprintf(&b, "%s,", t.ToString())
		}
		names := make([]string, 0, len(n.Status.Allocatable))
		for name, q := range n.Status.Allocatable {
			names = append(names, fmt.Sprintf("%s=%s", name, q.String()))
		}
		sort.Strings(names)
		u := used[n.Name]
		fmt.Fprintf(&b, "%v|%d|", names, u.pods)
		req := make([]string, 0, len(u.requests))
		for name, q := range u.requests {
			req = append(req, fmt.Sprintf("%s=%s", name, q.String()))
		}
		sort.Strings(req)
		fmt.Fprintf(&b, "%v;", req)
	}
	return b.String()
}
