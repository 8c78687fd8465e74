package replay

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// The node's steps: its kubelet process restarts, freezes and resumes, loses the API server, or
// its node object is deleted.

// RestartKubelet restarts the kubelet process. It has no fields: `restartKubelet: {}`.
type RestartKubelet struct{}

// StopNode stops the node's kubelet as a frozen or cut-off process: from now on it renews no
// lease, writes no status and syncs no pod, while its containers keep running in the runtime.
// It has no fields: `stopNode: {}`.
type StopNode struct{}

// StartNode lets a stopped kubelet carry on where it stopped: its timers, all overdue, fire at
// once, and it catches up with the API server's changes. `startNode: {}`.
type StartNode struct{}

// APIDeleteNode deletes a node object, as `kubectl delete node` does.
type APIDeleteNode struct {
	Name string `json:"name"`
}

// APIServerDown makes the API server unreachable from the kubelet for a while, as when the
// control plane's own static pods are not up yet or are being replaced. Scenario steps and
// expectations still reach it: they stand for someone on the control plane, not for the node.
type APIServerDown struct {
	For Duration `json:"for"`
}

// The kinds of this file and what they declare.
var (
	_ change     = (*RestartKubelet)(nil)
	_ change     = (*StopNode)(nil)
	_ change     = (*StartNode)(nil)
	_ change     = (*APIDeleteNode)(nil)
	_ change     = (*APIServerDown)(nil)
	_ sourceUser = (*StopNode)(nil)
	_ sourceUser = (*StartNode)(nil)
	_ sourceUser = (*APIDeleteNode)(nil)
	_ sourceUser = (*APIServerDown)(nil)
	_ bounded    = (*APIServerDown)(nil)
)

func (*StopNode) source() string      { return podconfig.APISource }
func (*StartNode) source() string     { return podconfig.APISource }
func (*APIDeleteNode) source() string { return podconfig.APISource }
func (*APIServerDown) source() string { return podconfig.APISource }

func (a *APIServerDown) durations() []namedDuration {
	return []namedDuration{{"for", a.For.Duration}}
}

func (*RestartKubelet) validate() error  { return nil }
func (*StopNode) validate() error        { return nil }
func (*StartNode) validate() error       { return nil }
func (a *APIDeleteNode) validate() error { return required("name", a.Name) }

func (a *APIServerDown) validate() error {
	if a.For.Duration <= 0 {
		return errors.New("apiServerDown.for must be positive")
	}
	return nil
}

// apply ends the kubelet process and starts a new one from the same assembly, as a kubelet
// restart does: the containers keep running in the runtime, the API server keeps its objects, the
// plugins keep their sockets and the device manager's checkpoint stays on disk, but everything in
// the kubelet's memory is gone (PodConfig, the pod manager, the pod workers and their back-offs,
// the status manager, the PLEG's cache, the crash-loop back-off, updates not yet handled, the
// plugin manager's caches, the device manager's endpoints). The new kubelet re-reads its sources,
// relists the runtime and the API server, rebuilds its pod workers from what they show, reads the
// device checkpoint back and registers again the plugins whose sockets its watcher finds.
func (*RestartKubelet) apply(ctx context.Context, e *engine, n *node) {
	e.stepEvent(trace.KindRestartKubelet, "", "")
	n.restarts++
	n.stopped = false // a new process runs, whether or not the old one was stopped
	if n.plugins != nil {
		// The old process's connections to the plugins end with it.
		n.plugins.KubeletStopped()
	}
	// What the old process keeps on disk is written as it stops (the kubelet writes the
	// allocation checkpoint at each change; no step reads it in between).
	n.kubelet.SaveCheckpoints(ctx)
	if e.cluster != nil {
		// The new process has its own event broadcaster: its correlator has seen none of the
		// old process's events, so a repeat of one is a new Event, not a count on the old one.
		events, err := e.cluster.KubeletEvents(n.name)
		if err != nil {
			e.stepError(trace.KindRestartKubelet, err)
			return
		}
		n.apiEvents = events
	}
	if err := e.startKubelet(n, n.kubelet.Runtime); err != nil {
		e.stepError(trace.KindRestartKubelet, err)
		return
	}
	n.inv = newInvariants()
}

// apply freezes the node's kubelet.
func (*StopNode) apply(_ context.Context, e *engine, n *node) {
	e.stepEvent(trace.KindStopNode, "", "the kubelet stops: no lease, no status, no sync")
	if n.stopped {
		e.stepError(trace.KindStopNode, errors.New("the node is already stopped"))
	}
	n.stopped = true
}

// apply resumes the node's kubelet.
func (*StartNode) apply(_ context.Context, e *engine, n *node) {
	e.stepEvent(trace.KindStartNode, "", "the kubelet carries on")
	if !n.stopped {
		e.stepError(trace.KindStartNode, errors.New("the node is not stopped"))
	}
	n.stopped = false
}

func (a *APIDeleteNode) apply(ctx context.Context, e *engine, _ *node) {
	e.stepEvent(trace.KindAPIDeleteNode, "", a.Name)
	if err := e.client.CoreV1().Nodes().Delete(ctx, a.Name, metav1.DeleteOptions{}); err != nil {
		e.stepError(trace.KindAPIDeleteNode, err)
	}
}

// apply cuts the node's connection to the API server until the outage ends.
func (a *APIServerDown) apply(_ context.Context, e *engine, n *node) {
	e.stepEvent(trace.KindAPIServerDown, "", "for "+a.For.String())
	n.link.CutUntil(e.clk.Now().Add(a.For.Duration))
}
