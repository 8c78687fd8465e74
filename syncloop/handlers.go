package syncloop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/pleg"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/status"
)

// ErrSourcesNotReady is why a removed pod is not killed before every source has been seen: the
// kubelet's deletePod refuses, and housekeeping kills the pod later.
var ErrSourcesNotReady = errors.New("skipping delete because sources aren't ready yet")

// ErrUnsupportedOp is returned by Step for a config update whose Op the sync loop does not
// handle: SET (the kubelet runs PodConfig in incremental mode) or a value outside the enum.
var ErrUnsupportedOp = errors.New("unsupported pod operation")

// handlerFuncs names the handler each config operation dispatches to.
var handlerFuncs = map[podconfig.Op]string{
	podconfig.ADD:       "HandlePodAdditions",
	podconfig.UPDATE:    "HandlePodUpdates",
	podconfig.DELETE:    "HandlePodUpdates",
	podconfig.REMOVE:    "HandlePodRemoves",
	podconfig.RECONCILE: "HandlePodReconcile",
}

// handleConfig is the configCh case of syncLoopIteration.
func (l *Loop) handleConfig(ctx context.Context, u ConfigUpdate) error {
	ev := trace.Event{Event: trace.KindConfig, Op: u.Op.String(), Source: u.Source, Pods: l.podKeys(u.Pods), Func: handlerFuncs[u.Op]}
	l.observeOnWatch(u)
	var err error
	switch u.Op {
	case podconfig.ADD:
		l.emit(ev)
		l.handlePodAdditions(ctx, u.Pods)
	case podconfig.UPDATE, podconfig.DELETE:
		l.emit(ev)
		l.handlePodUpdates(ctx, u.Pods)
	case podconfig.REMOVE:
		l.emit(ev)
		l.handlePodRemoves(ctx, u.Pods)
	case podconfig.RECONCILE:
		l.emit(ev)
		l.handlePodReconcile(ctx, u.Pods)
	case podconfig.SET:
		err = fmt.Errorf("config update from source %q: kubelet does not support snapshot update: %w", u.Source, ErrUnsupportedOp)
	default:
		err = fmt.Errorf("config update from source %q with op %s: %w", u.Source, u.Op, ErrUnsupportedOp)
	}
	if err != nil {
		ev.Event, ev.Reason, ev.Message, ev.Func = trace.KindError, "InvalidOperation", err.Error(), "syncLoopIteration"
		l.emit(ev)
	}
	// The kubelet records the source after handling the update, whatever its op.
	l.seen.Insert(u.Source)
	return err
}

// handlePLEG is the plegCh case of syncLoopIteration.
func (l *Loop) handlePLEG(ctx context.Context, e PLEGEvent) {
	if e.Type != pleg.ContainerRemoved {
		// isSyncPodWorthy; events for UIDs the pod manager does not know are ignored.
		if pod, ok := l.opts.Pods.GetPodByUID(e.ID); ok {
			l.emit(trace.Event{Event: trace.KindPLEG, Pod: l.keyOf(pod), UID: string(e.ID), Op: e.Type.String(), Func: "HandlePodSyncs"})
			l.handlePodSyncs(ctx, []*v1.Pod{pod})
		}
	}
	if e.Type == pleg.ContainerDied && e.Data != "" {
		l.cleanUpContainersInPod(e.ID, e.Data)
	}
}

// handleHousekeepingTick is the housekeepingCh case of syncLoopIteration: nothing happens until
// every source has been seen.
func (l *Loop) handleHousekeepingTick(ctx context.Context) error {
	if !l.sourcesReady() {
		if !l.skipping.housekeeping {
			l.skipping.housekeeping = true
			l.emit(trace.Event{Component: trace.Housekeeping, Event: trace.KindSkip, Reason: "SourcesNotReady", Message: "not every pod source has been seen", Func: "syncLoopIteration"})
		}
		return nil
	}
	l.skipping.housekeeping = false
	return l.opts.Housekeeping.HandlePodCleanups(ctx)
}

// handleSyncTick is the syncCh case of syncLoopIteration: getPodsToSync, then HandlePodSyncs.
func (l *Loop) handleSyncTick(ctx context.Context) {
	pods := l.getPodsToSync()
	if len(pods) == 0 {
		return
	}
	l.emit(trace.Event{Event: trace.KindSync, Pods: l.podKeys(pods), Func: "HandlePodSyncs"})
	l.handlePodSyncs(ctx, pods)
}

// getPodsToSync returns the pods whose work queue entry is due, in the queue's order, then every
// other pod a sync loop handler asks for (a pod past its activeDeadlineSeconds), in the pod
// manager's order. Due UIDs the pod manager does not know (orphans driven by their own worker) are
// dropped, as in the kubelet.
func (l *Loop) getPodsToSync() []*v1.Pod {
	uids := l.opts.WorkQueue.GetWork()
	pods := make([]*v1.Pod, 0, len(uids))
	for _, uid := range uids {
		if pod, ok := l.opts.Pods.GetPodByUID(uid); ok {
			pods = append(pods, pod)
		}
	}
	if len(l.opts.SyncLoopHandlers) == 0 {
		return pods
	}
	// A search of the due UIDs instead of the kubelet's set of them: one map less at every tick.
	// The queue hands them out sorted already (the sort only checks it then), and a due UID the
	// pod manager does not know is no pod of GetPods either.
	slices.Sort(uids)
	for _, pod := range l.handlerPods() {
		if _, due := slices.BinarySearch(uids, pod.UID); due {
			continue
		}
		for _, h := range l.opts.SyncLoopHandlers {
			if h.ShouldSync(pod) {
				pods = append(pods, pod)
				break
			}
		}
	}
	return pods
}

// handlerPods returns the pods getPodsToSync asks the handlers about, in the pod manager's
// order: every pod, or, when every handler can filter and the pod manager numbers its changes,
// only the pods some handler may ask for, listed again after the pod manager changed. The pod
// manager replaces a pod's object at every change (no one changes a pod object it was handed),
// so a listed object's answer to MaySync stands until its version moves.
func (l *Loop) handlerPods() []*v1.Pod {
	a := &l.asked
	if a.versioned == nil {
		return l.opts.Pods.GetPods()
	}
	v := a.versioned.Version()
	if a.valid && a.version == v {
		return a.pods
	}
	clear(a.pods)
	kept := a.pods[:0]
	for _, pod := range l.opts.Pods.GetPods() {
		if slices.ContainsFunc(a.filters, func(f PodSyncLoopFilter) bool { return f.MaySync(pod) }) {
			kept = append(kept, pod)
		}
	}
	a.valid, a.version, a.pods = true, v, kept
	return kept
}

// handlePodAdditions is the kubelet's HandlePodAdditions: pods added by a source, oldest first.
// Mirror pods make their static pod sync; every other pod gets a Create. The pod manager learns
// each pod before the pod worker.
func (l *Loop) handlePodAdditions(ctx context.Context, pods []*v1.Pod) {
	sorted := append([]*v1.Pod(nil), pods...)
	sort.SliceStable(sorted, func(i, j int) bool {
		return sorted[i].CreationTimestamp.Before(&sorted[j].CreationTimestamp)
	})
	for _, p := range sorted {
		l.opts.Pods.AddPod(p)
		pod, mirror, wasMirror := l.opts.Pods.GetPodAndMirrorPod(p)
		if wasMirror {
			if pod == nil {
				l.skipMirror(p, "HandlePodAdditions")
				continue
			}
			l.updatePod(podworkers.SyncPodUpdate, pod, mirror)
			continue
		}
		// Admission: the device manager's resource allocation and the pod count (maxPods).
		if l.opts.Admit != nil && !l.opts.Admit.Admit(ctx, pod) {
			continue
		}
		l.updatePod(podworkers.SyncPodCreate, pod, mirror)
	}
	if l.opts.Resizes != nil {
		// A resize pending when the kubelet restarted is queued once every pod was added, so
		// that none is decided before all the allocated pods are known.
		l.handlePodSyncs(ctx, l.opts.Resizes.HandlePodAdditions(ctx, sorted))
	}
}

// handlePodUpdates is the kubelet's HandlePodUpdates, for UPDATE and DELETE: a changed mirror pod
// makes its static pod sync with the changed mirror attached.
func (l *Loop) handlePodUpdates(ctx context.Context, pods []*v1.Pod) {
	for _, p := range pods {
		old, _ := l.opts.Pods.GetPodByUID(p.UID)
		l.opts.Pods.UpdatePod(p)
		pod, mirror, wasMirror := l.opts.Pods.GetPodAndMirrorPod(p)
		if wasMirror && pod == nil {
			l.skipMirror(p, "HandlePodUpdates")
			continue
		}
		if l.opts.Resizes != nil && !wasMirror {
			// A resize allocated at once syncs the pod before the update does.
			l.handlePodSyncs(ctx, l.opts.Resizes.HandlePodUpdate(ctx, old, pod))
		}
		l.updatePod(podworkers.SyncPodUpdate, pod, mirror)
	}
}

// handlePodRemoves is the kubelet's HandlePodRemoves: pods a source no longer has. A removed
// mirror pod makes its static pod sync with the removed mirror attached; any other pod is killed
// once every source is ready.
func (l *Loop) handlePodRemoves(ctx context.Context, pods []*v1.Pod) {
	for _, p := range pods {
		l.opts.Pods.RemovePod(p)
		pod, mirror, wasMirror := l.opts.Pods.GetPodAndMirrorPod(p)
		if wasMirror {
			if pod == nil {
				l.skipMirror(p, "HandlePodRemoves")
				continue
			}
			l.updatePod(podworkers.SyncPodUpdate, pod, mirror)
			continue
		}
		if l.opts.Resizes != nil {
			l.opts.Resizes.RemovePod(pod.UID)
		}
		if err := l.deletePod(pod); err != nil {
			l.emit(trace.Event{Event: trace.KindError, Pod: podkey.Of(pod), UID: string(pod.UID), Reason: "FailedToDeletePod", Message: err.Error(), Func: "deletePod"})
		}
	}
	if l.opts.Resizes != nil {
		// The removed pods' resources may let a deferred resize fit.
		l.handlePodSyncs(ctx, l.opts.Resizes.RetryPendingResizes(ctx))
	}
}

// deletePod asks the pod worker to kill a removed pod, unless a source has not been seen yet.
func (l *Loop) deletePod(pod *v1.Pod) error {
	if !l.sourcesReady() {
		return fmt.Errorf("delete pod %s: %w", podkey.Of(pod), ErrSourcesNotReady)
	}
	l.opts.Workers.UpdatePod(podworkers.UpdateOptions{UpdateType: podworkers.SyncPodKill, Pod: pod})
	return nil
}

// handlePodReconcile is the kubelet's HandlePodReconcile: status-only changes. It records the pod,
// and syncs it at once when its Ready condition no longer matches its readiness gates (a gate's
// condition was set by someone else); an evicted pod also loses all its dead containers. When a
// resize is pending and a pod's requests shrank with its status (a resize down actuated), the
// pending resizes are retried once the update is handled.
func (l *Loop) handlePodReconcile(ctx context.Context, pods []*v1.Pod) {
	pending := l.opts.Resizes != nil && l.opts.Resizes.HasPendingResizes()
	retry := false
	for _, p := range pods {
		var old *v1.Pod
		if pending && !retry {
			old, _ = l.opts.Pods.GetPodByUID(p.UID)
		}
		l.opts.Pods.UpdatePod(p)
		pod, mirror, wasMirror := l.opts.Pods.GetPodAndMirrorPod(p)
		if wasMirror && pod == nil {
			l.skipMirror(p, "HandlePodReconcile")
			continue
		}
		if old != nil {
			retry = l.opts.Resizes.RequestsShrank(old, pod)
		}
		if status.NeedToReconcilePodReadiness(pod) {
			l.updatePod(podworkers.SyncPodSync, pod, mirror)
		}
		if pod.Status.Phase == v1.PodFailed && pod.Status.Reason == "Evicted" {
			if status, err := l.opts.Cache.Get(pod.UID); err == nil {
				l.deleteContainersInPod(pod.UID, "", status, true)
			}
		}
	}
	if retry {
		l.handlePodSyncs(ctx, l.opts.Resizes.RetryPendingResizes(ctx))
	}
}

// handlePodSyncs is the kubelet's HandlePodSyncs: it syncs pods after a PLEG event or a due work
// queue entry.
func (l *Loop) handlePodSyncs(ctx context.Context, pods []*v1.Pod) {
	for _, p := range pods {
		pod, mirror, wasMirror := l.opts.Pods.GetPodAndMirrorPod(p)
		if wasMirror {
			l.skipMirror(p, "HandlePodSyncs")
			continue
		}
		l.updatePod(podworkers.SyncPodSync, pod, mirror)
	}
}

func (l *Loop) updatePod(t podworkers.SyncPodType, pod, mirror *v1.Pod) {
	l.opts.Workers.UpdatePod(podworkers.UpdateOptions{UpdateType: t, Pod: pod, MirrorPod: mirror})
}

// skipMirror traces the kubelet's "Unable to find pod for mirror pod, skipping".
func (l *Loop) skipMirror(mirror *v1.Pod, fn string) {
	l.emit(trace.Event{Event: trace.KindSkip, Pod: podkey.Of(mirror), UID: string(mirror.UID), Reason: "MirrorPodWithoutStaticPod", Func: fn})
}

// sourcesReady is the kubelet's sourcesReady.AllReady.
func (l *Loop) sourcesReady() bool {
	return l.opts.SourcesReady == nil || l.opts.SourcesReady(l.seen)
}

// keyOf returns the pod's "namespace/name", built once for a run of events about the same pod:
// a relist hands over each pod's events one after the other (a sandbox and its container
// starting are two), and a pod handed on is never changed, so the same pointer has the same key.
func (l *Loop) keyOf(pod *v1.Pod) string {
	if pod != l.keyPod {
		l.keyPod, l.key = pod, l.opts.Keys.Of(pod)
	}
	return l.key
}

// podKeys returns "namespace/name" of each pod, in order.
func (l *Loop) podKeys(pods []*v1.Pod) []string {
	keys := make([]string, len(pods))
	for i, p := range pods {
		keys[i] = l.opts.Keys.Of(p)
	}
	return keys
}

// observeOnWatch tells the startup tracker of the API pods of u, as the kubelet's pod config does
// for every pod of a batch from a source other than a static one (removals aside).
func (l *Loop) observeOnWatch(u ConfigUpdate) {
	if l.opts.Startup == nil || u.Source != podconfig.APISource || u.Op == podconfig.REMOVE {
		return
	}
	now := l.opts.Clock.Now()
	for _, p := range u.Pods {
		l.opts.Startup.ObservedPodOnWatch(p, now)
	}
}

// SourcesReady reports whether every configured pod source has been seen (sourcesReady.AllReady),
// for the cores that wait for it outside the loop's own handlers.
func (l *Loop) SourcesReady() bool { return l.sourcesReady() }
