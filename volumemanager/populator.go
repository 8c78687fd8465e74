package volumemanager

import (
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
)

// populate is one pass of the desired state of world populator (populatorLoop): add the volumes
// of the pods that may run, then drop those of the pods whose runtime may be removed.
func (m *Manager) populate(now time.Time) {
	m.changedAt = time.Time{}
	states := m.opts.States
	if !m.podsChanged && m.hasAddedPods {
		m.populateReprocessed()
		return
	}
	m.podsChanged = false
	m.walkAll = true
	clear(m.reprocess)
	m.reprocess = m.reprocess[:0]
	for _, pod := range m.opts.Pods.GetPods() {
		// Before the sources are all seen the kubelet may be reconstructing the volumes of
		// pods still being torn down; after, a pod that is terminating gets no new volume.
		if m.hasAddedPods && states.ShouldPodContainersBeTerminating(pod.UID) {
			continue
		}
		if !m.hasAddedPods && states.ShouldPodRuntimeBeRemoved(pod.UID) {
			continue
		}
		m.processPodVolumes(pod)
	}
	m.removeDeletedPods()
	if m.opts.SourcesReady == nil || m.opts.SourcesReady() {
		m.hasAddedPods = true
	} else if m.removed && m.anyToUnmount() {
		// A volume to unmount (one reconstructed that no pod uses) waits for the first pass
		// after the sources are ready: the kubelet's loops run every tick, so look again at
		// the next.
		m.changed(now)
	}
}

// populateReprocessed is a pass after which nothing but ReprocessPod asked: every pod sync asks
// for its pod. The pod manager's pods and what the workers answer about them are as the last
// full pass saw them (each of their changes calls PodsChanged), so that pass's decisions stand for
// every other pod, and no pod is to be removed: only the pods asked for, each in the desired
// state already, are looked at again, as a full pass would (the same checks, and the same
// remounts: what processPodVolumes does to a pod it knows depends on no other pod).
func (m *Manager) populateReprocessed() {
	for _, uid := range m.reprocess {
		p, ok := m.desired[uid]
		if !ok || p.processed || m.opts.States.ShouldPodContainersBeTerminating(uid) {
			continue
		}
		// A pod stays desired after the pod manager let it go, until its runtime may be
		// removed; a sync taken before it went may still ask. The full pass walks the pod
		// manager's pods, so it would not look at that one again: neither does this.
		pod, ok := m.opts.Pods.GetPodByUID(uid)
		if !ok {
			continue
		}
		m.processPodVolumes(pod)
	}
	clear(m.reprocess)
	m.reprocess = m.reprocess[:0]
}

// processPodVolumes adds the volumes the pod's containers use to the desired state, unless it was
// processed and not asked to be looked at again; a pod looked at again has its mounted volumes
// remounted (MarkRemountRequired: the plugins that refresh their content).
func (m *Manager) processPodVolumes(pod *v1.Pod) {
	p, known := m.desired[pod.UID]
	if known && p.processed {
		return
	}
	if !known {
		m.added++
		p = &podVolumes{seq: m.added}
		m.desired[pod.UID] = p
		m.order = append(m.order, pod.UID)
	}
	m.processed = append(m.processed, p)
	p.pod = pod
	for _, vol := range usedVolumes(pod) {
		if !slices.ContainsFunc(p.volumes, func(d *desiredVolume) bool { return d.name == vol.Name }) {
			p.volumes = append(p.volumes, &desiredVolume{name: vol.Name, source: vol.VolumeSource})
		}
	}
	p.processed = true
	delete(m.errors, pod.UID)
	if pm, ok := m.mounted[pod.UID]; ok {
		for _, v := range p.volumes {
			if slices.Contains(pm.volumes, v.name) && requiresRemount(v.source) {
				v.remount = true
			}
		}
	}
}

// removeDeletedPods drops from the desired state the volumes of every pod whose runtime may be
// removed (its worker terminated it, or it is unknown), whether or not the pod manager still has
// it (findAndRemoveDeletedPods); the reconciler then unmounts them. A volume that is neither
// mounted nor uncertain stays desired while the pod manager still has its pod: the kubelet skips
// it ("Actual state does not yet have volume mount information and pod still exists in pod
// manager"), so a mount that keeps failing (a pod rejected at admission before the pod workers'
// first SyncKnownPods: it never had the SyncPod that registers its ConfigMaps) is tried again at
// its back-off until the pod leaves the pod manager, and one that succeeds meanwhile is
// unmounted at the pass after. A volume a restarted kubelet reconstructed is uncertain even
// while its SetUp fails (a terminating pod it found had no SyncPod either): it is dropped, and
// torn down.
func (m *Manager) removeDeletedPods() {
	kept := m.order[:0]
	for _, uid := range m.order {
		if !m.opts.States.ShouldPodRuntimeBeRemoved(uid) {
			kept = append(kept, uid)
			continue
		}
		p := m.desired[uid]
		_, inPodManager := m.opts.Pods.GetPodByUID(uid)
		left := p.volumes[:0]
		for _, v := range p.volumes {
			if inPodManager && !m.possiblyMounted(uid, v.name) {
				left = append(left, v)
				continue
			}
			if !v.failedAt.IsZero() {
				m.failing--
			}
			m.removed = true
		}
		clear(p.volumes[len(left):])
		p.volumes = left
		if len(left) > 0 {
			kept = append(kept, uid)
			continue
		}
		delete(m.desired, uid)
		m.removed = true
		delete(m.errors, uid)
		m.forgetIfGone(uid)
		if m.opts.Tokens != nil {
			// A pod whose projected volume never got mounted has no teardown to forget its
			// tokens in: its requests in flight and failed answers go with it here (a mounted
			// one's teardown forgets them again, which is harmless).
			m.opts.Tokens.DeleteServiceAccountToken(uid)
		}
	}
	clear(m.order[len(kept):])
	m.order = kept
}

// requiresRemount reports whether the volume's plugin sets it up again at a remount, to refresh
// what it projects (RequiresRemount).
func requiresRemount(src v1.VolumeSource) bool {
	return src.Secret != nil || src.ConfigMap != nil || src.Projected != nil || src.DownwardAPI != nil
}
