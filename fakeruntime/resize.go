package fakeruntime

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// In-place resize, as the v1.35 kuberuntime manager actuates what the allocation manager
// allocated (computePodResizeAction, doPodResizeAction, IsPodResizeInProgress). The pod SyncPod is
// given carries the allocated resources; each running container of it (main containers and
// sidecars) is compared with the resources the runtime gave it (its actuated resources, which the
// runtime reports as ContainerStatus.Resources). A change to a resource whose resizePolicy says
// RestartContainer restarts the container with the new values; any other change is made in place
// with UpdateContainerResources, memory before cpu, and for each the decreases before the
// increases. The fake has no pod cgroup, so the pod-level half of doPodResizeAction has no effect
// of its own.

// CallUpdateContainerResources is the CRI call FailRuntimeCall can make fail for a resize: the
// container keeps its resources, the kubelet marks the resize's PodResizeInProgress condition
// with reason Error and records ResizeError, and the next sync tries again.
const CallUpdateContainerResources = "UpdateContainerResources"

// containerUpdate is one UpdateContainerResources call of a resize: the kubelet's
// containerToUpdateInfo for one resource.
type containerUpdate struct {
	id        string
	container *v1.Container
	resource  v1.ResourceName
}

// resizeUpdates are the in-place updates of one SyncPod, per resource in the order they run.
type resizeUpdates struct {
	memory, cpu []containerUpdate
}

func (u resizeUpdates) empty() bool { return len(u.memory) == 0 && len(u.cpu) == 0 }

// add queues an update of res for the container: a decrease before the updates queued so far, an
// increase after them, as markContainerForUpdate orders them.
func (u *resizeUpdates) add(res v1.ResourceName, cu containerUpdate, decrease bool) {
	list := &u.cpu
	if res == v1.ResourceMemory {
		list = &u.memory
	}
	if decrease {
		*list = append([]containerUpdate{cu}, *list...)
		return
	}
	*list = append(*list, cu)
}

// names lists the containers updated in place, each once, memory updates first.
func (u resizeUpdates) names() []string {
	var out []string
	seen := map[string]bool{}
	for _, cu := range append(append([]containerUpdate(nil), u.memory...), u.cpu...) {
		if !seen[cu.container.Name] {
			seen[cu.container.Name] = true
			out = append(out, cu.container.Name)
		}
	}
	return out
}

// resizeAmounts are the cpu (millicores) and memory (bytes) requests and limits the kubelet
// compares: its containerResources.
type resizeAmounts struct {
	memoryLimit, memoryRequest, cpuLimit, cpuRequest int64
}

func amountsOf(r *kubecontainer.ContainerResources) resizeAmounts {
	if r == nil {
		return resizeAmounts{}
	}
	milli := func(q *resource.Quantity) int64 {
		if q == nil {
			return 0
		}
		return q.MilliValue()
	}
	value := func(q *resource.Quantity) int64 {
		if q == nil {
			return 0
		}
		return q.Value()
	}
	return resizeAmounts{memoryLimit: value(r.MemoryLimit), memoryRequest: value(r.MemoryRequest),
		cpuLimit: milli(r.CPULimit), cpuRequest: milli(r.CPURequest)}
}

// amountsOfSpec is amountsOf(kubecontainer.ResourcesOf(r)) without building the copy: the
// periodic sync of every running container compares its spec's amounts with the actuated ones,
// twice (IsPodResizeInProgress, then resizeAction).
func amountsOfSpec(r *v1.ResourceRequirements) resizeAmounts {
	var a resizeAmounts
	if q, ok := r.Limits[v1.ResourceMemory]; ok {
		a.memoryLimit = q.Value()
	}
	if q, ok := r.Requests[v1.ResourceMemory]; ok {
		a.memoryRequest = q.Value()
	}
	if q, ok := r.Limits[v1.ResourceCPU]; ok {
		a.cpuLimit = q.MilliValue()
	}
	if q, ok := r.Requests[v1.ResourceCPU]; ok {
		a.cpuRequest = q.MilliValue()
	}
	return a
}

// actuated returns what the runtime gave the instance with id, as it reports it.
func (r *Runtime) actuated(id string, cs *kubecontainer.ContainerStatus) *kubecontainer.ContainerResources {
	if rec := r.containers[id]; rec != nil {
		return rec.status.Resources
	}
	return cs.Resources
}

// resizeAction is computePodResizeAction for the running container c of pod (cs its running
// instance): it reports whether the container is kept. A container whose changed resources
// include one with resizePolicy RestartContainer is not: it is added to the kills with the
// message "Container <name> resize requires restart" (the caller starts it again). Otherwise its
// changes are queued as in-place updates. A static pod is never resized.
func (r *Runtime) resizeAction(pod *v1.Pod, c *v1.Container, cs *kubecontainer.ContainerStatus, acts *podActions) bool {
	if kubecontainer.IsStaticPod(pod) || cs.State != kubecontainer.ContainerStateRunning {
		return true
	}
	desired := amountsOfSpec(&c.Resources)
	current := amountsOf(r.actuated(cs.ID, cs))
	if desired == current {
		return true
	}
	policy := func(res v1.ResourceName, want, have int64) (resize, restart bool) {
		if want == have {
			return false, false
		}
		for _, p := range c.ResizePolicy {
			if p.ResourceName == res {
				return true, p.RestartPolicy == v1.RestartContainer
			}
		}
		return true, false // no policy is NotRequired
	}
	resizeMemLim, restartMemLim := policy(v1.ResourceMemory, desired.memoryLimit, current.memoryLimit)
	resizeMemReq, restartMemReq := policy(v1.ResourceMemory, desired.memoryRequest, current.memoryRequest)
	resizeCPULim, restartCPULim := policy(v1.ResourceCPU, desired.cpuLimit, current.cpuLimit)
	resizeCPUReq, restartCPUReq := policy(v1.ResourceCPU, desired.cpuRequest, current.cpuRequest)
	if restartMemLim || restartMemReq || restartCPULim || restartCPUReq {
		acts.kill = append(acts.kill, containerKill{id: cs.ID, container: c,
			message: fmt.Sprintf("Container %s resize requires restart", c.Name)})
		acts.resizePod = true
		return false
	}
	update := func(res v1.ResourceName, want, have int64) {
		acts.updates.add(res, containerUpdate{id: cs.ID, container: c, resource: res}, want < have)
	}
	switch {
	case resizeMemLim:
		update(v1.ResourceMemory, desired.memoryLimit, current.memoryLimit)
	case resizeMemReq:
		update(v1.ResourceMemory, desired.memoryRequest, current.memoryRequest)
	}
	switch {
	case resizeCPULim:
		update(v1.ResourceCPU, desired.cpuLimit, current.cpuLimit)
	case resizeCPUReq:
		update(v1.ResourceCPU, desired.cpuRequest, current.cpuRequest)
	}
	return true
}

// resize is doPodResizeAction: each queued update in turn, memory then cpu, at s.at. The first
// that fails stops the rest, and its error is the resize's. The caller's Result says a resize ran,
// so that the kubelet has the pod reinspected at the next relist.
func (s *podSync) resize(u resizeUpdates) error {
	for _, cu := range append(append([]containerUpdate(nil), u.memory...), u.cpu...) {
		if err := s.updateContainerResources(cu); err != nil {
			return err
		}
	}
	return nil
}

// updateContainerResources gives the running container the resource's new request and limit
// (the other resource keeps what it had), and traces the call.
func (s *podSync) updateContainerResources(cu containerUpdate) error {
	r := s.r
	if r.failCall(CallUpdateContainerResources) {
		msg := "rpc error: code = Unknown desc = failed to update container resources: scripted UpdateContainerResources failure"
		ev := trace.Event{Event: trace.KindFailed, Pod: s.key, UID: string(s.pod.UID), Container: cu.container.Name,
			Reason: kubecontainer.ErrResizePodInPlace.Error(), Message: msg, Func: "updateContainerResources"}
		r.postOfProcess(s.at, func(time.Time) { r.emit(ev) })
		return &kubecontainer.ResizeError{Message: msg}
	}
	want := kubecontainer.ResourcesOf(cu.container.Resources)
	pod, key := s.pod, s.key
	s.schedule(s.at, func(time.Time) {
		rec := r.containers[cu.id]
		if rec == nil || rec.status.State != kubecontainer.ContainerStateRunning {
			return
		}
		next := kubecontainer.ContainerResources{}
		if rec.status.Resources != nil {
			next = *rec.status.Resources
		}
		if cu.resource == v1.ResourceMemory {
			next.MemoryRequest, next.MemoryLimit = want.MemoryRequest, want.MemoryLimit
		} else {
			next.CPURequest, next.CPULimit = want.CPURequest, want.CPULimit
		}
		// A new value, never an update in place: statuses already handed out keep theirs.
		rec.status.Resources = &next
		r.emit(trace.Event{Event: trace.KindResize, Pod: key, UID: string(pod.UID), Container: cu.container.Name,
			Reason: string(cu.resource), Message: describeResources(cu.resource, &next), Func: "updateContainerResources"})
	})
	return nil
}

// describeResources is the trace's account of a resource's new request and limit.
func describeResources(res v1.ResourceName, c *kubecontainer.ContainerResources) string {
	req, lim := c.CPURequest, c.CPULimit
	if res == v1.ResourceMemory {
		req, lim = c.MemoryRequest, c.MemoryLimit
	}
	str := func(q *resource.Quantity) string {
		if q == nil {
			return "none"
		}
		return q.String()
	}
	return "requests=" + str(req) + " limits=" + str(lim)
}

// IsPodResizeInProgress reports whether a running main container or sidecar of the allocated pod
// has cpu or memory other than allocated: the kubelet's IsPodResizeInProgress, which SyncPod
// asks to set or clear the pod's PodResizeInProgress condition. Containers that are not running
// are sized when they start, and do not count.
func (r *Runtime) IsPodResizeInProgress(pod *v1.Pod, status *kubecontainer.PodStatus) bool {
	check := func(c *v1.Container) bool {
		cs := status.FindContainerStatusByName(c.Name)
		if cs == nil || cs.State != kubecontainer.ContainerStateRunning {
			return false
		}
		return amountsOfSpec(&c.Resources) != amountsOf(r.actuated(cs.ID, cs))
	}
	for i := range pod.Spec.InitContainers {
		if kubecontainer.IsRestartableInitContainer(&pod.Spec.InitContainers[i]) && check(&pod.Spec.InitContainers[i]) {
			return true
		}
	}
	for i := range pod.Spec.Containers {
		if check(&pod.Spec.Containers[i]) {
			return true
		}
	}
	return false
}

// resizeString is the resize part of the sync trace's summary of actions.
func (u resizeUpdates) String() string {
	if u.empty() {
		return ""
	}
	return "resize=[" + strings.Join(u.names(), " ") + "]"
}
