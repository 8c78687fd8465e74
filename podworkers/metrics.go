package podworkers

import "time"

// Metrics is where the workers record each iteration (kubelet_pod_worker_duration_seconds).
type Metrics interface {
	// ObservePodWorker records one iteration by operation: the update type, or "terminated".
	ObservePodWorker(operation string, d time.Duration)
}

// observe records the iteration of wk, which ended at wk.done (now, if unset). The kubelet measures from the update's
// StartTime, when its handler received it; the workers measure from the moment the worker took
// the update (docs/fidelity.md).
func (w *Workers) observe(wk *work) {
	if w.metrics == nil || wk == nil {
		return
	}
	op := wk.opts.UpdateType.String()
	if wk.state == Terminated {
		op = "terminated"
	}
	end := wk.done
	if end.IsZero() {
		end = w.clock.Now()
	}
	w.metrics.ObservePodWorker(op, end.Sub(wk.taken))
}
