package volumemanager

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Dirs is where a Manager keeps what it mounted beyond the process, as the kubelet's pod
// directories keep it: PodDirs in memory (a replay, whose restartKubelet keeps it per node),
// DiskDirs in the root directory (`run`). Every call comes from the Manager's one goroutine.
type Dirs interface {
	// Add records the successful SetUp of the pod's volume; an error fails the SetUp, as a
	// volume directory the plugin cannot make does.
	Add(pod *v1.Pod, name string, src v1.VolumeSource) error
	// Remove records the TearDown of the pod's volume: the volume's directory goes, the pod's
	// stays for housekeeping (CleanupOrphans). An error fails the TearDown, which the
	// reconciler retries after its back-off.
	Remove(uid types.UID, name string) error
	// CleanupOrphans is housekeeping's cleanupOrphanedPodDirs: it removes the directory of every
	// pod that keep does not keep. A directory that cannot be removed is logged and left for the
	// next pass.
	CleanupOrphans(keep func(types.UID) bool)
	// Reconstruct is what a new process finds before its reconciler's first pass: per pod, in
	// the order of the pods' UIDs, its volumes sorted by name.
	Reconstruct() []Reconstructed
	// HasVolumes reports whether the pod's directory holds a volume's directory, which a new
	// process would reconstruct and tear down. It makes no system call.
	HasVolumes(uid types.UID) bool
}

// Reconstructed is one pod's directory as a new process finds it. Pod carries at least the UID;
// PodDirs also keeps its name and spec, DiskDirs knows only the UID, as the directory names it.
type Reconstructed struct {
	Pod     *v1.Pod
	Volumes []string
}

// PodDirs is what the kubelet's root directory keeps of the mounted volumes: a volume's directory
// under pods/<uid>/volumes is made by its SetUp (for the plugins that make one: writesPodDir) and removed by its TearDown, so it outlives the
// process. A restarted kubelet's reconciler reads these directories before its first pass and
// reconstructs each volume as mounted but uncertain (reconstructVolumes). The zero value keeps
// nothing; a Manager records its mounts and unmounts in the PodDirs of its options.
type PodDirs struct {
	pods map[types.UID]*dirPod
	// emptied lists the pods whose last volume was removed: their directories are what
	// CleanupOrphans looks at. A directory that holds a volume is never removed here: in memory
	// a TearDown always succeeds, so a volume whose directory is left is possibly mounted, which
	// keeps the pod's directory in the kubelet too (podVolumesExist).
	emptied []types.UID
}

// dirPod is one pod's directory: the pod as it was mounted for (the trace names it), and its
// volumes in the order they were mounted; none once they were all torn down, until housekeeping
// removes the directory.
type dirPod struct {
	pod     *v1.Pod
	volumes []string
	// listed is set while the pod is in emptied.
	listed bool
}

// writesPodDir reports whether the volume's SetUp makes a directory under the pod's volumes
// directory, which a restarted kubelet reconstructs the volume from (getVolumesFromPodDir). A
// hostPath volume's path is the host's (its GetPath), and an image volume's SetUp does nothing:
// neither leaves anything to reconstruct. A PersistentVolumeClaim's directory is its
// PersistentVolume plugin's: a CSI or local volume makes one, a hostPath-backed one does not. A
// simulated node does not resolve the claim to its volume, so a claim counts as making one, the
// common case of a storage class's volume.
func writesPodDir(src v1.VolumeSource) bool {
	return src.HostPath == nil && src.Image == nil
}

// mountsOnItsDir reports whether v1.35's plugin for src mounts a filesystem on the volume's
// directory after making it: the emptyDir that Secret, projected and downwardAPI volumes wrap
// (medium Memory, a tmpfs), and an emptyDir of medium Memory or HugePages. A disk-backed emptyDir
// (a ConfigMap's wraps one) is the directory alone.
func mountsOnItsDir(src v1.VolumeSource) bool {
	switch {
	case src.Secret != nil, src.Projected != nil, src.DownwardAPI != nil:
		return true
	case src.EmptyDir != nil:
		return src.EmptyDir.Medium == v1.StorageMediumMemory || strings.HasPrefix(string(src.EmptyDir.Medium), string(v1.StorageMediumHugePages))
	}
	return false
}

// Add records the volume in memory; it never fails.
func (d *PodDirs) Add(pod *v1.Pod, name string, _ v1.VolumeSource) error {
	d.add(pod, name)
	return nil
}

// Remove forgets the volume; it never fails. The pod's directory stays, for CleanupOrphans.
func (d *PodDirs) Remove(uid types.UID, name string) error {
	d.remove(uid, name)
	return nil
}

// CleanupOrphans removes the directories left without a volume of the pods keep does not keep.
func (d *PodDirs) CleanupOrphans(keep func(types.UID) bool) {
	if d == nil || len(d.emptied) == 0 {
		return
	}
	left := d.emptied[:0]
	for _, uid := range d.emptied {
		p, ok := d.pods[uid]
		if !ok {
			continue
		}
		if len(p.volumes) > 0 {
			// Mounted again since: no longer a candidate until its volumes go again.
			p.listed = false
			continue
		}
		if keep(uid) {
			left = append(left, uid)
			continue
		}
		delete(d.pods, uid)
	}
	clear(d.emptied[len(left):])
	d.emptied = left
}

// HasPodDir reports whether the pod's directory is there, with or without a volume.
func (d *PodDirs) HasPodDir(uid types.UID) bool {
	if d == nil {
		return false
	}
	_, ok := d.pods[uid]
	return ok
}

// HasVolumes reports whether a volume of the pod is held.
func (d *PodDirs) HasVolumes(uid types.UID) bool {
	if d == nil {
		return false
	}
	p, ok := d.pods[uid]
	return ok && len(p.volumes) > 0
}

// Reconstruct returns the pods and volumes held, each pod as it was mounted for.
func (d *PodDirs) Reconstruct() []Reconstructed {
	var out []Reconstructed
	for _, pm := range d.reconstruct() {
		out = append(out, Reconstructed{Pod: pm.pod, Volumes: pm.uncertain})
	}
	return out
}

func (d *PodDirs) add(pod *v1.Pod, name string) {
	if d == nil {
		return
	}
	if d.pods == nil {
		d.pods = map[types.UID]*dirPod{}
	}
	p, ok := d.pods[pod.UID]
	if !ok {
		p = &dirPod{pod: pod}
		d.pods[pod.UID] = p
	} else if len(p.volumes) == 0 {
		p.pod = pod
	}
	if !slices.Contains(p.volumes, name) {
		p.volumes = append(p.volumes, name)
	}
}

func (d *PodDirs) remove(uid types.UID, name string) {
	if d == nil {
		return
	}
	p, ok := d.pods[uid]
	if !ok {
		return
	}
	n := len(p.volumes)
	p.volumes = slices.DeleteFunc(p.volumes, func(v string) bool { return v == name })
	if n > 0 && len(p.volumes) == 0 && !p.listed {
		// The pod's directory stays until housekeeping finds it orphaned.
		p.listed = true
		d.emptied = append(d.emptied, uid)
	}
}

// reconstruct is what a new process finds on disk: per pod, in the order of the pods' UIDs, its
// volumes sorted by name (getVolumesFromPodDir reads the directories in name order).
func (d *PodDirs) reconstruct() []*podMounts {
	if d == nil || len(d.pods) == 0 {
		return nil
	}
	uids := make([]types.UID, 0, len(d.pods))
	for uid, p := range d.pods {
		// A pod's directory without a volume has nothing to reconstruct.
		if len(p.volumes) > 0 {
			uids = append(uids, uid)
		}
	}
	slices.Sort(uids)
	out := make([]*podMounts, 0, len(uids))
	for _, uid := range uids {
		p := d.pods[uid]
		out = append(out, &podMounts{pod: p.pod, uncertain: slices.Sorted(slices.Values(p.volumes))})
	}
	return out
}

// CleanupOrphanedPodDirs is housekeeping's cleanupOrphanedPodDirs: it removes the directory of
// every pod that keep does not keep (the pod manager's pods and the runtime's running pods) and
// whose volumes are none possibly mounted, mounted or uncertain (podVolumesExist). The pods'
// directories go at the first housekeeping pass after their pod is gone and its last volume
// was torn down. It allocates nothing: housekeeping calls it at every pass.
func (m *Manager) CleanupOrphanedPodDirs(keep func(types.UID) bool) {
	if m.keepDir == nil {
		m.keepDir = func(uid types.UID) bool {
			_, possiblyMounted := m.mounted[uid]
			return possiblyMounted || m.keep(uid)
		}
	}
	m.keep = keep
	m.opts.PodDirs.CleanupOrphans(m.keepDir)
	m.keep = nil
}
