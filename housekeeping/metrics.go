package housekeeping

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/metrics"
	"github.com/minikubelet/minikubelet/podworkers"
)

// Metrics is where a pass records its counts (kubelet_desired_pods, kubelet_active_pods,
// kubelet_mirror_pods, kubelet_restarted_pods_total, kubelet_working_pods,
// kubelet_orphaned_runtime_pods_total).
type Metrics interface {
	SetPodCounts(metrics.PodCounts)
}

// observe hands the pass's counts to the metrics, as HandlePodCleanups sets them.
func (c *Cleaner) observe(all, active, mirrors []*v1.Pod, restarted map[types.UID]bool, working map[types.UID]podworkers.PodWorkerSync, orphans int) {
	if c.opts.Metrics == nil {
		return
	}
	if c.buf.working == nil {
		c.buf.working = map[metrics.WorkingKey]int{}
	}
	clear(c.buf.working)
	counts := metrics.PodCounts{Mirror: len(mirrors), Restarted: restarted, Working: c.buf.working, OrphanedRuntimePods: orphans}
	for _, p := range all {
		if kubecontainer.IsStaticPod(p) {
			counts.DesiredStatic++
		} else {
			counts.DesiredRegular++
		}
	}
	for _, p := range active {
		if kubecontainer.IsStaticPod(p) {
			counts.ActiveStatic++
		} else {
			counts.ActiveRegular++
		}
	}
	for _, w := range working {
		counts.Working[workingKey(w)]++
	}
	c.opts.Metrics.SetPodCounts(counts)
}

// workingKey labels a worker as the kubelet's kubelet_working_pods does.
func workingKey(w podworkers.PodWorkerSync) metrics.WorkingKey {
	k := metrics.WorkingKey{Lifecycle: w.State.String(), Config: "desired"}
	if w.Orphan {
		k.Config = "orphan"
	}
	switch {
	case !w.HasConfig:
		k.Config, k.Static = "runtime_only", "unknown"
	case w.Static:
		k.Static = "true"
	}
	return k
}
