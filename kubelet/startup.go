package kubelet

import (
	"strings"
	"time"

	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/minikubelet/minikubelet/nodestatus"
	"github.com/minikubelet/minikubelet/pleg"
	"github.com/minikubelet/minikubelet/runtimestate"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/status"
)

// The start-up's trace: what the kubelet process does before its first pod, in the kubelet's
// order (docs/trace.md, "The start-up"). New traces NewMainKubelet's part and the BirthCry;
// Run, or a stepping driver's first Settle, traces Kubelet.Run's up to syncLoop and makes
// updateRuntimeUp's first check, whose answer starts the runtime-dependent modules.

// startState is what the start-up remembers between Run's start and the runtime's first answer.
type startState struct {
	// stepping is set when a driver steps the kubelet: the start-up then starts the plugin
	// pipeline, which Run's runners start otherwise.
	stepping bool
	// inRun is set while startUp traces Kubelet.Run's start: a first answer then waits for
	// startUp to start the runtime-dependent modules after Run's own steps.
	inRun bool
	// answered is set at the runtime's first answer, modules once the runtime-dependent modules
	// started.
	answered, modules bool
}

// startEvent traces one step of the start-up.
func (k *Kubelet) startEvent(kind trace.Kind, fn string, e trace.Event) {
	e.Component, e.Event, e.Func = trace.Kubelet, kind, fn
	k.opts.Tracer.Emit(e)
}

// traceNew traces the start of NewMainKubelet, before it builds the sources.
func (k *Kubelet) traceNew() {
	k.startEvent(trace.KindNew, "NewMainKubelet", trace.Event{})
}

// traceSources traces makePodSourceConfig: the sources registered with PodConfig, in order.
func (k *Kubelet) traceSources() {
	var names []string
	for _, s := range []struct {
		name string
		on   bool
	}{{"file", k.Sources.File != nil}, {"http", k.Sources.HTTP != nil}, {"api", k.Sources.API != nil}} {
		if s.on {
			names = append(names, s.name)
		}
	}
	k.startEvent(trace.KindSources, "makePodSourceConfig", trace.Event{Message: strings.Join(names, " ")})
}

// startUp is Kubelet.Run up to syncLoop, as far as the cores model it, in the order of
// the v1.35 kubelet's start-up timeline: initializeModules; the first updateRuntimeUp check (with an API
// server the node status goroutine's, without one the 5s loop's first); fastStatusUpdateOnce
// (only with an API server); the status manager; the PLEG; the sync loop. The goroutine that
// made the first check goes on after Run has reached syncLoop: when the runtime answered, it runs
// initializeRuntimeDependentModules, which takes longer than Run's own steps, and then, with an
// API server, the node status loop starts. The start of each loop is traced; what the loop does
// is the cores' (node registration, relists, the skip rule) and comes in the driver's next pass.
// A runtime that does not answer holds the runtime-dependent modules back to its first answer
// (runtimeAnswered). stepping says whether a driver steps the kubelet (the start-up then starts
// the plugin pipeline) or Run runs it (its runners do).
func (k *Kubelet) startUp(stepping bool) {
	k.start.stepping, k.start.inRun = stepping, true
	api := k.opts.World.API != nil
	k.startEvent(trace.KindRun, "Run", trace.Event{})
	k.startEvent(trace.KindModules, "initializeModules", trace.Event{})
	k.runtimeState.Advance()
	if api {
		k.startEvent(trace.KindFastStatus, "fastStatusUpdateOnce", trace.Event{Delay: nodestatus.FastStatusPeriod})
		k.startEvent(trace.KindStatusManager, "statusManager.Start", trace.Event{Delay: status.DefaultSyncPeriod})
	}
	k.startEvent(trace.KindPLEG, "GenericPLEG.Start", trace.Event{Delay: pleg.DefaultRelistPeriod})
	k.startEvent(trace.KindSyncLoopStart, "syncLoop", trace.Event{})
	k.start.inRun = false
	if k.start.answered {
		k.runtimeDependentModules()
	}
	if api {
		k.startEvent(trace.KindNodeStatus, "syncNodeStatus", trace.Event{Delay: k.nodeStatusPeriod()})
	}
}

// runtimeAnswered is called once, when the runtime first answers updateRuntimeUp's status check,
// before the runtime state records the answer: the kubelet's oneTimeInitializer, which runs
// initializeRuntimeDependentModules before the check's time is stamped, so the sync loop's skip
// rule holds until then. A failed check is traced by the runtime state.
func (k *Kubelet) runtimeAnswered() {
	k.start.answered = true
	k.startEvent(trace.KindRuntimeUp, "updateRuntimeUp", trace.Event{Delay: runtimestate.UpPeriod})
	if !k.start.inRun {
		k.runtimeDependentModules()
	}
}

// runtimeDependentModules is initializeRuntimeDependentModules: the container manager and its
// device manager start, the plugin manager gets its handlers and starts.
func (k *Kubelet) runtimeDependentModules() {
	if k.start.modules {
		return
	}
	k.start.modules = true
	var handlers []string
	if p := k.Plugins; p != nil {
		if p.CSI != nil {
			handlers = append(handlers, registerapi.CSIPlugin)
		}
		// The container manager's handlers: the device manager's and the DRA manager's (a
		// map in the kubelet, so their order there varies; here it is fixed).
		handlers = append(handlers, registerapi.DevicePlugin)
		if p.DRA != nil {
			handlers = append(handlers, registerapi.DRAPlugin)
		}
	}
	k.startEvent(trace.KindRuntimeModules, "initializeRuntimeDependentModules", trace.Event{Message: strings.Join(handlers, " ")})
	if k.start.stepping && k.Plugins != nil {
		k.Plugins.start()
	}
}

// firstAnswer is the runtime as updateRuntimeUp asks it: it calls answered at the first status
// check the runtime answers.
type firstAnswer struct {
	runtimestate.Runtime
	answered func()
}

// Status asks the runtime; the first answer calls answered.
func (a *firstAnswer) Status() error {
	err := a.Runtime.Status()
	if err == nil && a.answered != nil {
		f := a.answered
		a.answered = nil
		f()
	}
	return err
}

// nodeStatusPeriod is the node status loop's period: nodeStatusUpdateFrequency.
func (k *Kubelet) nodeStatusPeriod() time.Duration {
	if d := k.opts.Config.NodeStatus.UpdateFrequency; d > 0 {
		return d
	}
	return nodestatus.StatusPeriod
}
