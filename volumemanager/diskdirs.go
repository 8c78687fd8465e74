package volumemanager

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

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

	// known is what is on disk, per pod and volume name: the volume's plugin directory.
	known map[types.UID]map[string]string
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
	if _, ok := d.known[pod.UID][name]; ok {
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
		d.known = map[types.UID]map[string]string{}
	}
	if d.known[uid] == nil {
		d.known[uid] = map[string]string{}
	}
	d.known[uid][name] = plugin
}

// Remove removes the volume's directory, then the pod's directories it leaves empty. Only an
// empty directory is removed: DiskDirs writes no file, so what a volume directory holds is
// someone else's (a real kubelet's root directory, another process over the same one), and
// stays. A directory that cannot be removed is logged and forgotten (its unmount is traced all
// the same; the kubelet would keep the volume mounted and retry): the next process finds it
// again.
func (d *DiskDirs) Remove(uid types.UID, name string) {
	plugin, ok := d.known[uid][name]
	if !ok {
		return
	}
	delete(d.known[uid], name)
	volumes := d.volumesDir(uid)
	path := filepath.Join(volumes, plugin, name)
	if err := os.Remove(path); err != nil {
		d.Logger.Error(fmt.Errorf("remove volume directory %s: %w", path, err), "UnmountVolume.TearDown failed", "podUID", uid, "volumeName", name)
		return
	}
	// Only what is empty goes: os.Remove fails on anything else, which is what is wanted.
	_ = os.Remove(filepath.Join(volumes, plugin))
	if len(d.known[uid]) == 0 {
		delete(d.known, uid)
		_ = os.Remove(volumes)
		_ = os.Remove(filepath.Dir(volumes))
	}
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
