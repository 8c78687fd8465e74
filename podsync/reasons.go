package podsync

import (
	"errors"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/status"
)

// reasonCache is the kubelet's reasonCache: per pod and container, why the last runtime sync could
// not start the container. generateStatus shows it as the Waiting reason of a container that
// should be restarted (CrashLoopBackOff, ImagePullBackOff...).
type reasonCache map[types.UID]map[string]status.Reason

// update replaces the pod's reasons with the failures of the runtime sync that returned err. The
// kubelet drops the entry of each container that started; containers this sync did not try keep
// nothing either, which only matters for a container that is not running and not retried.
func (c reasonCache) update(pod *v1.Pod, err error) {
	delete(c, pod.UID)
	if err == nil {
		return
	}
	reasons := map[string]status.Reason{}
	for _, leaf := range leafErrors(err) {
		if name, ok := failedContainer(pod, leaf); ok {
			if _, seen := reasons[name]; !seen {
				reasons[name] = reasonOf(leaf)
			}
		}
	}
	if len(reasons) > 0 {
		c[pod.UID] = reasons
	}
}

// forget drops the pod's reasons.
func (c reasonCache) forget(uid types.UID) { delete(c, uid) }

// leafErrors flattens errors joined by the runtime (one per container held back).
func leafErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leafErrors(e)...)
		}
		return out
	}
	if u := errors.Unwrap(err); u != nil {
		if _, joined := u.(interface{ Unwrap() []error }); joined {
			return leafErrors(u)
		}
	}
	return []error{err}
}

// failedContainer finds which container of the pod a runtime start error is about. The runtime
// names the container in its messages ("container=<name> ", "container <name> ") or, for image
// failures, the image.
func failedContainer(pod *v1.Pod, err error) (string, bool) {
	msg := err.Error()
	containers := append(append([]v1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, c := range containers {
		if strings.Contains(msg, "container="+c.Name+" ") || strings.Contains(msg, "container "+c.Name+" ") {
			return c.Name, true
		}
	}
	if errors.Is(err, kubecontainer.ErrImagePullBackOff) || errors.Is(err, kubecontainer.ErrImagePull) || errors.Is(err, kubecontainer.ErrImageNeverPull) {
		for _, c := range containers {
			if strings.Contains(msg, `image "`+c.Image+`"`) {
				return c.Name, true
			}
		}
	}
	return "", false
}

// reasonOf is the reason and message the kubelet shows for a failed start.
func reasonOf(err error) status.Reason {
	var hook *kubecontainer.PostStartHookError
	if errors.As(err, &hook) {
		return status.Reason{Reason: kubecontainer.ErrPostStartHook.Error(), Message: hook.Message}
	}
	switch {
	case errors.Is(err, kubecontainer.ErrImagePull):
		return status.Reason{Reason: "ErrImagePull", Message: strings.TrimSuffix(err.Error(), ": "+kubecontainer.ErrImagePull.Error())}
	case errors.Is(err, kubecontainer.ErrImageNeverPull):
		return status.Reason{Reason: "ErrImageNeverPull", Message: strings.TrimSuffix(err.Error(), ": "+kubecontainer.ErrImageNeverPull.Error())}
	case errors.Is(err, kubecontainer.ErrCreateContainerConfig):
		return status.Reason{Reason: "CreateContainerConfigError", Message: err.Error()}
	case errors.Is(err, kubecontainer.ErrCreateContainer):
		return status.Reason{Reason: "CreateContainerError", Message: strings.TrimSuffix(err.Error(), ": "+kubecontainer.ErrCreateContainer.Error())}
	}
	r := status.ReasonFromError(err)
	for _, sentinel := range []error{kubecontainer.ErrCrashLoopBackOff, kubecontainer.ErrImagePullBackOff} {
		r.Message = strings.TrimSuffix(r.Message, ": "+sentinel.Error())
	}
	return r
}
