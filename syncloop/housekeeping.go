package syncloop

import (
	"context"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/trace"
)

// handleHousekeepingTick is the housekeepingCh case of syncLoopIteration: nothing happens until
// every source has been seen.
func (l *Loop) handleHousekeepingTick(ctx context.Context) error {
	if !l.sourcesReady() {
		if !l.skipping.housekeeping {
			l.skipping.housekeeping = true
			l.emit(trace.Event{Component: trace.Housekeeping, Event: "skip", Reason: "SourcesNotReady", Message: "not every pod source has been seen", Func: "syncLoopIteration"})
		}
		return nil
	}
	l.skipping.housekeeping = false
	return l.HandlePodCleanups(ctx)
}

// HandlePodCleanups is the kubelet's housekeeping pass: forget finished workers of pods no longer
// desired and start terminating orphans (SyncKnownPods), drop orphaned statuses, delete orphaned
// mirror pods whose static pod is not terminating, restart desired pods the workers do not know,
// finish the deletion of terminal pods nobody runs, and kill runtime pods nobody knows.
// Probes, pod directories, user namespaces and cgroups are not modelled.
func (l *Loop) HandlePodCleanups(ctx context.Context) error {
	pm := l.opts.PodManager
	allPods, mirrorPods, orphanedMirrors := pm.GetPodsAndMirrorPods()
	working := l.workers.SyncKnownPods(allPods)

	running, err := l.opts.Runtime.GetPods(false)
	if err != nil {
		err = fmt.Errorf("housekeeping: list running pods: %w", err)
		l.emit(trace.Event{Component: trace.Housekeeping, Event: "error", Reason: "FailedToListPods", Message: err.Error(), Func: "HandlePodCleanups"})
		return err
	}

	known := make(map[types.UID]bool, len(allPods)+len(mirrorPods))
	for _, p := range allPods {
		known[p.UID] = true
	}
	for _, p := range mirrorPods {
		known[p.UID] = true
	}
	l.status.RemoveOrphanedStatuses(known)

	sort.Strings(orphanedMirrors)
	for _, fullName := range orphanedMirrors {
		if l.workers.IsPodForMirrorPodTerminatingByFullName(fullName) {
			continue
		}
		l.deleteOrphanedMirror(ctx, fullName)
	}

	for _, pod := range l.filterOutInactivePods(allPods) {
		if _, known := working[pod.UID]; known {
			continue
		}
		static, mirror, wasMirror := pm.GetPodAndMirrorPod(pod)
		if static == nil || wasMirror {
			continue
		}
		l.emit(trace.Event{Component: trace.Housekeeping, Event: "restart", Pod: kubecontainer.PodKey(pod), UID: string(pod.UID), Func: "HandlePodCleanups"})
		l.updatePod(podworkers.SyncPodCreate, static, mirror)
		working[pod.UID] = podworkers.PodWorkerSync{State: podworkers.Sync, HasConfig: true, Static: kubecontainer.IsStaticPod(pod)}
	}

	for _, pod := range filterTerminalPodsToDelete(allPods, running, working) {
		l.emit(trace.Event{Component: trace.Housekeeping, Event: "kill", Pod: kubecontainer.PodKey(pod), UID: string(pod.UID), Reason: "TerminalPodDeleted", Func: "HandlePodCleanups"})
		l.workers.UpdatePod(podworkers.UpdateOptions{UpdateType: podworkers.SyncPodKill, Pod: pod})
	}

	sort.Slice(running, func(i, j int) bool { return running[i].ID < running[j].ID })
	for _, rp := range running {
		if _, known := working[rp.ID]; known {
			continue
		}
		grace := orphanKillGracePeriod
		l.emit(trace.Event{Component: trace.Housekeeping, Event: "kill", Pod: rp.Namespace + "/" + rp.Name, UID: string(rp.ID), Reason: "OrphanedRuntimePod", Func: "HandlePodCleanups"})
		l.workers.UpdatePod(podworkers.UpdateOptions{
			UpdateType:     podworkers.SyncPodKill,
			RunningPod:     rp,
			KillPodOptions: &podworkers.KillPodOptions{PodTerminationGracePeriodSecondsOverride: &grace},
		})
		working[rp.ID] = podworkers.PodWorkerSync{State: podworkers.Terminating, Orphan: true}
	}

	l.backoff.GC()
	return nil
}

// deleteOrphanedMirror deletes the mirror pod of a static pod that is gone, with grace 0 and no
// UID precondition. Without a mirror client (standalone) there is none.
func (l *Loop) deleteOrphanedMirror(ctx context.Context, fullName string) {
	if l.opts.MirrorClient == nil {
		return
	}
	name, namespace, _ := kubecontainer.ParsePodFullName(fullName)
	ev := trace.Event{Component: trace.Housekeeping, Event: "delete-mirror", Pod: namespace + "/" + name, Reason: "OrphanedMirrorPod", Func: "HandlePodCleanups"}
	l.emit(ev)
	// The mirror client traces the API call and its outcome; only a bad full name is an error.
	if _, err := l.opts.MirrorClient.DeleteMirrorPod(ctx, fullName, nil); err != nil {
		l.emit(with(ev, "error", "FailedToDeleteMirrorPod", err.Error()))
	}
}

// filterOutInactivePods returns the pods that are admitted and not done: the kubelet's
// filterOutInactivePods. A pod is inactive once its worker is terminated, or when it is terminal
// (in the API or the status manager) and not terminating.
func (l *Loop) filterOutInactivePods(pods []*v1.Pod) []*v1.Pod {
	active := make([]*v1.Pod, 0, len(pods))
	for _, p := range pods {
		if l.workers.IsPodKnownTerminated(p.UID) {
			continue
		}
		if l.isAdmittedPodTerminal(p) && !l.workers.IsPodTerminationRequested(p.UID) {
			continue
		}
		active = append(active, p)
	}
	return active
}

// isAdmittedPodTerminal reports whether the pod's API phase, or the status manager's, is terminal.
func (l *Loop) isAdmittedPodTerminal(pod *v1.Pod) bool {
	if terminalPhase(pod.Status.Phase) {
		return true
	}
	phase, ok := l.status.GetPodPhase(pod.UID)
	return ok && terminalPhase(phase)
}

func terminalPhase(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }

// filterTerminalPodsToDelete returns the pods being deleted that are terminal, unknown to the
// workers and absent from the runtime, so that a kill lets their API deletion finish.
func filterTerminalPodsToDelete(pods []*v1.Pod, running []*kubecontainer.Pod, working map[types.UID]podworkers.PodWorkerSync) []*v1.Pod {
	inRuntime := make(map[types.UID]bool, len(running))
	for _, rp := range running {
		inRuntime[rp.ID] = true
	}
	var out []*v1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil || !terminalPhase(p.Status.Phase) || inRuntime[p.UID] {
			continue
		}
		if _, known := working[p.UID]; known {
			continue
		}
		out = append(out, p)
	}
	return out
}
