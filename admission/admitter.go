package admission

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/api/apidefaults"
)

// Devices is the device manager's resource allocation admit handler.
type Devices interface {
	// Admit allocates the pod's devices, or says why it cannot.
	Admit(ctx context.Context, pod *v1.Pod) (ok bool, reason, message string)
	// RemovePods frees the devices of every pod whose UID is not in active. It must not keep
	// or change active: the map is the Admitter's own.
	RemovePods(active map[string]bool)
}

// NodeFunc returns the node as the predicate handler sees it: the kubelet's getNodeAnyWay, the
// node object from the API server or, without one, the node the kubelet would register.
type NodeFunc func(ctx context.Context) (*v1.Node, error)

// KillFunc asks the pod workers to kill a pod with a status function applied to its final
// status: the kubelet's killPodNow, without its wait.
type KillFunc func(pod *v1.Pod, statusFn func(*v1.PodStatus))

// EventRecorder records one Kubernetes event about a pod.
type EventRecorder interface {
	Eventf(object runtime.Object, eventType, reason, messageFmt string, args ...any)
}

// ActivePods is the kubelet's GetActivePods as admission reads it: the pods that are not finished,
// terminating ones included.
type ActivePods interface {
	// Get returns the pod with uid if it is active.
	Get(uid types.UID) (*v1.Pod, bool)
	// All yields every active pod, in any order. The Admitter walks it once, at its first
	// admission; after that it is told of changes (Admitter.PodChanged).
	All() iter.Seq[*v1.Pod]
}

// StatusSetter is the status manager's SetPodStatus, which rejectPod calls.
type StatusSetter interface {
	SetPodStatus(pod *v1.Pod, status v1.PodStatus)
}

// Options configure an Admitter.
type Options struct {
	// Node is getNodeAnyWay. Required.
	Node NodeFunc
	// ActivePods are the pods a new pod is checked against. The Admitter keeps their counts and
	// must be told, through PodChanged, of every change to what Get answers. Required.
	ActivePods ActivePods
	// Kill kills the victims of a critical pod's preemption. Required.
	Kill KillFunc
	// Status receives the Failed status of a rejected pod. Required.
	Status StatusSetter
	// Devices is the device manager's handler. Nil is a node without device plugins.
	Devices Devices
	// Recorder receives the rejection and preemption events. Nil records none.
	Recorder EventRecorder
}

func (o Options) validate() error {
	var missing []string
	if o.Node == nil {
		missing = append(missing, "Node")
	}
	if o.ActivePods == nil {
		missing = append(missing, "ActivePods")
	}
	if o.Kill == nil {
		missing = append(missing, "Kill")
	}
	if o.Status == nil {
		missing = append(missing, "Status")
	}
	if len(missing) > 0 {
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	return nil
}

// Admitter is the kubelet's canAdmitPod with the admit handlers minikubelet models, in the
// kubelet's order (the device manager's allocation, then the predicate handler with critical-pod
// preemption), and rejectPod for the pods they refuse.
//
// It keeps the active pods' count, requests and host ports (a usage) and updates them one pod at a
// time, from the UIDs PodChanged names, when a pod is next admitted.
type Admitter struct {
	opts Options
	// usage counts the active pods as of the last refresh; counted is false until the first
	// one, which counts every active pod.
	usage   *usage
	counted bool
	// changed are the UIDs whose share may have changed since the last refresh.
	changed map[types.UID]struct{}
}

// New returns an Admitter.
func New(opts Options) (*Admitter, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new admitter: %w", err)
	}
	return &Admitter{opts: opts, usage: newUsage(opts.Devices != nil), changed: map[types.UID]struct{}{}}, nil
}

// PodChanged tells the Admitter that something ActivePods.Get reads about the pod with uid may
// have changed: the pod manager added, replaced or removed it, its pod worker changed state, or
// the status manager cached or forgot its status. The pod is counted again at the next admission,
// when every component is between steps. The empty UID is the pod workers' "every pod without a
// worker" (their first SyncKnownPods): it names no pod, so the recount finds nothing under it and
// changes nothing, and nothing needs recounting, since what the active filter asks the workers of
// a pod without one (known terminated, termination requested) is "no" before and after.
func (a *Admitter) PodChanged(uid types.UID) {
	if a.counted {
		a.changed[uid] = struct{}{}
	}
}

// refresh brings the usage up to date: every active pod at the first call, the changed pods after.
func (a *Admitter) refresh() {
	if !a.counted {
		for p := range a.opts.ActivePods.All() {
			a.usage.set(p)
		}
		a.counted = true
		return
	}
	for uid := range a.changed {
		if pod, ok := a.opts.ActivePods.Get(uid); ok {
			a.usage.set(pod)
		} else {
			a.usage.remove(uid)
		}
	}
	clear(a.changed)
}

// Verify counts the active pods from scratch and reports how the kept counts differ, or nil when
// they agree. It walks every active pod: it is for tests and invariant checks.
func (a *Admitter) Verify() error {
	a.refresh()
	if d := a.usage.diff(usageOf(a.opts.ActivePods.All())); d != "" {
		return fmt.Errorf("admission's counts of the active pods differ from a recount: %s", d)
	}
	return nil
}

// Admit reports whether the pod may run: canAdmitPod, then rejectPod for a refused pod (a
// Warning event with the handler's reason and message, and the status Failed with "Pod was
// rejected: " and the message). Nothing retries it. Which pods are asked is HandlePodAdditions'
// choice, not admission's: the caller skips a pod that has finished or whose termination was
// requested, as the kubelet does before it calls the allocation manager's AddPod.
func (a *Admitter) Admit(ctx context.Context, pod *v1.Pod) bool {
	ok, reason, message := a.canAdmit(ctx, pod)
	if ok {
		return true
	}
	klog.FromContext(ctx).V(2).Info("Pod admission denied", "podUID", pod.UID, "pod", klog.KObj(pod), "reason", reason, "message", message)
	if a.opts.Recorder != nil {
		a.opts.Recorder.Eventf(pod, v1.EventTypeWarning, reason, "%s", message)
	}
	a.opts.Status.SetPodStatus(pod, v1.PodStatus{
		QOSClass: apidefaults.QOSClass(pod),
		Phase:    v1.PodFailed,
		Reason:   reason,
		Message:  "Pod was rejected: " + message,
	})
	return false
}

// canAdmit runs the handlers over the active pods other than pod; the first refusal wins.
func (a *Admitter) canAdmit(ctx context.Context, pod *v1.Pod) (bool, string, string) {
	a.refresh()
	if d := a.opts.Devices; d != nil {
		// The device manager's UpdateAllocatedDevices: devices of pods that are no longer
		// active are free again before the new pod's allocation. The new pod counts as active.
		uids, uid := a.usage.uids, string(pod.UID)
		counted := uids[uid]
		uids[uid] = true
		d.RemovePods(uids)
		if !counted {
			delete(uids, uid)
		}
		if ok, reason, message := d.Admit(ctx, pod); !ok {
			return false, reason, message
		}
	}
	return a.predicate(ctx, pod, a.usage.without(pod.UID))
}

// CanResize runs the predicate admit handler for pod, as a resize wants it, beside the other
// active pods, with no rejection: the allocation manager's canAdmitPod for a resize, whose
// refusal defers it. Devices are not asked: a resize changes only cpu and memory.
func (a *Admitter) CanResize(ctx context.Context, pod *v1.Pod) (bool, string, string) {
	a.refresh()
	return a.predicate(ctx, pod, a.usage.without(pod.UID))
}

// predicate is the predicate admit handler's Admit.
func (a *Admitter) predicate(ctx context.Context, pod *v1.Pod, others others) (bool, string, string) {
	logger := klog.FromContext(ctx)
	node, err := a.opts.Node(ctx)
	if err != nil {
		logger.Error(err, "Cannot get Node info")
		return false, ReasonInvalidNodeInfo, "Kubelet cannot get node info."
	}
	if reason, message, ok := preCheck(pod, node); !ok {
		return false, reason, message
	}
	failures := generalFilter(logger, pod, node, others)
	if len(failures) == 0 {
		return true, "", ""
	}
	failures, err = a.handleFailure(ctx, pod, failures)
	if err != nil {
		return false, ReasonUnexpectedAdmissionError, fmt.Sprintf("Unexpected error while attempting to recover from admission failure: %v", err)
	}
	if len(failures) == 0 {
		return true, "", ""
	}
	// Only the first failure is reported.
	return false, failures[0].Reason(), failures[0].Message()
}

// handleFailure is the CriticalPodAdmissionHandler: a pod that is not critical keeps its
// failures; a critical pod keeps only those that are not about resources, and when every one is,
// the pods chosen by podsToPreempt are killed and the pod is admitted.
func (a *Admitter) handleFailure(ctx context.Context, pod *v1.Pod, failures []Failure) ([]Failure, error) {
	if !IsCritical(pod) {
		return failures, nil
	}
	var other []Failure
	var needed requirements
	for _, f := range failures {
		if f.Insufficient() {
			needed = append(needed, requirement{f.Resource, f.shortfall()})
		} else {
			other = append(other, f)
		}
	}
	if len(other) > 0 {
		return other, nil
	}
	victims, err := podsToPreempt(pod, sortedPods(a.activePods()), needed)
	if err != nil {
		return nil, fmt.Errorf("preemption: error finding a set of pods to preempt: %w", err)
	}
	logger := klog.FromContext(ctx)
	for _, v := range victims {
		if a.opts.Recorder != nil {
			a.opts.Recorder.Eventf(v, v1.EventTypeWarning, ReasonPreempting, "%s", MessagePreempted)
		}
		logger.V(2).Info("Preempting pod to free up resources", "pod", klog.KObj(v), "podUID", v.UID,
			"insufficientResources", needed.String(), "requestingPod", klog.KObj(pod))
		a.opts.Kill(v, preemptionStatus(v))
	}
	return nil, nil
}

// activePods yields the active pods as last counted.
func (a *Admitter) activePods() iter.Seq[*v1.Pod] {
	return func(yield func(*v1.Pod) bool) {
		for _, s := range a.usage.pods {
			if !yield(s.pod) {
				return
			}
		}
	}
}

// sortedPods lists the pods by namespace and name. The kubelet walks its active pods in map order,
// which decides between victims that tie; here the order is the same on every run.
func sortedPods(pods iter.Seq[*v1.Pod]) []*v1.Pod {
	out := slices.Collect(pods)
	slices.SortFunc(out, func(a, b *v1.Pod) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return out
}
