package kubecontainer

import (
	"errors"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// RuntimeScheme is the fake runtime's type as the API shows it, "<type>://" in front of a
// container's ID, an image's reference and the node's container runtime version, where a real
// node shows containerd:// or cri-o://. Status, node status and the fake runtime write it.
const RuntimeScheme = "fake://"

// ContainerState is a container's state as the runtime reports it.
type ContainerState string

// The states, with the kubelet's values.
const (
	ContainerStateCreated ContainerState = "created"
	ContainerStateRunning ContainerState = "running"
	ContainerStateExited  ContainerState = "exited"
	ContainerStateUnknown ContainerState = "unknown"
)

// SandboxState is the state of a pod sandbox.
type SandboxState string

// The sandbox states.
const (
	SandboxReady    SandboxState = "ready"
	SandboxNotReady SandboxState = "notready"
)

// SandboxStatus is one pod sandbox as the runtime reports it.
type SandboxStatus struct {
	ID        string
	State     SandboxState
	CreatedAt time.Time
	// Attempt counts the sandboxes made for this pod before this one.
	Attempt int
}

// ContainerStatus is one container instance as the runtime reports it. A container that restarted
// appears once per instance, newest first.
type ContainerStatus struct {
	ID    string
	Name  string
	Image string
	// ImageRef is the image the instance runs as the runtime names it (the kubelet's
	// Status.ImageRef, a digest under containerd), which the API status reports as imageID. It is
	// the runtime's to keep: a status is built from it many times, the instance made once. The fake
	// runtime derives it from Image, so its checkpoint leaves it out and its restore derives it
	// again.
	ImageRef   string `json:"-"`
	State      ContainerState
	CreatedAt  time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	ExitCode   int
	// RestartCount is how many instances of this container ran before this one.
	RestartCount int
	// Hash is HashContainer of the spec the instance was created from, which the kubelet keeps
	// as a container annotation and compares with the current spec.
	Hash    uint64
	Reason  string
	Message string
	// Resources are the cpu and memory the runtime gave the instance: those it was created with,
	// as updated in place since by a resize. Nil when the runtime reports none.
	Resources *ContainerResources
}

// PodStatus is everything the runtime knows about one pod at one instant: the kubelet's
// kubecontainer.PodStatus.
type PodStatus struct {
	UID       types.UID
	Name      string
	Namespace string
	Sandboxes []SandboxStatus
	// IPs are the pod's IPs, as the runtime reports them for its newest sandbox while that one is
	// ready; none for a host-network pod, whose sandbox has no IP of its own.
	IPs []string
	// ContainerStatuses lists every container instance the runtime still has, newest first within
	// one container name.
	ContainerStatuses []ContainerStatus
	// TimeStamp is when this status was read.
	TimeStamp time.Time
}

// FindContainerStatusByName returns the newest instance of the named container, or nil.
func (s *PodStatus) FindContainerStatusByName(name string) *ContainerStatus {
	if s == nil {
		return nil
	}
	for i := range s.ContainerStatuses {
		if s.ContainerStatuses[i].Name == name {
			return &s.ContainerStatuses[i]
		}
	}
	return nil
}

// Pod is a pod as the runtime lists it: the kubelet's kubecontainer.Pod, used to kill pods that
// exist only in the runtime.
type Pod struct {
	ID         types.UID
	Name       string
	Namespace  string
	Containers []ContainerStatus
	Sandboxes  []SandboxStatus
}

// GetPodFullName returns the kubelet's full name of pod, "<name>_<namespace>".
func GetPodFullName(pod *v1.Pod) string {
	return BuildPodFullName(pod.Name, pod.Namespace)
}

// BuildPodFullName returns "<name>_<namespace>".
func BuildPodFullName(name, namespace string) string {
	return name + "_" + namespace
}

// ErrBadFullName is returned by ParsePodFullName for a string that is not "<name>_<namespace>".
var ErrBadFullName = errors.New("pod full name must be <name>_<namespace>")

// ParsePodFullName splits a full name into name and namespace.
func ParsePodFullName(fullName string) (name, namespace string, err error) {
	parts := strings.Split(fullName, "_")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", errors.Join(ErrBadFullName, errors.New("parse "+fullName))
	}
	return parts[0], parts[1], nil
}

// Annotation keys the config side sets and the sync side reads.
const (
	ConfigSourceAnnotationKey    = "kubernetes.io/config.source"
	ConfigMirrorAnnotationKey    = v1.MirrorPodAnnotationKey
	ConfigFirstSeenAnnotationKey = "kubernetes.io/config.seen"
	ConfigHashAnnotationKey      = "kubernetes.io/config.hash"
)

// IsStaticPod reports whether pod came from a file or http source.
func IsStaticPod(pod *v1.Pod) bool {
	src, ok := pod.Annotations[ConfigSourceAnnotationKey]
	return ok && src != "api"
}

// IsMirrorPod reports whether pod is the API server's mirror of a static pod.
func IsMirrorPod(pod *v1.Pod) bool {
	_, ok := pod.Annotations[ConfigMirrorAnnotationKey]
	return ok
}
