package fakeapiserver

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// The admission kube-apiserver applies to what this server serves, with its default plugin set
// and no webhooks, no LimitRanges, ResourceQuotas, PriorityClasses or RuntimeClasses of the
// cluster's own (docs/fidelity.md says what that leaves out):
//
//   - NamespaceLifecycle (namespaces.go): no content in a missing or terminating namespace;
//   - ServiceAccount: a pod names service account "default" unless it names one, the service
//     account must exist, its token volume kube-api-access-* is mounted unless automounting is
//     off (tokenvolume.go), and its image pull secrets become the pod's unless the pod names
//     some; a mirror pod may not name one;
//   - Priority: a pod's priority comes from its priorityClassName, with the two built-in
//     classes, and is 0 (preempting lower priorities) without one;
//   - DefaultTolerationSeconds: a pod tolerates the not-ready and unreachable NoExecute taints
//     for 300 seconds unless it already tolerates them.

// Built-in priority classes, as kube-apiserver's scheduling bootstrap creates them.
const (
	systemNodeCritical            = "system-node-critical"
	systemClusterCritical         = "system-cluster-critical"
	systemCriticalPriority  int32 = 2000000000
	systemNodeCriticalValue       = systemCriticalPriority + 1000
)

// defaultTolerationSeconds is DefaultTolerationSeconds' default for both taints
// (--default-not-ready-toleration-seconds, --default-unreachable-toleration-seconds).
const defaultTolerationSeconds int64 = 300

// mirrorPodAnnotation marks a mirror pod (kubetypes.ConfigMirrorAnnotationKey).
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

// admitCreate runs the admission of a create, in kube-apiserver's plugin order: mutating plugins
// first, then validating ones. The caller holds the store lock.
func (s *Server) admitCreate(t target, obj runtime.Object) error {
	if err := s.admitNamespace(t, obj); err != nil {
		return err
	}
	if t.res.name == "pods" && t.subresource == "" {
		return s.admitPodCreate(t, obj.(*corev1.Pod))
	}
	return nil
}

// admitPodCreate is the ServiceAccount, Priority and DefaultTolerationSeconds plugins on the
// create of a pod. The caller holds the store lock.
func (s *Server) admitPodCreate(t target, pod *corev1.Pod) error {
	forbidden := func(err error) error { return apierrors.NewForbidden(t.res.groupResource(), pod.Name, err) }
	if _, mirror := pod.Annotations[mirrorPodAnnotation]; mirror {
		if pod.Spec.ServiceAccountName != "" {
			return forbidden(fmt.Errorf("a mirror pod may not reference service accounts"))
		}
	} else {
		if pod.Spec.ServiceAccountName == "" {
			pod.Spec.ServiceAccountName = defaultServiceAccount
		}
		sa, err := s.lookUpServiceAccount(pod.Namespace, pod.Spec.ServiceAccountName)
		if err != nil {
			return forbidden(err)
		}
		if shouldAutomount(sa, pod) {
			s.mountServiceAccountToken(pod)
		}
		if len(pod.Spec.ImagePullSecrets) == 0 {
			for _, ref := range sa.ImagePullSecrets {
				pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: ref.Name})
			}
		}
	}

	priority, policy := int32(0), corev1.PreemptLowerPriority
	switch pod.Spec.PriorityClassName {
	case "":
	case systemNodeCritical:
		priority = systemNodeCriticalValue
	case systemClusterCritical:
		priority = systemCriticalPriority
	default:
		return forbidden(fmt.Errorf("no PriorityClass with name %v was found", pod.Spec.PriorityClassName))
	}
	if pod.Spec.Priority != nil && *pod.Spec.Priority != priority {
		return forbidden(fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, priority))
	}
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != policy {
		return forbidden(fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *pod.Spec.PreemptionPolicy, policy))
	}
	pod.Spec.Priority = ptr.To(priority)
	pod.Spec.PreemptionPolicy = ptr.To(policy)

	addDefaultTolerations(pod)
	return nil
}

// addDefaultTolerations is DefaultTolerationSeconds: a pod that does not tolerate the not-ready or
// the unreachable NoExecute taint (a toleration with an empty key or effect covers it) gets a
// toleration of it for defaultTolerationSeconds.
func addDefaultTolerations(pod *corev1.Pod) {
	tolerates := func(key string) bool {
		for _, tol := range pod.Spec.Tolerations {
			if (tol.Key == key || tol.Key == "") && (tol.Effect == corev1.TaintEffectNoExecute || tol.Effect == "") {
				return true
			}
		}
		return false
	}
	notReady, unreachable := tolerates(corev1.TaintNodeNotReady), tolerates(corev1.TaintNodeUnreachable)
	for _, add := range []struct {
		key  string
		have bool
	}{{corev1.TaintNodeNotReady, notReady}, {corev1.TaintNodeUnreachable, unreachable}} {
		if !add.have {
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{
				Key: add.key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
				TolerationSeconds: ptr.To(defaultTolerationSeconds),
			})
		}
	}
}

// admitPodUpdate is the Priority and DefaultTolerationSeconds plugins on the update of a pod: an
// update that leaves out the priority or the preemption policy keeps the old ones, and the
// default tolerations are added again if dropped.
func admitPodUpdate(oldPod, newPod *corev1.Pod) {
	if newPod.Spec.Priority == nil {
		newPod.Spec.Priority = oldPod.Spec.Priority
	}
	if newPod.Spec.PreemptionPolicy == nil {
		newPod.Spec.PreemptionPolicy = oldPod.Spec.PreemptionPolicy
	}
	addDefaultTolerations(newPod)
}
