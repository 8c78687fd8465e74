// Package prober runs the kubelet's container probes: pkg/kubelet/prober (prober_manager.go,
// worker.go, prober.go), with the results caches of pkg/kubelet/prober/results in package results.
//
// The kubelet's prober manager starts one goroutine per (pod, container, probe type) for every
// main container and sidecar that has a liveness, readiness or startup probe. Each worker sleeps
// a random part of its period (only when the kubelet started less than one period ago), then runs
// doProbe at once and on every tick of a ticker with the probe's periodSeconds, or when the status
// manager's readiness check triggers it by hand (which also resets the ticker). doProbe reads the
// pod's cached status, resets the worker for each new container instance, skips while
// initialDelaySeconds has not elapsed since the container started, gates liveness and readiness
// behind the startup probe, runs the probe, counts consecutive equal outcomes against the
// success and failure thresholds, and writes the thresholded result to the type's results cache.
// A changed value is an update on the cache's channel, which the sync loop reads.
//
// Here the Manager is a core with no goroutines: a worker is a record with the instant its next
// doProbe is due, Advance runs every doProbe due at the clock's current instant (ordered by due
// time, then by worker creation), and returns the cache changes in the order they happened, and
// NextWake says when the next one is due. The initial random delay comes from a seeded source, so
// replays are byte-identical.
//
//	AddPod (SyncPod) ─▶ worker{next = now + jitter}
//	                          │ Advance at next
//	                          ▼
//	doProbe: status? ─▶ new container ID? ─▶ on hold? ─▶ running? ─▶ initialDelay? ─▶ started gate
//	         ─▶ probe (Script / annotations / success) ─▶ thresholds ─▶ cache.Set ─▶ Update
//	                          │
//	                          ▼ next = next tick (or now + period after a manual trigger)
//
// Nothing is really probed: the outcome of each probe is scripted (Script, for replay steps, and
// pod annotations, for run mode; see AnnotationPrefix), and is success when nothing says
// otherwise, so that manifests with probes behave like healthy workloads.
package prober
