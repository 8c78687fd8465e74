package pleg

import (
	"strconv"

	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// EventType is the kind of a pod lifecycle event.
type EventType int

// The event types, with the kubelet's names.
const (
	// ContainerStarted: a container or sandbox is running that was not before.
	ContainerStarted EventType = iota
	// ContainerDied: a container or sandbox exited, or vanished while running.
	ContainerDied
	// ContainerRemoved: an exited container or sandbox is gone from the runtime.
	ContainerRemoved
	// PodSync: a pod was reinspected after an earlier failure and nothing else changed.
	PodSync
	// ContainerChanged: a container entered the created or unknown state. Relist never returns
	// it; the type exists because the kubelet has it.
	ContainerChanged
	// ConditionMet: a watch condition set on the pod (SetPodWatchCondition) held at a relist.
	ConditionMet
)

// String returns the kubelet's name for t, or "EventType(n)" for a value outside the enum.
func (t EventType) String() string {
	switch t {
	case ContainerStarted:
		return "ContainerStarted"
	case ContainerDied:
		return "ContainerDied"
	case ContainerRemoved:
		return "ContainerRemoved"
	case PodSync:
		return "PodSync"
	case ContainerChanged:
		return "ContainerChanged"
	case ConditionMet:
		return "ConditionMet"
	}
	return "EventType(" + strconv.Itoa(int(t)) + ")"
}

// traceKind is how the trace names an event of type t: the kubelet's name.
func (t EventType) traceKind() trace.Kind {
	switch t {
	case ContainerStarted:
		return trace.KindContainerStarted
	case ContainerDied:
		return trace.KindContainerDied
	case ContainerRemoved:
		return trace.KindContainerRemoved
	case PodSync:
		return trace.KindPodSync
	case ConditionMet:
		return trace.KindConditionMet
	}
	// ContainerChanged is never returned, so never traced.
	return trace.Kind(t.String())
}

// Event is one pod lifecycle event: the kubelet's PodLifecycleEvent.
type Event struct {
	// ID is the pod's UID.
	ID types.UID
	// Type is what happened.
	Type EventType
	// Data is the container or sandbox ID; empty for PodSync.
	Data string
}
