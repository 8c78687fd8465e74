package fakeapiserver

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/minikubelet/minikubelet/apidefaults"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/trace"
)

// defaultGracePeriod is spec.terminationGracePeriodSeconds when a pod does not set it.
const defaultGracePeriod int64 = 30

// preparePodCreate is the pod registry's create strategy: the API server owns the status, which
// starts Pending, and the first generation is 1.
func preparePodCreate(obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	apidefaults.SetPodDefaults(pod)
	pod.Generation = 1
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: apidefaults.QOSClass(pod)}
}

// preparePodUpdate is the pod registry's update strategy: an update of the pod keeps the status,
// bumps the generation when the spec changes, and may change only the mutable spec fields.
func preparePodUpdate(oldObj, newObj runtime.Object) field.ErrorList {
	oldPod, newPod := oldObj.(*corev1.Pod), newObj.(*corev1.Pod)
	apidefaults.SetPodDefaults(newPod)
	newPod.Status = *oldPod.Status.DeepCopy()
	if equality.Semantic.DeepEqual(oldPod.Spec, newPod.Spec) {
		return nil
	}
	// Take the old spec, carry over what may change, and whatever still differs was not allowed.
	allowed := oldPod.Spec.DeepCopy()
	if len(allowed.Containers) == len(newPod.Spec.Containers) {
		for i := range allowed.Containers {
			allowed.Containers[i].Image = newPod.Spec.Containers[i].Image
		}
	}
	if len(allowed.InitContainers) == len(newPod.Spec.InitContainers) {
		for i := range allowed.InitContainers {
			allowed.InitContainers[i].Image = newPod.Spec.InitContainers[i].Image
		}
	}
	allowed.ActiveDeadlineSeconds = newPod.Spec.ActiveDeadlineSeconds
	allowed.Tolerations = newPod.Spec.Tolerations
	allowed.SchedulingGates = newPod.Spec.SchedulingGates
	if !equality.Semantic.DeepEqual(*allowed, newPod.Spec) {
		return field.ErrorList{field.Forbidden(field.NewPath("spec"),
			"pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, "+
				"`spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations) and `spec.schedulingGates`")}
	}
	newPod.Generation = oldPod.Generation + 1
	return nil
}

// deletePod applies graceful deletion. A pod bound to a node gets a deletionTimestamp grace
// seconds ahead and stays until deleted with a zero grace period (the kubelet's confirmation);
// an unbound pod, a pod in a terminal phase, or a zero grace period removes it at once. A second
// graceful delete can only shorten the grace period. Finalizers are not honoured. The caller
// holds the store lock.
func (s *Server) deletePod(t target, old *entry, opts metav1.DeleteOptions, dryRun bool) (*entry, bool, error) {
	pod := old.obj.(*corev1.Pod)
	grace := defaultGracePeriod
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	if opts.GracePeriodSeconds != nil {
		grace = *opts.GracePeriodSeconds
	}
	if grace < 0 {
		grace = 1
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		grace = 0
	}
	if grace == 0 {
		if dryRun {
			return old, true, nil
		}
		e, err := s.store.commit(t.res, watch.Deleted, pod.DeepCopy(), old)
		if err == nil {
			s.tracePod(t, trace.KindDelete, "DELETE", e.obj)
		}
		return e, true, err
	}
	deadline := s.now().Add(time.Duration(grace) * time.Second)
	if pod.DeletionTimestamp != nil {
		if pod.DeletionGracePeriodSeconds != nil && grace >= *pod.DeletionGracePeriodSeconds {
			return old, false, nil
		}
		if pod.DeletionTimestamp.Time.Before(deadline) {
			deadline = pod.DeletionTimestamp.Time
		}
	}
	next := pod.DeepCopy()
	ts := metav1.NewTime(deadline)
	next.DeletionTimestamp = &ts
	next.DeletionGracePeriodSeconds = &grace
	next.Generation++
	if dryRun {
		e, err := dryRunEntry(t.res, next)
		return e, false, err
	}
	e, err := s.store.commit(t.res, watch.Modified, next, old)
	if err == nil {
		s.tracePod(t, trace.KindDeleting, "DELETE", e.obj)
	}
	return e, false, err
}

// tracePod emits the trace event of a pod write; writes to other resources are not traced. The
// caller holds the store lock, so events come out in resource-version order.
func (s *Server) tracePod(t target, event trace.Kind, verb string, obj runtime.Object) {
	if t.res.name != "pods" {
		return
	}
	m := mustMeta(obj)
	fn := verb + " pods"
	if t.subresource != "" {
		fn += "/" + t.subresource
	}
	s.tracer.Emit(trace.Event{
		Component: trace.APIServer,
		Event:     event,
		Pod:       kubecontainer.BuildPodKey(m.GetNamespace(), m.GetName()),
		UID:       string(m.GetUID()),
		Func:      fn,
	})
}
