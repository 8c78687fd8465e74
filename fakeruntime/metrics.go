package fakeruntime

import (
	"errors"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// Metrics is where the runtime records what kuberuntime counts: its CRI calls by operation_type
// (kubelet_runtime_operations_*), the sandboxes it starts (kubelet_started_pods_*) and the
// containers it starts (kubelet_started_containers_*).
type Metrics interface {
	ObserveRuntimeOperation(operation string, d time.Duration, err error)
	StartedPod(err error)
	StartedContainer(containerType, code string)
}

// startErrors are the well-known start errors whose text is the kubelet's error code label.
var startErrors = []error{
	kubecontainer.ErrImagePull, kubecontainer.ErrImagePullBackOff, kubecontainer.ErrImageNeverPull,
	kubecontainer.ErrInvalidImageName, kubecontainer.ErrCreateContainerConfig, kubecontainer.ErrCreateContainer,
	kubecontainer.ErrRunContainer, kubecontainer.ErrPostStartHook,
}

// startErrorCode is the code label of a failed start: the well-known error it wraps, else its text.
func startErrorCode(err error) string {
	for _, known := range startErrors {
		if errors.Is(err, known) {
			return known.Error()
		}
	}
	return err.Error()
}

// containerType is the container_type label: init_container for an init container (sidecars
// included), container otherwise.
func containerType(pod *v1.Pod, c *v1.Container) string {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == c.Name {
			return "init_container"
		}
	}
	return "container"
}

// observeOp records one CRI call; nothing without metrics.
func (r *Runtime) observeOp(operation string, d time.Duration, err error) {
	if r.metrics != nil {
		r.metrics.ObserveRuntimeOperation(operation, d, err)
	}
}

// startedContainer counts one start attempt of c that got past the back-off; err is its failure.
func (r *Runtime) startedContainer(pod *v1.Pod, c *v1.Container, err error) {
	if r.metrics == nil {
		return
	}
	code := ""
	if err != nil {
		code = startErrorCode(err)
	}
	r.metrics.StartedContainer(containerType(pod, c), code)
}
