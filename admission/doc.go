// Package admission decides whether the node may run a new pod: the kubelet's admit handlers as
// HandlePodAdditions runs them, and rejectPod for the pods they refuse.
//
// It mirrors, for v1.35:
//
//   - pkg/kubelet/allocation (canAdmitPod): the handlers run in order over the active pods other
//     than the new one, and the first refusal wins;
//   - the device manager's resource allocation handler (through Options.Devices), which runs
//     before the predicate handler, so a device shortage is UnexpectedAdmissionError;
//   - pkg/kubelet/lifecycle/predicate.go (the predicate admit handler): the OS checks, dropping
//     requests for extended resources the node does not advertise, then generalFilter, which is
//     the scheduler's AdmissionCheck (pkg/scheduler/eventhandlers.go) plus the NoExecute taints of
//     non-static pods;
//   - pkg/scheduler/framework/plugins/noderesources/fit.go (fitsRequest): pods, cpu, memory,
//     ephemeral-storage and scalar resources against node.status.allocatable, with the pod's
//     requests from k8s.io/component-helpers/resource PodRequests (the larger of the init peak
//     and the sum of the main containers and sidecars, plus the pod overhead). The new pod
//     counts its spec's requests; each active pod counts as the scheduler's NodeInfo counts it
//     with in-place resize: every container at the larger of its allocated requests (the spec
//     as the allocation manager allocated it) and the resources its status shows (resources and
//     allocatedResources), so a pod resized down holds its old size until its status shows the
//     resize actuated;
//   - the nodeaffinity, nodename and nodeports plugins' filters and reasons;
//   - pkg/kubelet/preemption (CriticalPodAdmissionHandler): a critical pod whose only failures
//     are insufficient resources has lower-priority pods killed to make room;
//   - pkg/kubelet/kubelet.go rejectPod: a Warning event with the handler's reason and message,
//     and the pod's status Failed with "Pod was rejected: " before the message.
//
// The filters (requests.go, predicate.go, preemption.go) are pure functions of the pod, the node
// and the other pods; Admitter wires them to the node, the pod list, the device manager, the pod
// workers and the status manager. It has no goroutine and no lock: the sync loop calls it from its
// one goroutine.
//
// The kubelet walks every active pod for every new pod (filterOutInactivePods, then the fit sums
// their requests), so admitting n pods costs n². The Admitter keeps the active pods' count,
// requests and host ports instead (usage.go), and counts again only the pods it is told changed
// (PodChanged, which the pod manager, the pod workers and the status manager call through their
// OnChange): the same answers, in the same order, at a cost per admission that does not grow
// with the pods. Verify compares the kept counts with a count from scratch.
package admission
