package volumemanager

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/sim/vclock"
)

// failingDirs is a PodDirs whose TearDown of a volume fails while fail says so.
type failingDirs struct {
	PodDirs
	fail    map[string]bool
	removes []string
	now     func() time.Duration
}

func (d *failingDirs) Remove(uid types.UID, name string) error {
	d.removes = append(d.removes, d.now().String()+" "+name)
	if d.fail[name] {
		return errors.New("device or resource busy")
	}
	return d.PodDirs.Remove(uid, name)
}

// TestTearDownFailureRetried follows a TearDown that fails (GenerateUnmountVolumeFunc): the
// volume is not traced as unmounted, stays in the actual state as uncertain (possibly mounted,
// no longer mounted: WaitForUnmount ends, WaitForVolumesGone does not), with no event, and is
// retried at the first pass after the operation's back-off (500ms, doubled): tries at 5.1s,
// 5.7s (5.1s + 500ms, then the next tick strictly after), 6.8s, 8.9s; it succeeds at 8.9s, and
// then the pod's directory goes at the next cleanup, not before.
func TestTearDownFailureRetried(t *testing.T) {
	w := newWorld()
	w.secrets["ns/db"] = &v1.Secret{}
	dirs := &failingDirs{fail: map[string]bool{"creds": true}, now: func() time.Duration { return w.clk.Since(vclock.Epoch) }}
	m := newManagerWith(t, w, dirs, nil)
	pod := secretPod("a")
	w.pods = append(w.pods, pod)
	m.PodsChanged()
	if _, err := run(t, w, m, m.WaitForAttachAndMount(pod), vclock.Epoch.Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	w.clk.Set(vclock.Epoch.Add(5 * time.Second))
	w.terminated[pod.UID] = true
	m.PodsChanged()
	mark := len(w.trace)
	step(w, m, 5100*time.Millisecond)
	if got, want := m.PossiblyMounted(pod.UID), []string{"creds"}; !cmp.Equal(got, want) {
		t.Errorf("possibly mounted after the failed TearDown = %v, want %v", got, want)
	}
	if _, done, err := m.WaitForUnmount(pod).Poll(false); !done || err != nil {
		t.Errorf("WaitForUnmount() = %t, %v, want done: the volume is uncertain", done, err)
	}
	if _, done, _ := m.WaitForVolumesGone(pod).Poll(false); done {
		t.Error("WaitForVolumesGone() done, want it to wait for the failed TearDown")
	}
	m.CleanupOrphanedPodDirs(func(types.UID) bool { return false })
	if !dirs.HasPodDir(pod.UID) {
		t.Error("pod directory removed while a volume is possibly mounted")
	}
	step(w, m, 5600*time.Millisecond)
	if at, ok := m.NextWake(); !ok || at.Sub(vclock.Epoch) != 5700*time.Millisecond {
		t.Errorf("NextWake() = %v, %t, want the retry at 5.7s", at.Sub(vclock.Epoch), ok)
	}
	step(w, m, 8*time.Second)
	dirs.fail["creds"] = false
	step(w, m, 20*time.Second)

	if diff := cmp.Diff([]string{"5.1s creds", "5.1s kube-api-access-x", "5.7s creds", "6.8s creds", "8.9s creds"}, dirs.removes); diff != "" {
		t.Errorf("TearDown tries (-want +got):\n%s", diff)
	}
	want := []string{"5.1s unmount kube-api-access-x", "8.9s unmount creds"}
	if diff := cmp.Diff(want, w.trace[mark:]); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
	if len(w.events) != 0 {
		t.Errorf("events = %q, want none: a failed TearDown makes no event", w.events)
	}
	if got := m.PossiblyMounted(pod.UID); len(got) != 0 {
		t.Errorf("possibly mounted after the retry = %v, want nothing", got)
	}
	if len(m.unmountFailed) != 0 {
		t.Errorf("back-offs left after the retry: %v", m.unmountFailed)
	}
	if !dirs.HasPodDir(pod.UID) {
		t.Error("pod directory removed by the TearDown, want it kept for housekeeping")
	}
	m.CleanupOrphanedPodDirs(func(uid types.UID) bool { return uid == pod.UID })
	if !dirs.HasPodDir(pod.UID) {
		t.Error("pod directory removed though its pod is kept")
	}
	m.CleanupOrphanedPodDirs(func(types.UID) bool { return false })
	if dirs.HasPodDir(pod.UID) {
		t.Error("pod directory of a pod gone with its volumes torn down: kept, want it removed")
	}
}

// TestTearDownFailureDesiredAgain wants a volume whose TearDown failed, and which a pod of the
// same UID uses again, set up again and its retry forgotten.
func TestTearDownFailureDesiredAgain(t *testing.T) {
	w := newWorld()
	w.secrets["ns/db"] = &v1.Secret{}
	dirs := &failingDirs{fail: map[string]bool{"creds": true}, now: func() time.Duration { return w.clk.Since(vclock.Epoch) }}
	m := newManagerWith(t, w, dirs, nil)
	pod := secretPod("a")
	w.pods = append(w.pods, pod)
	m.PodsChanged()
	if _, err := run(t, w, m, m.WaitForAttachAndMount(pod), vclock.Epoch.Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	w.clk.Set(vclock.Epoch.Add(5 * time.Second))
	w.terminated[pod.UID] = true
	m.PodsChanged()
	step(w, m, 5100*time.Millisecond)
	w.terminated[pod.UID] = false
	m.PodsChanged()
	mark := len(w.trace)
	step(w, m, 20*time.Second)
	// The projected volume was torn down, its tokens forgotten: its SetUp asks for one again.
	want := []string{"5.2s mount creds", "5.2s token serviceaccount ns/default", "5.2s mount kube-api-access-x"}
	if diff := cmp.Diff(want, w.trace[mark:]); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
	if len(m.unmountFailed) != 0 {
		t.Errorf("back-offs left: %v", m.unmountFailed)
	}
}

// TestDiskDirsTearDown checks which TearDowns fail on a volume directory that is not empty, as
// v1.35's plugins do: emptyDir's (and that of secret, configMap, projected, downwardAPI, which
// wrap it) removes what it holds and succeeds, here leaving the directory; CSI's and the mount
// utilities' remove only an empty directory and fail. A directory already gone is torn down.
func TestDiskDirsTearDown(t *testing.T) {
	for _, tt := range []struct {
		name    string
		src     v1.VolumeSource
		content bool // a file in the volume's directory
		gone    bool // the directory removed before the TearDown
		wantErr bool
	}{
		{name: "empty secret", src: v1.VolumeSource{Secret: &v1.SecretVolumeSource{}}},
		{name: "secret with a file", src: v1.VolumeSource{Secret: &v1.SecretVolumeSource{}}, content: true},
		{name: "emptyDir with a file", src: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}, content: true},
		{name: "empty CSI", src: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "d"}}},
		{name: "CSI with a file", src: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "d"}}, content: true, wantErr: true},
		{name: "NFS with a file", src: v1.VolumeSource{NFS: &v1.NFSVolumeSource{}}, content: true, wantErr: true},
		{name: "CSI gone", src: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "d"}}, gone: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := &DiskDirs{Root: t.TempDir()}
			pod := uidPod("u")
			if err := d.Add(pod, "v", tt.src); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(d.volumesDir("u"), pluginDir(tt.src), "v")
			file := filepath.Join(path, "data")
			if tt.content {
				if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tt.gone {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			}
			err := d.Remove("u", "v")
			if (err != nil) != tt.wantErr || err != nil && !strings.Contains(err.Error(), path) {
				t.Fatalf("Remove() = %v, want an error naming %s: %t", err, path, tt.wantErr)
			}
			if tt.content {
				if _, err := os.Stat(file); err != nil {
					t.Errorf("a file DiskDirs never wrote: %v, want it kept", err)
				}
			} else if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("empty volume directory after its TearDown: %v, want it gone", err)
			}
			if _, known := d.plugin("u", "v"); known != tt.wantErr {
				t.Errorf("volume still known = %t, want %t (a failed TearDown is retried)", known, tt.wantErr)
			}
			if _, err := os.Stat(d.volumesDir("u")); err != nil {
				t.Errorf("volumes directory after the TearDown: %v, want it kept for housekeeping", err)
			}
		})
	}
}

// TestDiskDirsCleanupOrphans checks housekeeping's cleanup of <root>/pods
// (cleanupOrphanedPodDirs): a pod kept stays; a pod gone goes with its empty volumes tree and
// empty subdirectories, whether this process made its directory or not; a volume directory left
// with a file stops its pod's cleanup; a subdirectory holding a file stays, and its pod's
// directory with it.
func TestDiskDirsCleanupOrphans(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{
		"pods/kept/volumes/kubernetes.io~secret/s",
		"pods/gone/volumes/kubernetes.io~secret",
		"pods/gone/plugins/kubernetes.io~empty-dir/wrapped_x",
		"pods/nothing",
		"pods/unknown/volumes/example.com~thing/t",
		"pods/left/volumes/kubernetes.io~empty-dir/cache",
		"pods/files/containers/app",
	} {
		mustMkdir(t, filepath.Join(root, p))
	}
	for _, f := range []string{"pods/left/volumes/kubernetes.io~empty-dir/cache/db", "pods/files/containers/app/0", "pods/afile"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := &DiskDirs{Root: root}
	var asked []types.UID
	d.CleanupOrphans(func(uid types.UID) bool {
		asked = append(asked, uid)
		return uid == "kept"
	})
	if diff := cmp.Diff([]types.UID{"files", "gone", "kept", "left", "nothing", "unknown"}, asked); diff != "" {
		t.Errorf("pods asked about (-want +got):\n%s", diff)
	}
	for p, want := range map[string]bool{
		"pods/kept/volumes/kubernetes.io~secret/s": true,
		"pods/gone":    false,
		"pods/nothing": false,
		"pods/unknown": false,
		"pods/left/volumes/kubernetes.io~empty-dir/cache/db": true,
		"pods/files/containers/app/0":                        true,
		"pods/files/volumes":                                 false,
		"pods/afile":                                         true,
	} {
		_, err := os.Lstat(filepath.Join(root, p))
		if got := err == nil; got != want {
			t.Errorf("%s after the cleanup: there = %t (%v), want %t", p, got, err, want)
		}
	}
}

// TestPodDirsCleanupOrphans checks the in-memory directories: a pod's directory outlives its
// last volume until a cleanup that does not keep it, is not reconstructed meanwhile, and is a
// candidate again once mounted and emptied again.
func TestPodDirsCleanupOrphans(t *testing.T) {
	var d PodDirs
	pod := uidPod("a")
	none := func(types.UID) bool { return false }
	if err := d.Add(pod, "v", v1.VolumeSource{}); err != nil {
		t.Fatal(err)
	}
	d.CleanupOrphans(none)
	if !d.HasPodDir("a") {
		t.Fatal("directory with a volume removed")
	}
	_ = d.Remove("a", "v")
	if !d.HasPodDir("a") || len(d.Reconstruct()) != 0 {
		t.Fatalf("after the last volume's removal: there = %t, reconstructed %v; want there, nothing to reconstruct", d.HasPodDir("a"), d.Reconstruct())
	}
	_ = d.Add(pod, "v", v1.VolumeSource{})
	d.CleanupOrphans(none)
	if !d.HasPodDir("a") {
		t.Fatal("directory mounted again removed")
	}
	_ = d.Remove("a", "v")
	d.CleanupOrphans(func(types.UID) bool { return true })
	if !d.HasPodDir("a") {
		t.Fatal("kept directory removed")
	}
	d.CleanupOrphans(none)
	if d.HasPodDir("a") || len(d.emptied) != 0 {
		t.Errorf("after the cleanup: there = %t, candidates %v; want gone, none", d.HasPodDir("a"), d.emptied)
	}
	if n := testing.AllocsPerRun(100, func() { d.CleanupOrphans(none) }); n != 0 {
		t.Errorf("cleanup with nothing to clean: %v allocations, want 0", n)
	}
}
