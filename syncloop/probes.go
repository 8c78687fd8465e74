package syncloop

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/prober"
	"github.com/minikubelet/minikubelet/prober/results"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Prober is the prober manager: its workers run when due, and the results cache changes they make
// are the loop's ProbeUpdate inputs.
type Prober interface {
	// Advance runs the probes due now and returns the changes of the results caches, in order.
	Advance(ctx context.Context) []prober.Update
	NextWake() (time.Time, bool)
}

// ProbeStatusSetter is the status manager's optional part that probe results write to at once,
// before the pod syncs: the kubelet's SetContainerReadiness and SetContainerStartup.
type ProbeStatusSetter interface {
	SetContainerReadiness(uid types.UID, containerID string, ready bool)
	SetContainerStartup(uid types.UID, containerID string, started bool)
}

// ProbeUpdate is one change of a results cache: the livenessManager, readinessManager and
// startupManager cases of syncLoopIteration.
type ProbeUpdate struct {
	prober.Update
}

func (ProbeUpdate) kind() string { return "probe" }

// handleProbe is the probe cases of syncLoopIteration: a liveness Failure syncs the pod (whose
// runtime sync then kills the container); a readiness or startup change is written to the status
// manager at once, then syncs the pod. A liveness Success does nothing.
func (l *Loop) handleProbe(ctx context.Context, u ProbeUpdate) {
	setter, _ := l.opts.Status.(ProbeStatusSetter)
	var status string
	switch u.Probe {
	case prober.Liveness:
		if u.Result != results.Failure {
			return
		}
		status = "unhealthy"
	case prober.Readiness:
		ready := u.Result == results.Success
		if setter != nil {
			setter.SetContainerReadiness(u.PodUID, u.ContainerID, ready)
		}
		status = "not ready"
		if ready {
			status = "ready"
		}
	case prober.Startup:
		started := u.Result == results.Success
		if setter != nil {
			setter.SetContainerStartup(u.PodUID, u.ContainerID, started)
		}
		status = "unhealthy"
		if started {
			status = "started"
		}
	}
	// handleProbeSync: the pod manager's pod, not the one the worker was created with.
	pod, ok := l.opts.Pods.GetPodByUID(u.PodUID)
	if !ok {
		return
	}
	l.emit(trace.Event{Event: trace.KindProbe, Pod: l.keyOf(pod), UID: string(pod.UID), Op: u.Probe.Name(), To: status, Message: u.ContainerID, Func: "handleProbeSync"})
	l.handlePodSyncs(ctx, []*v1.Pod{pod})
}
