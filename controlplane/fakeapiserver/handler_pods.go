package fakeapiserver

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/minikubelet/minikubelet/api/apidefaults"
	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// defaultGracePeriod is spec.terminationGracePeriodSeconds when a pod does not set it.
const defaultGracePeriod int64 = 30

// preparePodCreate is the pod registry's create strategy: the API server owns the status, which
// starts Pending, and the first generation is 1.
func preparePodCreate(obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	apidefaults.SetPodDefaults(pod)
	pod.Generation = 1
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: apidefaults.ComputeQOSClass(pod)}
}

// preparePodUpdate is the pod registry's update strategy: an update of the pod keeps the status,
// bumps the generation when the spec changes, and may change only the mutable spec fields, as
// ValidatePodUpdate allows them.
func preparePodUpdate(oldObj, newObj runtime.Object) field.ErrorList {
	oldPod, newPod := oldObj.(*corev1.Pod), newObj.(*corev1.Pod)
	apidefaults.SetPodDefaults(newPod)
	admitPodUpdate(oldPod, newPod)
	newPod.Status = *oldPod.Status.DeepCopy()
	if equality.Semantic.DeepEqual(oldPod.Spec, newPod.Spec) {
		return nil
	}
	if errs := validatePodSpecUpdate(&newPod.Spec, &oldPod.Spec); len(errs) > 0 {
		return errs
	}
	newPod.Generation = oldPod.Generation + 1
	return nil
}

// updatablePodSpecFields is the list kube-apiserver names in its Forbidden message, in its words
// and order (scheduling gates are allowed but not listed there).
var updatablePodSpecFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

// validatePodSpecUpdate is the spec part of ValidatePodUpdate, in its order: containers may not
// come or go and their images must be set without surrounding spaces; activeDeadlineSeconds may
// be set or lowered but not raised or removed; tolerations may be added, and an existing one may
// change only its tolerationSeconds; scheduling gates may only be removed; a negative
// terminationGracePeriodSeconds may become 1. Any other difference is Forbidden with the
// server's message and a diff of the specs.
func validatePodSpecUpdate(newSpec, oldSpec *corev1.PodSpec) field.ErrorList {
	specPath := field.NewPath("spec")
	var errs field.ErrorList
	for _, list := range []struct {
		path     *field.Path
		old, new []corev1.Container
	}{
		{specPath.Child("containers"), oldSpec.Containers, newSpec.Containers},
		{specPath.Child("initContainers"), oldSpec.InitContainers, newSpec.InitContainers},
	} {
		if len(list.new) != len(list.old) {
			return append(errs, field.Forbidden(list.path, "pod updates may not add or remove containers"))
		}
		for i, c := range list.new {
			if c.Image == "" {
				errs = append(errs, field.Required(list.path.Index(i).Child("image"), ""))
			}
			if strings.TrimSpace(c.Image) != c.Image {
				errs = append(errs, field.Invalid(list.path.Index(i).Child("image"), c.Image, "must not have leading or trailing whitespace"))
			}
		}
	}
	ads := specPath.Child("activeDeadlineSeconds")
	switch n, o := newSpec.ActiveDeadlineSeconds, oldSpec.ActiveDeadlineSeconds; {
	case n != nil && (*n < 0 || *n > math.MaxInt32):
		return append(errs, field.Invalid(ads, *n, validation.InclusiveRangeError(0, math.MaxInt32)))
	case n != nil && o != nil && *o < *n:
		return append(errs, field.Invalid(ads, *n, "must be less than or equal to previous value"))
	case n == nil && o != nil:
		errs = append(errs, field.Invalid(ads, n, "must not update from a positive integer to nil value"))
	}
	for _, old := range oldSpec.Tolerations {
		found := false
		for _, t := range newSpec.Tolerations {
			clone := old
			clone.TolerationSeconds = t.TolerationSeconds
			if equality.Semantic.DeepEqual(clone, t) {
				found = true
				break
			}
		}
		if !found {
			errs = append(errs, field.Forbidden(specPath.Child("tolerations"), "existing toleration can not be modified except its tolerationSeconds"))
			break
		}
	}
	for i, g := range newSpec.SchedulingGates {
		if !slices.ContainsFunc(oldSpec.SchedulingGates, func(o corev1.PodSchedulingGate) bool { return o.Name == g.Name }) {
			errs = append(errs, field.Forbidden(specPath.Child("schedulingGates").Index(i).Child("name"),
				fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", g.Name)))
		}
	}
	// Put back what may change; whatever still differs was not allowed.
	munged := newSpec.DeepCopy()
	for i := range munged.Containers {
		munged.Containers[i].Image = oldSpec.Containers[i].Image
	}
	for i := range munged.InitContainers {
		munged.InitContainers[i].Image = oldSpec.InitContainers[i].Image
	}
	munged.ActiveDeadlineSeconds = oldSpec.ActiveDeadlineSeconds
	munged.SchedulingGates = oldSpec.SchedulingGates
	munged.Tolerations = oldSpec.Tolerations
	if o, n := oldSpec.TerminationGracePeriodSeconds, munged.TerminationGracePeriodSeconds; o != nil && *o < 0 && n != nil && *n == 1 {
		munged.TerminationGracePeriodSeconds = o
	}
	if !equality.Semantic.DeepEqual(*munged, *oldSpec) {
		errs = append(errs, field.Forbidden(specPath, fmt.Sprintf("pod updates may not change fields other than %s\n%v",
			strings.Join(updatablePodSpecFields, ","), diff.Diff(*oldSpec, *munged))))
	}
	return errs
}

// deletePod applies graceful deletion as the generic registry does for pods (rest.BeforeDelete
// with the pod strategy's CheckGracefulDelete). A first delete writes deletionTimestamp =
// now + grace and deletionGracePeriodSeconds, and bumps the generation; the grace is the
// request's, else the spec's, and 0 for an unbound pod or one in a terminal phase. A later
// delete may only shorten it: the deadline becomes the first delete's time plus the new grace
// (now, with grace 1s, if that is already past), and the generation stays. Either way a grace of
// 0 writes the pod with its deletionTimestamp first (watchers see it MODIFIED) and then removes
// it; a pod whose deletion grace is already 0 is removed at once. Finalizers are not honoured. The
// caller holds the store lock.
func (s *Server) deletePod(t target, old *entry, opts metav1.DeleteOptions, dryRun bool) (*entry, bool, error) {
	pod := old.obj.(*corev1.Pod)
	now := s.now().Time
	next := pod.DeepCopy()
	var grace int64
	switch {
	case pod.DeletionTimestamp != nil && (pod.DeletionGracePeriodSeconds == nil || *pod.DeletionGracePeriodSeconds <= 0):
		return s.removePod(t, old, dryRun)
	case pod.DeletionTimestamp != nil:
		current := *pod.DeletionGracePeriodSeconds
		if opts.GracePeriodSeconds == nil {
			return old, false, nil // a graceful deletion is pending
		}
		grace = max(*opts.GracePeriodSeconds, -1)
		if grace < 0 {
			grace = 1
		}
		if grace >= current {
			return old, false, nil
		}
		deadline := pod.DeletionTimestamp.Add(time.Duration(grace-current) * time.Second)
		if deadline.Before(now) {
			deadline = now
			if grace != 0 {
				grace = 1
			}
		}
		ts := metav1.NewTime(deadline)
		next.DeletionTimestamp = &ts
	default:
		grace = defaultGracePeriod
		if pod.Spec.TerminationGracePeriodSeconds != nil {
			grace = *pod.Spec.TerminationGracePeriodSeconds
		}
		if opts.GracePeriodSeconds != nil {
			grace = *opts.GracePeriodSeconds
		}
		if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			grace = 0
		}
		if grace < 0 {
			grace = 1
		}
		ts := metav1.NewTime(now.Add(time.Duration(grace) * time.Second))
		next.DeletionTimestamp = &ts
		if next.Generation > 0 {
			next.Generation++
		}
	}
	next.DeletionGracePeriodSeconds = &grace
	if dryRun {
		e, err := dryRunEntry(t.res, next)
		return e, grace == 0, err
	}
	e, err := s.store.commit(t.res, watch.Modified, next, old)
	if err != nil {
		return nil, false, err
	}
	s.tracePod(t, trace.KindDeleting, "DELETE", e.obj)
	if grace > 0 {
		return e, false, nil
	}
	return s.removePod(t, e, false)
}

// removePod removes the pod from the store: the generic registry's final delete.
func (s *Server) removePod(t target, old *entry, dryRun bool) (*entry, bool, error) {
	if dryRun {
		return old, true, nil
	}
	e, err := s.store.commit(t.res, watch.Deleted, old.obj.DeepCopyObject(), old)
	if err != nil {
		return nil, false, err
	}
	s.tracePod(t, trace.KindDelete, "DELETE", e.obj)
	return e, true, nil
}

// tracePod records the trace event of a pod write; writes to other resources are not traced.
// The caller holds the store lock, which emits the event once it is released, in
// resource-version order (store.unlock).
func (s *Server) tracePod(t target, event trace.Kind, verb string, obj runtime.Object) {
	if t.res.name != "pods" {
		return
	}
	m := mustMeta(obj)
	fn := verb + " pods"
	if t.subresource != "" {
		fn += "/" + t.subresource
	}
	s.store.traceLater(trace.Event{
		Component: trace.APIServer,
		Event:     event,
		Pod:       podkey.Build(m.GetNamespace(), m.GetName()),
		UID:       string(m.GetUID()),
		Func:      fn,
	})
}
