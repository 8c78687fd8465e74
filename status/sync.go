package status

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// maxTerminationMessageLength is the budget for all termination messages of one pod, shared
// equally among its containers: the kubelet's MaxPodTerminationMessageLogLength.
const maxTerminationMessageLength = 1024 * 12

// NextWake returns when the Manager next has writing to do: now while a changed status waits to
// be written, else the next full batch. A standalone Manager, or one with nothing cached and
// nothing written, has none.
func (m *Manager) NextWake() (time.Time, bool) {
	if m.client == nil {
		return time.Time{}, false
	}
	if m.pending {
		return m.clock.Now(), true
	}
	if len(m.statuses) == 0 && len(m.apiVersions) == 0 {
		return time.Time{}, false
	}
	return m.nextFull, true
}

// Step does the writing due at the clock's current time: a full batch (every status checked,
// reconciled with the pod manager's copy and retried) when one is due, otherwise the statuses
// changed since their last write. It returns the API errors met, joined; a failed write is
// retried by a later batch, as in the kubelet. Step is the status manager's goroutine stepped on
// the core's own; a Runner makes the writes on a goroutine of its own instead.
func (m *Manager) Step(ctx context.Context) error {
	var errs []error
	for _, w := range m.takeBatch() {
		r, err := m.writer().sync(ctx, w)
		m.apply(r)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// takeBatch is the first half of the kubelet's syncBatch, on the core's goroutine: it decides
// whether a full batch is due and picks the statuses to write, each with what its write needs of
// the pod manager and the pod workers as they are now. Nil when nothing is due.
func (m *Manager) takeBatch() []write {
	if m.client == nil {
		return nil
	}
	now := m.clock.Now()
	all := !now.Before(m.nextFull)
	if all {
		periods := now.Sub(m.anchored)/m.period + 1
		m.nextFull = m.anchored.Add(periods * m.period)
	}
	if !all && !m.pending {
		return nil
	}
	m.pending = false
	batch := m.collect(all)
	if len(batch) > 0 {
		translations := m.pods.MirrorTranslations()
		for i := range batch {
			batch[i].translations = translations
		}
	}
	return batch
}

// write is one status to write: the kubelet's podSync, with what syncPod asks the rest of the
// kubelet taken when the batch was (the pod manager and the pod workers belong to the sync
// loop's goroutine).
type write struct {
	uid    types.UID // the pod's own UID, the key of the cache
	status versioned
	// translations is the pod manager's TranslatePodUID table, shared by the batch's writes:
	// an API object whose UID does not translate to uid was deleted and recreated.
	translations map[types.UID]types.UID
	// couldRun and couldRunMirror are the pod workers' answers for uid and for a mirror pod's
	// UID: while containers may run, a terminal phase is held back.
	couldRun, couldRunMirror bool
}

// written is what one write changes in the core, applied on the core's goroutine.
type written struct {
	uid types.UID
	// version is the status version the API object apiUID now has; zero when none was written.
	version uint64
	apiUID  types.UID
	// patched is the pod as stored after a status patch, for the startup tracker.
	patched *v1.Pod
	// forget drops the cached status: the pod was deleted, or recreated under another UID.
	forget bool
}

// apply records what a write did: syncPod's update of apiStatusVersions and its
// deletePodStatus.
func (m *Manager) apply(r written) {
	if r.patched != nil && m.startup != nil {
		m.startup.RecordStatusUpdated(r.patched)
	}
	if r.version != 0 {
		m.apiVersions[r.apiUID] = r.version
		m.written++
	}
	if r.forget {
		m.forget(r.uid)
	}
}

// statusWriter makes syncPod's API calls. It holds nothing of the core, so it runs on any
// goroutine.
type statusWriter struct {
	client PodStatusClient
	clock  clock.PassiveClock
	tracer trace.Tracer
}

func (m *Manager) writer() statusWriter {
	return statusWriter{client: m.client, clock: m.clock, tracer: m.tracer}
}

// collect picks the statuses to write, in namespace, name, UID order: the first half of the
// kubelet's syncBatch.
func (m *Manager) collect(all bool) []write {
	if all && m.quietFull() {
		return nil
	}
	batch := m.pick(all)
	if all {
		m.recordFull(len(batch))
	}
	return batch
}

// pick is collect's work.
func (m *Manager) pick(all bool) []write {
	if all {
		for uid := range m.apiVersions {
			_, hasPod := m.statuses[uid]
			hasMirror := m.pods.TranslatePodUID(uid) != uid
			if !hasPod && !hasMirror {
				delete(m.apiVersions, uid)
			}
		}
	}
	for uid := range m.reconciled {
		if _, ok := m.statuses[uid]; !ok {
			delete(m.reconciled, uid)
		}
	}
	// A full batch every 10s of a node whose statuses are all written and reconciled writes
	// nothing: look, in no order and without a copy, before sorting. Each status's decision
	// depends on nothing the others' decisions change unless one is written, so none is
	// written here only when none would be in order either.
	if !m.anyToWrite(all) {
		return nil
	}
	uids := make([]types.UID, 0, len(m.statuses))
	for uid := range m.statuses {
		uids = append(uids, uid)
	}
	sort.Slice(uids, func(i, j int) bool {
		a, b := m.statuses[uids[i]], m.statuses[uids[j]]
		if a.namespace != b.namespace {
			return a.namespace < b.namespace
		}
		if a.name != b.name {
			return a.name < b.name
		}
		return uids[i] < uids[j]
	})

	var batch []write
	for _, uid := range uids {
		v := m.statuses[uid]
		target, write, reconcile := m.decide(uid, v, all)
		if !write {
			continue
		}
		if reconcile {
			delete(m.apiVersions, target)
		}
		batch = append(batch, m.newWrite(uid, target, v))
	}
	return batch
}

// anyToWrite reports whether a batch would write any status.
func (m *Manager) anyToWrite(all bool) bool {
	for uid, v := range m.statuses {
		if _, write, _ := m.decide(uid, v, all); write {
			return true
		}
	}
	return false
}

// decide is a batch's decision for the status of the pod uid: the UID of the API object its
// status goes to (the mirror pod's for a static pod), whether it is written, and whether that
// is to reconcile the pod manager's copy, which drops the version written first.
func (m *Manager) decide(uid types.UID, v *versioned, all bool) (target types.UID, write, reconcile bool) {
	target = uid
	if pod, ok := m.pods.GetPodByUID(uid); ok && kubecontainer.IsStaticPod(pod) {
		mirror, ok := m.pods.GetMirrorPodByPod(pod)
		if !ok {
			return target, false, false // no mirror pod yet: nowhere to write
		}
		target = mirror.UID
	}
	switch {
	case !all:
		return target, m.apiVersions[target] < v.version, false
	case m.needsUpdate(target, v):
		return target, true, false
	case m.needsReconcile(uid, v):
		return target, true, true
	}
	return target, false, false
}

// newWrite is the write of the status v of the pod uid to the API object target.
func (m *Manager) newWrite(uid, target types.UID, v *versioned) write {
	w := write{uid: uid, status: *v}
	if m.safety != nil {
		w.couldRun = m.safety.PodCouldHaveRunningContainers(uid)
		w.couldRunMirror = w.couldRun
		if target != uid {
			w.couldRunMirror = m.safety.PodCouldHaveRunningContainers(target)
		}
	}
	return w
}

// needsUpdate reports whether the status was never written at this version, or the pod can now
// be deleted.
func (m *Manager) needsUpdate(target types.UID, v *versioned) bool {
	latest, ok := m.apiVersions[target]
	if !ok || latest < v.version {
		return true
	}
	pod, ok := m.pods.GetPodByUID(target)
	return ok && canBeDeleted(pod, v.finished)
}

// needsReconcile reports whether the pod manager's copy of the API status (the mirror pod's, for
// a static pod) differs from the cached one, so the cached one must be written again.
//
// The answer is memoized per UID: the pod manager replaces a pod's object on every change and
// never edits one in place, so the same object and the same cached version give the same answer.
// Without the memo every full batch (each 10s) compared every pod's status by reflection.
func (m *Manager) needsReconcile(uid types.UID, v *versioned) bool {
	pod, ok := m.pods.GetPodByUID(uid)
	if !ok {
		return false
	}
	if kubecontainer.IsStaticPod(pod) {
		if pod, ok = m.pods.GetMirrorPodByPod(pod); !ok {
			return false
		}
	}
	if memo, ok := m.reconciled[uid]; ok && memo.pod == pod && memo.version == v.version {
		return memo.needs
	}
	api := pod.Status.DeepCopy()
	normalizeStatus(pod, api)
	needs := !equalByKubelet(api, &v.status)
	m.reconciled[uid] = reconcileMemo{pod: pod, version: v.version, needs: needs}
	return needs
}

// reconcileMemo is the last needsReconcile answer for one UID.
type reconcileMemo struct {
	pod     *v1.Pod // the API object compared, as the pod manager held it
	version uint64  // the cached status version compared
	needs   bool
}

// canBeDeleted reports whether the API object pod can be deleted: it is being deleted, it is not
// a mirror pod, its API phase is terminal and the pod worker finished with it.
func canBeDeleted(pod *v1.Pod, finished bool) bool {
	if pod.DeletionTimestamp == nil || kubecontainer.IsMirrorPod(pod) {
		return false
	}
	return isTerminal(pod.Status.Phase) && finished
}

// sync writes one status to the API: the kubelet's status manager syncPod. What it changes in the
// core is returned, for apply.
func (sw statusWriter) sync(ctx context.Context, w write) (written, error) {
	key := w.status.key
	done := written{uid: w.uid}
	pod, err := sw.client.GetPod(ctx, w.status.namespace, w.status.name)
	if apierrors.IsNotFound(err) {
		return done, nil // the pod is gone; RemoveOrphanedStatuses will drop the status
	}
	if err != nil {
		sw.traceError(key, w.uid, err)
		return done, err
	}
	translated := pod.UID
	if t, ok := w.translations[pod.UID]; ok {
		translated = t
	}
	if translated != w.uid {
		done.forget = true
		sw.tracer.Emit(trace.Event{Component: trace.Status, Event: trace.KindDrop, Pod: key, UID: string(w.uid),
			Reason: "Recreated", Message: "pod was deleted and then recreated with UID " + string(translated), Func: "syncPod"})
		return done, nil
	}
	couldRun := w.couldRun
	if pod.UID != w.uid {
		couldRun = w.couldRunMirror // the pod workers know the static pod, not its mirror
	}
	merged := mergePodStatus(pod.Status, w.status.status, pod.Generation, couldRun, sw.clock.Now())
	patch, unchanged, err := statusPatch(pod.UID, pod.Status, merged)
	if err != nil {
		return done, fmt.Errorf("status patch for pod %s: %w", key, err)
	}
	if !unchanged {
		from := pod.Status.Phase
		pod, err = sw.client.PatchPodStatus(ctx, pod.Namespace, pod.Name, patch)
		if err != nil {
			sw.traceError(key, w.uid, err)
			return done, err
		}
		sw.tracer.Emit(trace.Event{Component: trace.Status, Event: trace.KindPatch, Pod: key, UID: string(pod.UID),
			From: string(from), To: string(pod.Status.Phase), Func: "syncPod"})
		done.patched = pod
	}
	done.apiUID, done.version = pod.UID, w.status.version

	if !canBeDeleted(pod, w.status.finished) {
		return done, nil
	}
	if err := sw.client.DeletePod(ctx, pod.Namespace, pod.Name, pod.UID); err != nil {
		sw.traceError(key, w.uid, err)
		return done, err
	}
	sw.tracer.Emit(trace.Event{Component: trace.Status, Event: trace.KindDelete, Pod: key, UID: string(pod.UID),
		To: string(pod.Status.Phase), Func: "syncPod"})
	done.forget = true
	return done, nil
}

// forget drops a status after its pod was deleted or recreated: the kubelet's deletePodStatus.
func (m *Manager) forget(uid types.UID) {
	delete(m.statuses, uid)
	m.changed(uid)
	if m.startup != nil {
		m.startup.DeletePodStartupState(uid)
	}
}

// traceError records a failed API call.
func (sw statusWriter) traceError(key string, uid types.UID, err error) {
	sw.tracer.Emit(trace.Event{Component: trace.Status, Event: trace.KindError, Pod: key, UID: string(uid),
		Message: err.Error(), Func: "syncPod"})
}

// mergePodStatus returns next with the API's conditions the kubelet does not own kept, with a
// move to a terminal phase held back while containers could still run, and with a terminal
// phase's ready conditions false (observing generation, the API pod's). The kubelet's
// mergePodStatus.
//
// next is the cache's status and shares its slices with it: what is merged gets a conditions
// slice of its own and new values of the fields it changes, never a write into a slice of next
// or old (TestMergePodStatusLeavesItsInputs), so the status the patch is computed from needs no
// deep copy of the cache's (it was one for each write: 1.6 KB a pod while a fleet's pods
// start, by BenchmarkNodeHeap's allocation profile).
func mergePodStatus(old, next v1.PodStatus, generation int64, couldHaveRunningContainers bool, now time.Time) v1.PodStatus {
	conditions := make([]v1.PodCondition, 0, len(old.Conditions)+len(next.Conditions))
	for _, c := range old.Conditions {
		if !ownedByKubelet(c.Type) {
			conditions = append(conditions, c)
		}
	}
	toTerminal := !isTerminal(old.Phase) && isTerminal(next.Phase)
	for _, c := range next.Conditions {
		switch {
		case ownedByKubelet(c.Type):
			conditions = append(conditions, c)
		case c.Type == v1.DisruptionTarget && toTerminal && !couldHaveRunningContainers:
			// Sent only now, so its transition time is now unless the API already had it.
			tmp := v1.PodStatus{Conditions: []v1.PodCondition{c}}
			stampTransitions(&tmp, &old, now)
			c = tmp.Conditions[0]
			if i, _ := findCondition(conditions, c.Type); i >= 0 {
				conditions[i] = c
			} else {
				conditions = append(conditions, c)
			}
		}
	}
	next.Conditions = conditions
	next.ResourceClaimStatuses = old.ResourceClaimStatuses
	if toTerminal && couldHaveRunningContainers {
		next.Phase, next.Reason, next.Message = old.Phase, old.Reason, old.Message
	}
	if isTerminal(next.Phase) && (conditionTrue(next.Conditions, v1.PodReady) || conditionTrue(next.Conditions, v1.ContainersReady)) {
		// Both are set false as soon as either is true, each as UpdatePodCondition sets one: a
		// condition already false keeps its transition time, a missing one is appended. The
		// generation is the API pod's (PodObservedGenerationTracking is GA and locked on).
		for _, t := range []v1.PodConditionType{v1.ContainersReady, v1.PodReady} {
			tc := terminalReadyCondition(t, generation, next.Phase)
			tc.LastTransitionTime = metav1.NewTime(now)
			i, c := findCondition(next.Conditions, t)
			if c == nil {
				next.Conditions = append(next.Conditions, tc)
				continue
			}
			if c.Status == tc.Status {
				tc.LastTransitionTime = c.LastTransitionTime
			}
			next.Conditions[i] = tc
		}
	}
	return next
}

// conditionTrue reports whether conditions hold a condition of type t whose status is True.
func conditionTrue(conditions []v1.PodCondition, t v1.PodConditionType) bool {
	_, c := findCondition(conditions, t)
	return c != nil && c.Status == v1.ConditionTrue
}

// normalizeStatus rounds every timestamp to the second, as the API stores them, cuts termination
// messages to their share of the pod's budget and sorts the container statuses, so that a status
// read back from the API compares equal to the one written.
func normalizeStatus(pod *v1.Pod, status *v1.PodStatus) {
	perContainer := maxTerminationMessageLength
	if n := len(pod.Spec.Containers) + len(pod.Spec.InitContainers) + len(pod.Spec.EphemeralContainers); n > 0 {
		perContainer /= n
	}
	round := func(t *metav1.Time) { *t = toSecond(*t) }
	state := func(s *v1.ContainerState) {
		if s.Running != nil {
			round(&s.Running.StartedAt)
		}
		if s.Terminated != nil {
			round(&s.Terminated.StartedAt)
			round(&s.Terminated.FinishedAt)
			if len(s.Terminated.Message) > perContainer {
				s.Terminated.Message = s.Terminated.Message[:perContainer]
			}
		}
	}
	if status.StartTime != nil {
		round(status.StartTime)
	}
	for i := range status.Conditions {
		round(&status.Conditions[i].LastProbeTime)
		round(&status.Conditions[i].LastTransitionTime)
	}
	for _, list := range [][]v1.ContainerStatus{status.ContainerStatuses, status.InitContainerStatuses, status.EphemeralContainerStatuses} {
		for i := range list {
			state(&list[i].State)
			state(&list[i].LastTerminationState)
		}
	}
	// By name, as the kubelet's sort of SortedContainerStatuses (names are unique in a status;
	// a stable sort keeps the order of equal ones), without a reflection swapper.
	byName := func(a, b v1.ContainerStatus) int { return strings.Compare(a.Name, b.Name) }
	slices.SortStableFunc(status.ContainerStatuses, byName)
	slices.SortStableFunc(status.EphemeralContainerStatuses, byName)
	sortInitContainerStatuses(pod, status.InitContainerStatuses)
}

// sortInitContainerStatuses puts the init container statuses in the spec's order as the kubelet's
// SortInitContainerStatuses does: each spec container, in turn, swaps its status to the front of
// the statuses not yet placed, so a status that names no spec container ends up after them all.
func sortInitContainerStatuses(pod *v1.Pod, statuses []v1.ContainerStatus) {
	placed := 0
	for _, c := range pod.Spec.InitContainers {
		for j := placed; j < len(statuses); j++ {
			if statuses[j].Name == c.Name {
				statuses[placed], statuses[j] = statuses[j], statuses[placed]
				placed++
				break
			}
		}
	}
}

// toSecond is metav1.Time's Rfc3339Copy, the round trip through RFC 3339 text the kubelet makes
// of each timestamp, without the text where truncating to the second gives the same Time: a time
// in UTC or Local (the virtual clock's and the real clock's), with an offset of whole minutes and a
// four-digit year. The parse of an offset of zero ("Z") gives UTC, of another offset Local's own
// zone. The status manager rounds every timestamp of every status it is handed, and the text cost
// two allocations each.
func toSecond(t metav1.Time) metav1.Time {
	loc := t.Location()
	_, offset := t.Zone()
	if y := t.Year(); loc != time.UTC && loc != time.Local || offset%60 != 0 || y < 1 || y > 9999 {
		return t.Rfc3339Copy()
	}
	s := t.Truncate(time.Second)
	if offset == 0 {
		s = s.UTC()
	}
	return metav1.NewTime(s)
}
