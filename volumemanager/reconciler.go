package volumemanager

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/events"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// reconcile is one pass of the reconciler: unmount what is mounted but no longer desired, then
// mount what is desired and not mounted, or asked to be remounted, unless its operation is
// backing off.
func (m *Manager) reconcile(now time.Time) {
	m.unmountVolumes(now)
	processed := m.processed
	defer func() {
		clear(processed)
		m.processed, m.walkAll = processed[:0], false
	}()
	if m.walkAll || m.failing > 0 {
		for _, uid := range m.order {
			m.reconcilePod(now, m.desired[uid])
		}
		return
	}
	// Only the pods the populator looked at can have a volume to mount or remount (processed),
	// visited in the order of the full walk; a pod looked at twice is visited once.
	slices.SortFunc(processed, func(a, b *podVolumes) int { return cmp.Compare(a.seq, b.seq) })
	for i, p := range processed {
		if i == 0 || p != processed[i-1] {
			m.reconcilePod(now, p)
		}
	}
}

// reconcilePod mounts, or remounts, the pod's volumes that need it and whose back-off expired.
func (m *Manager) reconcilePod(now time.Time, p *podVolumes) {
	for _, v := range p.volumes {
		mounted := m.isMounted(p.pod.UID, v.name)
		if v.waiting || mounted && !v.remount {
			continue
		}
		// SafeToRetry: the back-off has expired only strictly after its duration.
		if !v.failedAt.IsZero() && now.Sub(v.failedAt) <= v.backoff {
			continue
		}
		m.mountVolume(now, p.pod, v, mounted)
	}
}

// mountVolume is the operation executor's MountVolume: SetUp, then the volume is mounted, or the
// FailedMount event and a longer back-off. A failed remount leaves the volume mounted.
func (m *Manager) mountVolume(now time.Time, pod *v1.Pod, v *desiredVolume, remount bool) {
	// The plugin reads its objects (the projected volume asks its token) before the wrapped
	// emptyDir sets up, which is where the node fails it: a scripted failure comes after the
	// reads, so a missing object still fails the SetUp with its own error and a token is still
	// asked at each try. A tmpfs or hugetlbfs is mounted on the volume's directory once it is
	// made (setupTmpfs, setupHugepages), so a failed mount leaves the directory; a disk-backed
	// emptyDir (a ConfigMap's too) only makes the directory, so its failure is that. A remount
	// never gets there: v1.35's emptyDir SetUpAt returns early for a volume already set up, so
	// only a first mount can fail this way.
	err := m.setUp(pod, v)
	mounted := mountsOnItsDir(v.source)
	if err == nil && mounted {
		err = m.opts.PodDirs.Add(pod, v.name, v.source)
	}
	if err == nil && !remount {
		err = m.fault(pod, v.name, OpSetUp)
	}
	if err == nil && writesPodDir(v.source) && !mounted {
		// The plugin's SetUp makes the volume's directory first; one it cannot make fails it.
		err = m.opts.PodDirs.Add(pod, v.name, v.source)
	}
	if m.opts.Tokens != nil {
		m.opts.Tokens.EndSetUp(errors.Is(err, errTokenPending))
	}
	if err != nil {
		if errors.Is(err, errTokenPending) {
			v.waiting = true
			return
		}
		if v.backoff == 0 {
			v.backoff = initialBackoff
		} else {
			v.backoff = min(2*v.backoff, maxBackoff)
		}
		if v.failedAt.IsZero() {
			m.failing++
		}
		v.failedAt = now
		if m.opts.Recorder != nil {
			// GenerateError's simple message, which the event carries.
			m.opts.Recorder.Event(pod, v1.EventTypeWarning, events.FailedMountVolume, "MountVolume.SetUp failed for volume \""+v.name+"\" : "+err.Error())
		}
		return
	}
	if !v.failedAt.IsZero() {
		m.failing--
	}
	v.failedAt, v.backoff, v.remount = time.Time{}, 0, false
	if remount {
		return
	}
	pm, ok := m.mounted[pod.UID]
	if !ok {
		pm = &podMounts{pod: pod}
		m.mounted[pod.UID] = pm
	} else if pm.pod.Name == "" {
		// Reconstructed from its directory alone: the desired pod names it from now on.
		pm.pod = pod
	}
	// A reconstructed volume whose SetUp succeeded is mounted, no longer uncertain.
	pm.uncertain = slices.DeleteFunc(pm.uncertain, func(n string) bool { return n == v.name })
	pm.volumes = append(pm.volumes, v.name)
	m.emit(pod, trace.Event{Event: trace.KindMount, Message: v.name, Func: "GenerateMountVolumeFunc"})
	if m.opts.States.ShouldPodRuntimeBeRemoved(pod.UID) {
		// A volume kept desired only because it was not mounted (removeDeletedPods): the next
		// populator pass finds it mounted and lets it go.
		m.podsChanged = true
		m.changed(now)
	}
}

// mountWaiting carries on the mounts whose SetUp waited for a token, once an answer came back: the
// kubelet's mount operation goes on in its goroutine as soon as the token manager returns. A
// mount still waiting for another token keeps waiting.
func (m *Manager) mountWaiting(now time.Time) {
	for _, uid := range m.order {
		p := m.desired[uid]
		for _, v := range p.volumes {
			if v.waiting {
				v.waiting = false
				m.mountVolume(now, p.pod, v, m.isMounted(uid, v.name))
			}
		}
	}
}

// unmountVolumes tears down every mounted volume whose pod is no longer desired, or no longer
// uses it, unless its last TearDown failed and its back-off has not expired. A projected
// volume's teardown forgets the pod's service account tokens.
func (m *Manager) unmountVolumes(now time.Time) {
	// A pass follows every pod's periodic sync (ReprocessPod), and nearly all find every mounted
	// volume still desired: nothing left the desired state since the last unmount step, or
	// nothing mounted is among what left, and no TearDown waits for its retry. Sort only then.
	if !m.hasAddedPods || !m.removed && len(m.unmountFailed) == 0 {
		return
	}
	m.removed = false
	if !m.anyToUnmount() {
		// Every volume whose TearDown failed is desired again: the reconciler sets it up, and
		// no retry is due.
		clear(m.unmountFailed)
		return
	}
	uids := make([]string, 0, len(m.mounted))
	for uid := range m.mounted {
		uids = append(uids, string(uid))
	}
	slices.Sort(uids)
	for _, s := range uids {
		pm := m.mounted[types.UID(s)]
		p := m.desired[pm.pod.UID]
		var failed []string
		pm.volumes, failed = m.tearDown(now, pm, p, pm.volumes, true, nil)
		pm.uncertain, failed = m.tearDown(now, pm, p, pm.uncertain, false, failed)
		// A mounted volume whose TearDown failed is uncertain from now on
		// (MarkVolumeMountAsUncertain): possibly mounted, no longer mounted.
		pm.uncertain = append(pm.uncertain, failed...)
		if len(pm.volumes) == 0 && len(pm.uncertain) == 0 {
			delete(m.mounted, pm.pod.UID)
			m.forgetIfGone(pm.pod.UID)
		}
	}
}

// tearDown unmounts the volumes of names that p no longer has (all of them when the pod is no
// longer desired), and returns those it keeps, in names' storage, and failed with the volumes
// whose TearDown failed now appended when names are mounted ones (uncertain ones stay in kept).
// A failed TearDown is retried at the first pass after its back-off, as the operation executor
// does (exponentialBackoff: 500ms doubled up to 2m2s); it makes no event, only a log line.
func (m *Manager) tearDown(now time.Time, pm *podMounts, p *podVolumes, names []string, mounted bool, failed []string) (kept, _ []string) {
	kept = names[:0]
	for _, name := range names {
		key := volumeKey{uid: pm.pod.UID, name: name}
		if p != nil && p.has(name) {
			// Desired again: the reconciler sets it up, and the retry is no more.
			delete(m.unmountFailed, key)
			kept = append(kept, name)
			continue
		}
		r := m.unmountFailed[key]
		if r != nil && now.Sub(r.failedAt) <= r.backoff {
			kept = append(kept, name)
			continue
		}
		// A scripted failure fails the TearDown before it removes the volume's directory.
		err := m.fault(pm.pod, name, OpTearDown)
		if err == nil {
			err = m.opts.PodDirs.Remove(pm.pod.UID, name)
		}
		if err != nil {
			m.unmountFailure(now, pm.pod, key, err)
			if mounted {
				failed = append(failed, name)
			} else {
				kept = append(kept, name)
			}
			continue
		}
		delete(m.unmountFailed, key)
		// The projected volume forgets the pod's tokens once its wrapped TearDown succeeded.
		if m.opts.Tokens != nil && m.isProjected(pm.pod, name) {
			m.opts.Tokens.DeleteServiceAccountToken(pm.pod.UID)
		}
		m.emit(pm.pod, trace.Event{Event: trace.KindUnmount, Message: name, Func: "GenerateUnmountVolumeFunc"})
	}
	clear(names[len(kept):])
	return kept, failed
}

// volumeKey names one pod's volume, the operation executor's key of its operations.
type volumeKey struct {
	uid  types.UID
	name string
}

// unmountRetry is a failed TearDown's back-off: the last failure and the wait before the next
// try.
type unmountRetry struct {
	failedAt time.Time
	backoff  time.Duration
}

// unmountFailure records a failed TearDown: its back-off grows (nestedpendingoperations), and
// the error is logged, as the kubelet logs it, with no event (the unmount operation has no event
// recorder).
func (m *Manager) unmountFailure(now time.Time, pod *v1.Pod, key volumeKey, err error) {
	if m.unmountFailed == nil {
		m.unmountFailed = map[volumeKey]*unmountRetry{}
	}
	r := m.unmountFailed[key]
	if r == nil {
		r = &unmountRetry{backoff: initialBackoff}
		m.unmountFailed[key] = r
	} else {
		r.backoff = min(2*r.backoff, maxBackoff)
	}
	r.failedAt = now
	m.opts.Logger.Error(fmt.Errorf("UnmountVolume.TearDown failed for volume %q pod %q (UID: %q): %w", key.name, pod.Name, key.uid, err),
		"Operation failed, no retries permitted until the back-off expires", "podUID", key.uid, "volumeName", key.name,
		"noRetriesUntil", now.Add(r.backoff), "durationBeforeRetry", r.backoff)
}

// anyToUnmount reports whether a volume is mounted that its pod no longer uses, or whose pod is no
// longer desired.
func (m *Manager) anyToUnmount() bool {
	for uid, pm := range m.mounted {
		p := m.desired[uid]
		if p == nil {
			return true
		}
		for _, name := range pm.volumes {
			if !p.has(name) {
				return true
			}
		}
		for _, name := range pm.uncertain {
			if !p.has(name) {
				return true
			}
		}
	}
	return false
}

// has reports whether the pod's desired volumes include name.
func (p *podVolumes) has(name string) bool {
	for _, d := range p.volumes {
		if d.name == name {
			return true
		}
	}
	return false
}

// isMounted reports whether the volume is mounted for the pod; an uncertain one is not
// (PodExistsInVolume: the reconciler keeps trying to mount it).
func (m *Manager) isMounted(uid types.UID, name string) bool {
	pm, ok := m.mounted[uid]
	return ok && slices.Contains(pm.volumes, name)
}

// possiblyMounted reports whether the volume is mounted or uncertain for the pod: either way
// the actual state has it (PodRemovedFromVolume is false).
func (m *Manager) possiblyMounted(uid types.UID, name string) bool {
	pm, ok := m.mounted[uid]
	return ok && (slices.Contains(pm.volumes, name) || slices.Contains(pm.uncertain, name))
}

// isProjected reports whether the pod's volume name is a projected volume.
func (m *Manager) isProjected(pod *v1.Pod, name string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Name == name {
			return v.Projected != nil
		}
	}
	return false
}
