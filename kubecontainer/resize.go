package kubecontainer

import (
	"errors"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ContainerResources are the cpu and memory a running container was given by the runtime: the
// kubelet's kubecontainer.ContainerResources, which it reads back from the runtime (the cgroup)
// and its own record of what it actuated. A nil field was not set.
type ContainerResources struct {
	CPURequest, CPULimit       *resource.Quantity
	MemoryRequest, MemoryLimit *resource.Quantity
}

// ResourcesOf returns the cpu and memory requests and limits of r, nil where r sets none.
func ResourcesOf(r v1.ResourceRequirements) *ContainerResources {
	get := func(l v1.ResourceList, name v1.ResourceName) *resource.Quantity {
		if q, ok := l[name]; ok {
			q := q.DeepCopy()
			return &q
		}
		return nil
	}
	return &ContainerResources{
		CPURequest: get(r.Requests, v1.ResourceCPU), CPULimit: get(r.Limits, v1.ResourceCPU),
		MemoryRequest: get(r.Requests, v1.ResourceMemory), MemoryLimit: get(r.Limits, v1.ResourceMemory),
	}
}

// ErrResizePodInPlace is the class of a failed in-place resize (the kubelet's
// kubecontainer.ErrResizePodInPlace): the runtime refused to update a container's resources.
var ErrResizePodInPlace = errors.New("ResizePodInPlaceError")

// ResizeError is the error of a runtime SyncPod whose in-place resize failed: the kubelet's
// ResizePodInPlace sync result. Message is the runtime's error, which the kubelet writes into the
// PodResizeInProgress condition (reason Error) and the ResizeError event.
type ResizeError struct {
	Message string
}

func (e *ResizeError) Error() string { return "resize pod in place: " + e.Message }

// Is makes errors.Is(err, ErrResizePodInPlace) hold.
func (e *ResizeError) Is(target error) bool { return target == ErrResizePodInPlace }
