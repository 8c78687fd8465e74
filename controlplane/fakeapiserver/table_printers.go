package fakeapiserver

import (
	"fmt"
	"sort"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var podColumns = []metav1.TableColumnDefinition{
	col("Name", "string", "name", 0),
	col("Ready", "string", "", 0),
	col("Status", "string", "", 0),
	col("Restarts", "string", "", 0),
	col("Age", "string", "", 0),
	col("IP", "string", "", 1),
	col("Node", "string", "", 1),
	col("Nominated Node", "string", "", 1),
	col("Readiness Gates", "string", "", 1),
}

// podCells computes READY, STATUS and RESTARTS with the rules of kubectl's pod printer: the
// status is the phase, overridden by the pod's reason, by the first init container that has not
// succeeded, then by the last app container that is waiting or terminated with a reason; a pod
// being deleted shows Terminating.
func podCells(now time.Time, obj runtime.Object) []any {
	pod := obj.(*corev1.Pod)
	total, ready, restarts := len(pod.Spec.Containers), 0, int32(0)
	var lastRestart time.Time
	noteRestart := func(cs corev1.ContainerStatus) {
		restarts += cs.RestartCount
		if t := cs.LastTerminationState.Terminated; t != nil && t.FinishedAt.After(lastRestart) {
			lastRestart = t.FinishedAt.Time
		}
	}
	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}
	sidecars := map[string]bool{}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
			total++
		}
	}
	initializing := false
	var sidecarRestarts int32
	for i, cs := range pod.Status.InitContainerStatuses {
		noteRestart(cs)
		started := cs.Started != nil && *cs.Started
		if sidecars[cs.Name] {
			sidecarRestarts += cs.RestartCount
			if started && cs.Ready {
				ready++
			}
		}
		switch {
		case cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0:
			continue
		case sidecars[cs.Name] && started:
			continue
		case cs.State.Terminated != nil:
			reason = "Init:" + terminatedReason(cs.State.Terminated)
		case cs.State.Waiting != nil && cs.State.Waiting.Reason != "" && cs.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + cs.State.Waiting.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}
	if !initializing || hasCondition(pod, corev1.PodInitialized) {
		restarts = sidecarRestarts
		running := false
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			cs := pod.Status.ContainerStatuses[i]
			noteRestart(cs)
			switch {
			case cs.State.Waiting != nil && cs.State.Waiting.Reason != "":
				reason = cs.State.Waiting.Reason
			case cs.State.Terminated != nil:
				reason = terminatedReason(cs.State.Terminated)
			case cs.Ready && cs.State.Running != nil:
				running = true
				ready++
			}
		}
		if reason == "Completed" && running {
			reason = "NotReady"
			if hasCondition(pod, corev1.PodReady) {
				reason = "Running"
			}
		}
	}
	terminal := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	switch {
	case pod.DeletionTimestamp != nil && pod.Status.Reason == "NodeLost":
		reason = string(corev1.PodUnknown)
	case pod.DeletionTimestamp != nil && !terminal:
		reason = "Terminating"
	}
	restartText := fmt.Sprint(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartText = fmt.Sprintf("%d (%s ago)", restarts, age(now, metav1.NewTime(lastRestart)))
	}
	gates := "<none>"
	if n := len(pod.Spec.ReadinessGates); n > 0 {
		trueGates := 0
		for _, g := range pod.Spec.ReadinessGates {
			if hasCondition(pod, g.ConditionType) {
				trueGates++
			}
		}
		gates = fmt.Sprintf("%d/%d", trueGates, n)
	}
	return []any{pod.Name, fmt.Sprintf("%d/%d", ready, total), reason, restartText,
		age(now, pod.CreationTimestamp), orNone(pod.Status.PodIP), orNone(pod.Spec.NodeName),
		orNone(pod.Status.NominatedNodeName), gates}
}

func terminatedReason(t *corev1.ContainerStateTerminated) string {
	switch {
	case t.Reason != "":
		return t.Reason
	case t.Signal != 0:
		return fmt.Sprintf("Signal:%d", t.Signal)
	default:
		return fmt.Sprintf("ExitCode:%d", t.ExitCode)
	}
}

func hasCondition(pod *corev1.Pod, typ corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

var nodeColumns = []metav1.TableColumnDefinition{
	col("Name", "string", "name", 0),
	col("Status", "string", "", 0),
	col("Roles", "string", "", 0),
	col("Age", "string", "", 0),
	col("Version", "string", "", 0),
	col("Internal-IP", "string", "", 1),
	col("External-IP", "string", "", 1),
	col("OS-Image", "string", "", 1),
	col("Kernel-Version", "string", "", 1),
	col("Container-Runtime", "string", "", 1),
}

func nodeCells(now time.Time, obj runtime.Object) []any {
	node := obj.(*corev1.Node)
	status := "Unknown"
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			status = "NotReady"
			if c.Status == corev1.ConditionTrue {
				status = "Ready"
			}
		}
	}
	if node.Spec.Unschedulable {
		status += ",SchedulingDisabled"
	}
	var roles []string
	for k := range node.Labels {
		if r, ok := strings.CutPrefix(k, "node-role.kubernetes.io/"); ok && r != "" {
			roles = append(roles, r)
		}
	}
	if r := node.Labels["kubernetes.io/role"]; r != "" {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	role := "<none>"
	if len(roles) > 0 {
		role = strings.Join(roles, ",")
	}
	addr := func(t corev1.NodeAddressType) string {
		for _, a := range node.Status.Addresses {
			if a.Type == t {
				return a.Address
			}
		}
		return "<none>"
	}
	info := node.Status.NodeInfo
	return []any{node.Name, status, role, age(now, node.CreationTimestamp), info.KubeletVersion,
		addr(corev1.NodeInternalIP), addr(corev1.NodeExternalIP), orNone(info.OSImage),
		orNone(info.KernelVersion), orNone(info.ContainerRuntimeVersion)}
}

var eventColumns = []metav1.TableColumnDefinition{
	col("Last Seen", "string", "", 0),
	col("Type", "string", "", 0),
	col("Reason", "string", "", 0),
	col("Object", "string", "", 0),
	col("Subobject", "string", "", 1),
	col("Source", "string", "", 1),
	col("Message", "string", "", 0),
	col("First Seen", "string", "", 1),
	col("Count", "string", "", 1),
	col("Name", "string", "name", 1),
}

func eventCells(now time.Time, obj runtime.Object) []any {
	ev := obj.(*corev1.Event)
	first, last := ev.FirstTimestamp, ev.LastTimestamp
	if last.IsZero() {
		last = metav1.NewTime(ev.EventTime.Time)
	}
	if first.IsZero() {
		first = last
	}
	source := ev.Source.Component
	if source == "" {
		source = ev.ReportingController
	}
	if ev.Source.Host != "" {
		source += ", " + ev.Source.Host
	}
	object := strings.ToLower(ev.InvolvedObject.Kind) + "/" + ev.InvolvedObject.Name
	return []any{age(now, last), ev.Type, ev.Reason, object, ev.InvolvedObject.FieldPath, source,
		strings.TrimSpace(ev.Message), age(now, first), fmt.Sprint(ev.Count), ev.Name}
}

var leaseColumns = []metav1.TableColumnDefinition{
	col("Name", "string", "name", 0),
	col("Holder", "string", "", 0),
	col("Age", "string", "", 0),
}

func leaseCells(now time.Time, obj runtime.Object) []any {
	lease := obj.(*coordinationv1.Lease)
	holder := ""
	if lease.Spec.HolderIdentity != nil {
		holder = *lease.Spec.HolderIdentity
	}
	return []any{lease.Name, holder, age(now, lease.CreationTimestamp)}
}
