package volumemanager

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// DiskDirs keeps the mounted volumes in the root directory's layout, as the kubelet's plugins
// do: a SetUp makes <root>/pods/<uid>/volumes/<plugin dir>/<volume name>, a TearDown removes it,
// and a new process reads the directories before its reconciler's first pass
// (getVolumesFromPodDir). Nothing else is written: the directory names are all there is, so a
// reconstructed pod is known by its UID alone, as it is to the kubelet. Every call runs on the
// Manager's goroutine (the sync loop's, where the allocation checkpoint is written too); a
// volume recorded once makes no system call at its remounts.
type DiskDirs struct {
	// Root is the kubelet's root directory.
	Root string
	// Logger receives what cannot be read or removed, which never stops the rest.
	Logger klog.Logger

	// known is what is on disk, per pod: its volumes' names and plugin directories. A slice
	// a pod rather than a map: a pod has a few volumes, and a map of its own cost each pod of
	// a fleet's node some 300 bytes more.
	known map[types.UID][]diskVolume
}

// diskVolume is a volume directory on disk: the volume's name and its plugin's directory.
type diskVolume struct {
	name, plugin string
}

// plugin is the plugin directory of the pod's volume on disk, and whether there is one.
func (d *DiskDirs) plugin(uid types.UID, name string) (string, bool) {
	for _, v := range d.known[uid] {
		if v.name == name {
			return v.plugin, true
		}
	}
	return "", false
}

// PodsDir is the directory under the root directory that holds one directory per pod UID.
const PodsDir = "pods"

// pluginDir is the directory v1.35 names the volume's plugin by under a pod's volumes directory
// (the plugin's name, its "/" escaped as "~"); "" for a volume whose SetUp makes none there
// (writesPodDir). A claim's directory is its volume's plugin's: a simulated node does not
// resolve the claim, and counts it as a CSI volume, the common case of a storage class's.
func pluginDir(src v1.VolumeSource) string {
	switch {
	case src.Secret != nil:
		return "kubernetes.io~secret"
	case src.ConfigMap != nil:
		return "kubernetes.io~configmap"
	case src.Projected != nil:
		return "kubernetes.io~projected"
	case src.EmptyDir != nil:
		return "kubernetes.io~empty-dir"
	case src.DownwardAPI != nil:
		return "kubernetes.io~downward-api"
	case src.NFS != nil:
		return "kubernetes.io~nfs"
	case src.ISCSI != nil:
		return "kubernetes.io~iscsi"
	case src.FC != nil:
		return "kubernetes.io~fc"
	case src.GitRepo != nil:
		return "kubernetes.io~git-repo"
	case src.FlexVolume != nil:
		// A FlexVolume plugin is named by its driver, vendor/driver.
		return strings.ReplaceAll(src.FlexVolume.Driver, "/", "~")
	case src.HostPath != nil, src.Image != nil:
		return ""
	default:
		// csi, ephemeral, persistentVolumeClaim and the in-tree volumes migrated to CSI.
		return "kubernetes.io~csi"
	}
}

// onePathElement reports whether s names one directory entry: a static pod's manifest may give
// its pod any UID, and a volume directory must stay under the root directory's pods.
func onePathElement(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`)
}

// knownPluginDirs are the plugin directories a new process reconstructs volumes from; another
// is a plugin this kubelet does not have, whose volumes v1.35 cannot reconstruct either.
var knownPluginDirs = []string{
	"kubernetes.io~configmap", "kubernetes.io~csi", "kubernetes.io~downward-api", "kubernetes.io~empty-dir",
	"kubernetes.io~fc", "kubernetes.io~git-repo", "kubernetes.io~iscsi", "kubernetes.io~nfs", "kubernetes.io~projected",
	"kubernetes.io~secret",
}

func (d *DiskDirs) volumesDir(uid types.UID) string {
	return filepath.Join(d.Root, PodsDir, string(uid), "volumes")
}

// Add makes the volume's directory, unless it is already recorded. A volume whose pod UID,
// plugin or name is not one path element (a static pod's manifest chose its UID) is kept off
// the disk, where the kubelet would make its directory wherever the path leads: a simulator
// writes nothing outside its root directory, and a restarted process does not reconstruct it.
func (d *DiskDirs) Add(pod *v1.Pod, name string, src v1.VolumeSource) error {
	plugin := pluginDir(src)
	if plugin == "" {
		return nil
	}
	if !onePathElement(string(pod.UID)) || !onePathElement(plugin) || !onePathElement(name) {
		d.Logger.Info("Volume directory not made: its pod UID, plugin or name is not one path element", "podUID", pod.UID, "plugin", plugin, "volumeName", name)
		return nil
	}
	if _, ok := d.plugin(pod.UID, name); ok {
		return nil
	}
	path := filepath.Join(d.volumesDir(pod.UID), plugin, name)
	if err := os.MkdirAll(path, 0o750); err != nil {
		return fmt.Errorf("make volume directory %s: %w", path, err)
	}
	d.record(pod.UID, name, plugin)
	return nil
}

func (d *DiskDirs) record(uid types.UID, name, plugin string) {
	if d.known == nil {
		d.known = map[types.UID][]diskVolume{}
	}
	vs := d.known[uid]
	for i := range vs {
		if vs[i].name == name {
			vs[i].plugin = plugin
			return
		}
	}
	d.known[uid] = append(vs, diskVolume{name: name, plugin: plugin})
}

// wrapsEmptyDir reports whether the plugin's TearDown is emptyDir's (secret, configMap,
// projected, downwardAPI and gitRepo wrap it): it removes the volume's directory with what it
// holds (os.RemoveAll), so a directory that is not empty does not fail it. The other plugins
// (CSI's removeMountDir, the mount utilities' CleanupMountPoint) remove only an empty one, and
// their TearDown fails on the rest.
func wrapsEmptyDir(plugin string) bool {
	switch plugin {
	case "kubernetes.io~empty-dir", "kubernetes.io~secret", "kubernetes.io~configmap", "kubernetes.io~projected",
		"kubernetes.io~downward-api", "kubernetes.io~git-repo":
		return true
	}
	return false
}

// Remove removes the volume's directory, as its plugin's TearDown does; the pod's directory,
// and the plugin's and volumes directories in it, stay for housekeeping (CleanupOrphans). A
// directory already gone is torn down. Only an empty directory is removed: DiskDirs writes no
// file, so what a volume directory holds is someone else's (a real kubelet's root directory,
// another process over the same one). Such a directory fails the TearDown of a plugin whose
// TearDown removes only an empty one (CSI, NFS, iSCSI, FC, FlexVolume), which the reconciler
// retries after its back-off; emptyDir's TearDown (and that of the plugins wrapping it) would
// remove it with its contents and succeed: here it succeeds and the directory is left, logged.
// Any other error fails the TearDown.
func (d *DiskDirs) Remove(uid types.UID, name string) error {
	plugin, ok := d.plugin(uid, name)
	if !ok {
		return nil
	}
	path := filepath.Join(d.volumesDir(uid), plugin, name)
	err := syscall.Rmdir(path)
	switch {
	case err == nil, errors.Is(err, os.ErrNotExist):
	case wrapsEmptyDir(plugin) && notEmpty(err):
		d.Logger.Info("Volume directory left in place: it holds what this process did not write", "path", path, "podUID", uid, "volumeName", name)
	default:
		return fmt.Errorf("remove volume directory %s: %w", path, err)
	}
	vs := slices.DeleteFunc(d.known[uid], func(v diskVolume) bool { return v.name == name })
	if len(vs) == 0 {
		delete(d.known, uid)
	} else {
		d.known[uid] = vs
	}
	return nil
}

// notEmpty reports whether err is rmdir's on a directory that is not empty.
func notEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)
}

// CleanupOrphans is housekeeping's cleanupOrphanedPodDirs over <root>/pods: every pod directory
// keep does not keep goes, when it can. First every volume directory left (rmdir: only an empty
// one), then the volumes directory's empty tree; a volume left stops the pod's cleanup (its
// directory stays, for the next pass). Then the pod's other subdirectories and the pod's
// directory, empty ones only: the kubelet removes what they hold (RemoveAllOneFilesystem), but
// DiskDirs never writes there, so what is there is someone else's and stays, logged. A pod
// directory on disk that this process never mounted a volume in is an orphan as well (the
// kubelet lists the disk, not its memory).
func (d *DiskDirs) CleanupOrphans(keep func(types.UID) bool) {
	podsDir := filepath.Join(d.Root, PodsDir)
	pods, err := os.ReadDir(podsDir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			d.Logger.Error(fmt.Errorf("read pods directory %s: %w", podsDir, err), "Failed cleaning up orphaned pod directories")
		}
		return
	}
	for _, p := range pods {
		if !p.IsDir() || keep(types.UID(p.Name())) {
			continue
		}
		d.removeOrphan(types.UID(p.Name()))
	}
}

// removeOrphan removes one orphaned pod's directory (removeOrphanedPodVolumeDirs, then the rest).
func (d *DiskDirs) removeOrphan(uid types.UID) {
	podDir := filepath.Join(d.Root, PodsDir, string(uid))
	volumes := d.volumesDir(uid)
	if err := removeEmptyTree(volumes); err != nil && !errors.Is(err, os.ErrNotExist) {
		d.Logger.Error(err, "Orphaned pod found, but its volumes directory cannot be removed", "podUID", uid, "path", volumes)
		return
	}
	delete(d.known, uid)
	subdirs, err := os.ReadDir(podDir)
	if err != nil {
		d.Logger.Error(fmt.Errorf("read %s: %w", podDir, err), "Could not read directory", "podUID", uid)
		return
	}
	for _, sub := range subdirs {
		path := filepath.Join(podDir, sub.Name())
		if err := removeEmptyTree(path); err != nil {
			d.Logger.Error(err, "Failed to remove orphaned pod subdir", "podUID", uid, "path", path)
		}
	}
	if err := syscall.Rmdir(podDir); err != nil {
		d.Logger.Error(fmt.Errorf("remove %s: %w", podDir, err), "Failed to remove orphaned pod dir", "podUID", uid)
		return
	}
	d.Logger.V(3).Info("Orphaned pod found, removed", "podUID", uid)
}

// removeEmptyTree removes the directory and the directories under it, deepest first, when none
// holds anything else (the kubelet's RemoveDirsOneFilesystem): a file, a link, anything not a
// directory stops it, and is never removed.
func removeEmptyTree(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("remove %s: not a directory", path)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	for _, e := range entries {
		if err := removeEmptyTree(filepath.Join(path, e.Name())); err != nil {
			return err
		}
	}
	if err := syscall.Rmdir(path); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

// HasVolumes reports whether a volume directory of the pod is known to be on disk: one this
// process made and did not remove, or one it reconstructed.
func (d *DiskDirs) HasVolumes(uid types.UID) bool {
	return len(d.known[uid]) > 0
}

// Reconstruct reads <root>/pods: every directory under a pod's volumes/<known plugin dir> is a
// volume, reconstructed for a pod known by its UID alone. What cannot be read, a file where a
// directory should be, or an unknown plugin directory is logged and skipped.
func (d *DiskDirs) Reconstruct() []Reconstructed {
	podsDir := filepath.Join(d.Root, PodsDir)
	pods, err := os.ReadDir(podsDir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			d.Logger.Error(fmt.Errorf("read pods directory %s: %w", podsDir, err), "Cannot get volumes from pod directory")
		}
		return nil
	}
	var out []Reconstructed
	for _, p := range pods {
		if !p.IsDir() {
			continue
		}
		uid := types.UID(p.Name())
		plugins, err := os.ReadDir(d.volumesDir(uid))
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				d.Logger.Error(fmt.Errorf("read %s: %w", d.volumesDir(uid), err), "Cannot get volumes from pod directory", "podUID", uid)
			}
			continue
		}
		var names []string
		for _, pl := range plugins {
			pluginPath := filepath.Join(d.volumesDir(uid), pl.Name())
			if !pl.IsDir() {
				continue
			}
			if !slices.Contains(knownPluginDirs, pl.Name()) {
				d.Logger.Info("Could not find a volume plugin for a pod's volume directory", "path", pluginPath, "podUID", uid)
				continue
			}
			vols, err := os.ReadDir(pluginPath)
			if err != nil {
				d.Logger.Error(fmt.Errorf("read %s: %w", pluginPath, err), "Cannot get volumes from pod directory", "podUID", uid)
				continue
			}
			for _, v := range vols {
				if !v.IsDir() || slices.Contains(names, v.Name()) {
					continue
				}
				names = append(names, v.Name())
				d.record(uid, v.Name(), pl.Name())
			}
		}
		if len(names) == 0 {
			continue
		}
		slices.Sort(names)
		out = append(out, Reconstructed{Pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}}, Volumes: names})
	}
	return out
}
