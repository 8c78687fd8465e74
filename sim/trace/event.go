package trace

import (
	"time"
)

// Component names the part of the pipeline that emitted an event. The values are part of the
// trace contract (docs/trace.md).
type Component string

// The components. Each is a package, or a named part of one, that a kubelet reader can map to the
// kubelet's own code.
const (
	Kubelet      Component = "kubelet"      // the kubelet process: its start-up, NewMainKubelet to syncLoop
	Sources      Component = "sources"      // file, http and api pod sources
	PodConfig    Component = "podconfig"    // the mux and podStorage
	SyncLoop     Component = "syncloop"     // syncLoopIteration and the pod handlers
	Housekeeping Component = "housekeeping" // HandlePodCleanups
	PodManager   Component = "podmanager"   // the desired pod set
	PodWorkers   Component = "podworkers"   // per-UID pod workers
	WorkQueue    Component = "workqueue"    // the timestamped work queue
	Runtime      Component = "runtime"      // the fake container runtime
	PLEG         Component = "pleg"         // the generic relisting PLEG
	Status       Component = "status"       // the status manager
	Prober       Component = "prober"       // the prober manager and its probe workers
	PodStartup   Component = "podstartup"   // the pod startup latency tracker
	Mirror       Component = "mirror"       // the mirror pod client
	Node         Component = "node"         // node registration, status and lease
	APIServer    Component = "apiserver"    // the fake API server
	Events       Component = "events"       // the kubelet's Kubernetes event recorder
	Scenario     Component = "scenario"     // scenario steps in replay
	// The control-plane controllers beside the fake API server (package controllers).
	NodeLifecycle Component = "nodelifecycle" // kube-controller-manager's node lifecycle controller
	TaintEviction Component = "tainteviction" // kube-controller-manager's taint eviction controller
	PodGC         Component = "podgc"         // kube-controller-manager's pod garbage collector
	Scheduler     Component = "scheduler"     // kube-scheduler

	// The plugin registration pipeline.
	PluginWatcher Component = "pluginwatcher" // the plugin registry directory watcher
	PluginManager Component = "pluginmanager" // the plugin manager's reconciler and operations
	DeviceManager Component = "devicemanager" // the device manager and its device plugin endpoints
	CSI           Component = "csi"           // the CSI plugin's registration handler
	DRA           Component = "dra"           // the DRA manager's plugin handler

	// VolumeManager is the volume manager, its volume plugins and the token manager.
	VolumeManager Component = "volumemanager"
)

// Event is one thing a component did. Only Component and Event are always set; every other field
// is optional and omitted from the output when empty. Fields are typed, one per meaning, so that
// tests and tools can match on them.
type Event struct {
	// T is the time since the start of the run, on the clock of the run. The Recorder sets it.
	T time.Duration
	// Component is who did it.
	Component Component
	// Event is what happened: the word of a Kind, such as "update", "state" or "error".
	Event Kind
	// Pod is "namespace/name" for pod-scoped events.
	Pod string
	// UID is the pod's UID for pod-scoped events.
	UID string
	// Op is a pod operation (ADD, UPDATE, DELETE, REMOVE, RECONCILE, SET) or an update type.
	Op string
	// Source is the pod source: file, http or api.
	Source string
	// Pods lists "namespace/name" of every pod an update carries, in the order it carries them.
	Pods []string
	// From and To are the old and new state of a state transition.
	From, To string
	// Container names a container for runtime and PLEG events.
	Container string
	// ExitCode is a container's exit code, when it exited.
	ExitCode *int
	// Delay is a wait the component scheduled, such as a back-off or a requeue.
	Delay time.Duration
	// Reason is a machine-readable reason, such as a Kubernetes event reason or an error class.
	Reason string
	// Message is a human-readable explanation, such as an error's text.
	Message string
	// Func is the kubelet function this step corresponds to, so a reader can find it in the
	// kubelet's source.
	Func string
	// Seq numbers the events of one Recorder from 1, in the order it stamps them. The Recorder
	// sets it.
	Seq uint64
	// Cause is the Seq of the event that made this one happen, 0 for none (a root, such as a
	// scenario step or a periodic relist). The Recorder sets it unless the emitter did
	// (docs/trace.md, "Causes").
	Cause uint64
	// Node is the simulated node the event belongs to. It is set only where several nodes share
	// one trace (a replay with `nodes:`, `run --nodes`), and left empty for what no node does.
	Node string
}

// Tracer receives events. Components hold one in their options; a nil Tracer is not allowed, use
// Discard instead.
type Tracer interface {
	Emit(Event)
}

// Func adapts a function to a Tracer.
type Func func(Event)

// Emit calls f(e).
func (f Func) Emit(e Event) { f(e) }

// Discard is a Tracer that drops every event.
var Discard Tracer = Func(func(Event) {})

// Int returns a pointer to v, for ExitCode.
func Int(v int) *int { return &v }
