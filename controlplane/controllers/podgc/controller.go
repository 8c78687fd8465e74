package podgc

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/api/apidefaults"
	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// The collector's constants and default in v1.35.
const (
	CheckPeriod    = 20 * time.Second // gcCheckPeriod
	QuarantineTime = 40 * time.Second // quarantineTime: how long a node may be missing before its pods go
	// DefaultTerminatedPodThreshold is --terminated-pod-gc-threshold.
	DefaultTerminatedPodThreshold = 12500
)

// The reasons a pod is collected, as the collector's deleting_pods_total metric names them; the
// trace carries them.
const (
	ReasonTerminated              = "terminated"
	ReasonTerminatingOutOfService = "out-of-service"
	ReasonOrphaned                = "orphaned"
	ReasonTerminatingUnscheduled  = "unscheduled"
)

// Lister is what the collector reads. Errors are the API's.
type Lister interface {
	ListNodes(ctx context.Context) ([]*v1.Node, error)
	ListPods(ctx context.Context) ([]*v1.Pod, error)
}

// Writer is what the collector writes.
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
	// Tracer receives one event per deleted pod. Required.
	Tracer trace.Tracer
	// TerminatedPodThreshold is how many terminated pods may stay; zero means
	// DefaultTerminatedPodThreshold and a negative value keeps them all.
	TerminatedPodThreshold int
}

// Controller is the pod garbage collector. Its zero value is not usable; call New.
type Controller struct {
	opts Options
	next time.Time
	// quarantine holds each missing node and when it may be taken as deleted: the real
	// collector's delaying node queue.
	quarantine map[string]time.Time
}

// New returns a Controller whose first pass is due at once.
func New(opts Options) (*Controller, error) {
	if opts.Clock == nil || opts.Lister == nil || opts.Writer == nil || opts.Tracer == nil {
		return nil, fmt.Errorf("pod garbage collector: clock, lister, writer and tracer: %w", minikubelet.ErrMissingOption)
	}
	if opts.TerminatedPodThreshold == 0 {
		opts.TerminatedPodThreshold = DefaultTerminatedPodThreshold
	}
	return &Controller{opts: opts, quarantine: map[string]time.Time{}}, nil
}

// NextWake returns when the next pass is due, and false before the first pass has set it.
func (c *Controller) NextWake() (time.Time, bool) { return c.next, !c.next.IsZero() }

// Sync runs a pass when one is due, and does nothing otherwise.
func (c *Controller) Sync(ctx context.Context) error {
	now := c.opts.Clock.Now()
	if now.Before(c.next) {
		return nil
	}
	c.next = now.Add(CheckPeriod)
	pods, err := c.opts.Lister.ListPods(ctx)
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	nodes, err := c.opts.Lister.ListNodes(ctx)
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	sort.Slice(pods, func(i, j int) bool { return podkey.Of(pods[i]) < podkey.Of(pods[j]) })
	byName := map[string]*v1.Node{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	var errs []error
	if c.opts.TerminatedPodThreshold > 0 {
		errs = append(errs, c.gcTerminated(ctx, pods))
	}
	errs = append(errs, c.gcTerminating(ctx, pods, byName), c.gcOrphaned(ctx, pods, byName, now), c.gcUnscheduledTerminating(ctx, pods))
	return errors.Join(errs...)
}

func (c *Controller) gcTerminated(ctx context.Context, pods []*v1.Pod) error {
	var terminated []*v1.Pod
	for _, p := range pods {
		if p.Status.Phase != v1.PodPending && p.Status.Phase != v1.PodRunning && p.Status.Phase != v1.PodUnknown {
			terminated = append(terminated, p)
		}
	}
	n := len(terminated) - c.opts.TerminatedPodThreshold
	if n <= 0 {
		return nil
	}
	klog.FromContext(ctx).V(2).Info("Garbage collecting pods", "numPods", n)
	sortByEvictionAndCreation(terminated)
	var errs []error
	for _, p := range terminated[:n] {
		errs = append(errs, c.markFailedAndDelete(ctx, p, nil, ReasonTerminated))
	}
	return errors.Join(errs...)
}

func (c *Controller) gcTerminating(ctx context.Context, pods []*v1.Pod, nodes map[string]*v1.Node) error {
	var terminating []*v1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			continue
		}
		node, ok := nodes[p.Spec.NodeName]
		if !ok {
			continue // the real collector logs "Failed to get node" and goes on
		}
		if !nodeReady(node) && hasTaintKey(node, v1.TaintNodeOutOfService) {
			terminating = append(terminating, p)
		}
	}
	sortByEvictionAndCreation(terminating)
	var errs []error
	for _, p := range terminating {
		errs = append(errs, c.markFailedAndDelete(ctx, p, nil, ReasonTerminatingOutOfService))
	}
	return errors.Join(errs...)
}

func (c *Controller) gcOrphaned(ctx context.Context, pods []*v1.Pod, nodes map[string]*v1.Node, now time.Time) error {
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			continue
		}
		if _, ok := nodes[p.Spec.NodeName]; !ok {
			if _, waiting := c.quarantine[p.Spec.NodeName]; !waiting {
				c.quarantine[p.Spec.NodeName] = now.Add(QuarantineTime)
			}
		}
	}
	deleted := map[string]bool{}
	for name, at := range c.quarantine {
		if at.After(now) {
			continue
		}
		delete(c.quarantine, name)
		if _, ok := nodes[name]; !ok {
			deleted[name] = true
		}
	}
	var errs []error
	for _, p := range pods {
		if !deleted[p.Spec.NodeName] {
			continue
		}
		klog.FromContext(ctx).V(2).Info("Found orphaned Pod assigned to the Node, deleting", "pod", klog.KObj(p), "node", klog.KRef("", p.Spec.NodeName))
		cond := &v1.PodCondition{Type: v1.DisruptionTarget, ObservedGeneration: p.Generation, Status: v1.ConditionTrue,
			Reason: "DeletionByPodGC", Message: "PodGC: node no longer exists"}
		errs = append(errs, c.markFailedAndDelete(ctx, p, cond, ReasonOrphaned))
	}
	return errors.Join(errs...)
}

func (c *Controller) gcUnscheduledTerminating(ctx context.Context, pods []*v1.Pod) error {
	var errs []error
	for _, p := range pods {
		if p.DeletionTimestamp == nil || p.Spec.NodeName != "" {
			continue
		}
		errs = append(errs, c.markFailedAndDelete(ctx, p, nil, ReasonTerminatingUnscheduled))
	}
	return errors.Join(errs...)
}

// markFailedAndDelete is markFailedAndDeletePodWithCondition: a pod not yet terminal is marked
// Failed (with cond, when given), then deleted with grace period 0.
func (c *Controller) markFailedAndDelete(ctx context.Context, pod *v1.Pod, cond *v1.PodCondition, reason string) error {
	key := podkey.Of(pod)
	klog.FromContext(ctx).V(2).Info("PodGC is force deleting Pod", "pod", klog.KObj(pod))
	if pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed {
		next := pod.DeepCopy()
		next.Status.Phase = v1.PodFailed
		next.Status.ObservedGeneration = pod.Generation
		if cond != nil {
			apidefaults.UpdatePodCondition(&next.Status, *cond, c.opts.Clock.Now())
		}
		if _, err := c.opts.Writer.UpdatePodStatus(ctx, next); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("mark pod %s failed: %w", key, err)
		}
	}
	zero := int64(0)
	if err := c.opts.Writer.DeletePod(ctx, pod.Namespace, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete pod %s: %w", key, err)
	}
	c.opts.Tracer.Emit(trace.Event{Component: trace.PodGC, Event: trace.KindDelete, Pod: key, UID: string(pod.UID), Reason: reason,
		Func: "markFailedAndDeletePodWithCondition"})
	return nil
}

// sortByEvictionAndCreation is byEvictionAndCreationTimestamp: evicted pods first, then the
// oldest, then by name.
func sortByEvictionAndCreation(pods []*v1.Pod) {
	evicted := func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed && p.Status.Reason == "Evicted" }
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if evicted(a) != evicted(b) {
			return evicted(a)
		}
		if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.Name < b.Name
		}
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	})
}

func nodeReady(n *v1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func hasTaintKey(n *v1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
