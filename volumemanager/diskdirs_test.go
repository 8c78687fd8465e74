package volumemanager

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestDiskDirsRestart mounts secretPod "a" with a manager over DiskDirs, then starts a new
// manager over a new DiskDirs of the same root directory, as a restarted `run` does: it finds
// the volumes in <root>/pods/a/volumes, uncertain, and once the sources are ready tears down
// those of a pod no source has, naming the pod as the runtime's sandbox does; the pod's
// directory goes at the housekeeping pass after (CleanupOrphanedPodDirs), not before: while a
// volume is possibly mounted, or while the pod is kept (the pod manager or the runtime has it).
func TestDiskDirsRestart(t *testing.T) {
	root := t.TempDir()
	w := newWorld()
	w.secrets["ns/db"] = &v1.Secret{}
	first := newManagerWith(t, w, &DiskDirs{Root: root}, nil)
	a := secretPod("a")
	w.pods = append(w.pods, a)
	first.PodsChanged()
	if _, err := run(t, w, first, first.WaitForAttachAndMount(a), vclock.Epoch.Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"kubernetes.io~secret/creds", "kubernetes.io~projected/kube-api-access-x"} {
		if fi, err := os.Stat(filepath.Join(root, "pods", "a", "volumes", p)); err != nil || !fi.IsDir() {
			t.Errorf("volume directory %s after the mount: %v", p, err)
		}
	}

	w.clk.Set(vclock.Epoch.Add(time.Second))
	w.trace, w.events, w.pods = nil, nil, nil
	var pods []string
	tracer := trace.Func(func(e trace.Event) {
		w.Emit(e)
		pods = append(pods, e.Pod+" "+e.UID)
	})
	m, err := New(Options{Clock: w.clk, Tracer: tracer, Pods: w, States: w, Recorder: w, Secrets: w, ConfigMaps: w,
		PodDirs: &DiskDirs{Root: root},
		PodName: func(uid types.UID) (string, string, bool) { return "ns", "p-" + string(uid), uid == "a" }})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.PossiblyMounted("a"), []string{"creds", "kube-api-access-x"}; !cmp.Equal(got, want) {
		t.Errorf("possibly mounted after the restart = %v, want %v", got, want)
	}
	podDir := filepath.Join(root, "pods", "a")
	none := func(types.UID) bool { return false }
	m.CleanupOrphanedPodDirs(none)
	if _, err := os.Stat(filepath.Join(podDir, "volumes", "kubernetes.io~secret", "creds")); err != nil {
		t.Errorf("volume directory after a cleanup while its volume is uncertain: %v, want it kept", err)
	}
	m.PodsChanged()
	step(w, m, 5*time.Second)
	if want := []string{"1.1s unmount creds", "1.1s unmount kube-api-access-x"}; !cmp.Equal(w.trace, want) {
		t.Errorf("trace after the restart = %q, want %q", w.trace, want)
	}
	if want := []string{"ns/p-a a", "ns/p-a a"}; !cmp.Equal(pods, want) {
		t.Errorf("unmounts' pods = %q, want %q", pods, want)
	}
	if fi, err := os.Stat(filepath.Join(podDir, "volumes")); err != nil || !fi.IsDir() {
		t.Errorf("pod's volumes directory after its last unmount: %v, want it kept until housekeeping", err)
	}
	for _, p := range []string{"kubernetes.io~secret/creds", "kubernetes.io~projected/kube-api-access-x"} {
		if _, err := os.Stat(filepath.Join(podDir, "volumes", p)); !os.IsNotExist(err) {
			t.Errorf("volume directory %s after its unmount: %v, want it gone", p, err)
		}
	}
	m.CleanupOrphanedPodDirs(func(uid types.UID) bool { return uid == "a" })
	if _, err := os.Stat(podDir); err != nil {
		t.Errorf("pod directory after a cleanup that keeps the pod: %v, want it kept", err)
	}
	m.CleanupOrphanedPodDirs(none)
	if _, err := os.Stat(podDir); !os.IsNotExist(err) {
		t.Errorf("pod directory after the cleanup: %v, want it gone", err)
	}
	if got := (&DiskDirs{Root: root}).Reconstruct(); len(got) != 0 {
		t.Errorf("a third process finds %v, want nothing", got)
	}
}

// TestDiskDirsAddFails checks that a volume directory that cannot be made fails the SetUp with
// an error naming it (a FailedMount event), and that the other pods' volumes are set up.
func TestDiskDirsAddFails(t *testing.T) {
	root := t.TempDir()
	// A file where pod b's directory would be.
	if err := os.MkdirAll(filepath.Join(root, "pods"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "pods", "b"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	w := newWorld()
	w.secrets["ns/db"] = &v1.Secret{}
	m := newManagerWith(t, w, &DiskDirs{Root: root}, nil)
	a, b := secretPod("a"), secretPod("b")
	w.pods = append(w.pods, a, b)
	m.PodsChanged()
	if _, err := run(t, w, m, m.WaitForAttachAndMount(a), vclock.Epoch.Add(time.Minute), nil); err != nil {
		t.Errorf("pod a beside a damaged directory: %v", err)
	}
	if len(w.events) == 0 || !strings.Contains(w.events[0], "FailedMount") || !strings.Contains(w.events[0], filepath.Join(root, "pods", "b")) {
		t.Errorf("events = %q, want a FailedMount naming pods/b", w.events)
	}
}

// TestDiskDirsDamaged reads damaged trees: what is not a directory where one should be, an
// unknown plugin directory or a dangling link is skipped, never stops the rest, and a volume
// that is found can be removed.
func TestDiskDirsDamaged(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files []string // made as empty files; the rest as directories
		dirs  []string
		links map[string]string
		want  []Reconstructed
	}{
		{name: "no pods directory"},
		{name: "pods is a file", files: []string{"pods"}},
		{name: "pod is a file", files: []string{"pods/x"}, dirs: []string{"pods/y/volumes/kubernetes.io~secret/s"},
			want: []Reconstructed{{Pod: uidPod("y"), Volumes: []string{"s"}}}},
		{name: "volumes is a file", files: []string{"pods/x/volumes"}},
		{name: "pod without volumes", dirs: []string{"pods/x/containers/app", "pods/y/volumes"}},
		{name: "plugin dir is a file", files: []string{"pods/x/volumes/kubernetes.io~secret"}},
		{name: "volume is a file", files: []string{"pods/x/volumes/kubernetes.io~secret/s"},
			dirs: []string{"pods/x/volumes/kubernetes.io~configmap/c"},
			want: []Reconstructed{{Pod: uidPod("x"), Volumes: []string{"c"}}}},
		{name: "unknown plugin", dirs: []string{"pods/x/volumes/example.com~thing/t", "pods/x/volumes/kubernetes.io~empty-dir/e"},
			want: []Reconstructed{{Pod: uidPod("x"), Volumes: []string{"e"}}}},
		{name: "same name under two plugins", dirs: []string{"pods/x/volumes/kubernetes.io~secret/v", "pods/x/volumes/kubernetes.io~csi/v"},
			want: []Reconstructed{{Pod: uidPod("x"), Volumes: []string{"v"}}}},
		{name: "dangling links", dirs: []string{"pods/x/volumes/kubernetes.io~secret"},
			links: map[string]string{"pods/x/volumes/kubernetes.io~secret/l": "nowhere", "pods/z": "nowhere"}},
		{name: "pods in UID order, volumes by name", dirs: []string{
			"pods/b/volumes/kubernetes.io~secret/z", "pods/b/volumes/kubernetes.io~configmap/y", "pods/a/volumes/kubernetes.io~projected/p"},
			want: []Reconstructed{{Pod: uidPod("a"), Volumes: []string{"p"}}, {Pod: uidPod("b"), Volumes: []string{"y", "z"}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, d := range tt.dirs {
				mustMkdir(t, filepath.Join(root, d))
			}
			for _, f := range tt.files {
				mustMkdir(t, filepath.Dir(filepath.Join(root, f)))
				if err := os.WriteFile(filepath.Join(root, f), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for l, target := range tt.links {
				mustMkdir(t, filepath.Dir(filepath.Join(root, l)))
				if err := os.Symlink(target, filepath.Join(root, l)); err != nil {
					t.Fatal(err)
				}
			}
			d := &DiskDirs{Root: root}
			got := d.Reconstruct()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Reconstruct (-want +got):\n%s", diff)
			}
			checkRemovable(t, d, got)
		})
	}
}

func uidPod(uid types.UID) *v1.Pod {
	p := &v1.Pod{}
	p.UID = uid
	return p
}

func mustMkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o750); err != nil {
		t.Fatal(err)
	}
}

// checkRemovable removes every reconstructed volume and checks that an empty directory is gone
// and that one holding anything stays, its TearDown failing only for a plugin that does not wrap
// emptyDir's.
func checkRemovable(t *testing.T, d *DiskDirs, got []Reconstructed) {
	t.Helper()
	for _, r := range got {
		for _, v := range r.Volumes {
			plugin, _ := d.plugin(r.Pod.UID, v)
			path := filepath.Join(d.volumesDir(r.Pod.UID), plugin, v)
			entries, _ := os.ReadDir(path)
			err := d.Remove(r.Pod.UID, v)
			_, statErr := os.Lstat(path)
			switch {
			case len(entries) == 0 && (err != nil || !os.IsNotExist(statErr)):
				t.Errorf("empty volume %s/%s after Remove: %v, %v, want it gone", r.Pod.UID, v, err, statErr)
			case len(entries) > 0 && statErr != nil:
				t.Errorf("volume %s/%s holding %d entries after Remove: %v, want it kept", r.Pod.UID, v, len(entries), statErr)
			case len(entries) > 0 && (err != nil) == wrapsEmptyDir(plugin):
				t.Errorf("volume %s/%s holding %d entries: Remove() = %v, want an error: %t", r.Pod.UID, v, len(entries), err, !wrapsEmptyDir(plugin))
			}
		}
	}
}

// FuzzDiskDirsReconstruct builds a tree under the root directory from the input (one path a
// line; a trailing "/" makes a directory, "@" a dangling link, anything else a file) and checks
// that reading it never fails the kubelet, that every volume found is a directory under a known
// plugin directory, and that it can be removed.
func FuzzDiskDirsReconstruct(f *testing.F) {
	f.Add("pods/a/volumes/kubernetes.io~secret/s/\npods/b\npods/c/volumes/x~y/z/")
	f.Add("pods/a/volumes/kubernetes.io~secret\npods/a/volumes/kubernetes.io~csi/v@")
	f.Add("pods\n")
	f.Fuzz(func(t *testing.T, in string) {
		root := t.TempDir()
		for _, line := range strings.Split(in, "\n") {
			clean := filepath.Clean("/" + strings.TrimRight(line, "/@"))
			if clean == "/" || strings.ContainsRune(clean, 0) || len(clean) > 200 {
				continue
			}
			path := filepath.Join(root, clean)
			_ = os.MkdirAll(filepath.Dir(path), 0o750)
			switch {
			case strings.HasSuffix(line, "/"):
				_ = os.MkdirAll(path, 0o750)
			case strings.HasSuffix(line, "@"):
				_ = os.Symlink("nowhere", path)
			default:
				_ = os.WriteFile(path, nil, 0o600)
			}
		}
		d := &DiskDirs{Root: root}
		got := d.Reconstruct()
		for _, r := range got {
			if len(r.Volumes) == 0 || !slices.IsSorted(r.Volumes) {
				t.Errorf("pod %s reconstructed with volumes %q", r.Pod.UID, r.Volumes)
			}
			for _, v := range r.Volumes {
				plugin, _ := d.plugin(r.Pod.UID, v)
				if !slices.Contains(knownPluginDirs, plugin) {
					t.Errorf("volume %s/%s under plugin directory %q", r.Pod.UID, v, plugin)
				}
				if fi, err := os.Stat(filepath.Join(d.volumesDir(r.Pod.UID), plugin, v)); err != nil || !fi.IsDir() {
					t.Errorf("volume %s/%s is not a directory: %v", r.Pod.UID, v, err)
				}
			}
		}
		checkRemovable(t, d, got)
	})
}

// TestDiskDirsStayUnderTheRoot wants a volume whose pod UID is not one path element (a static
// pod's manifest may set any UID) kept off the disk: neither made nor removed outside the root
// directory.
func TestDiskDirsStayUnderTheRoot(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	victim := filepath.Join(base, "other", "volumes", "kubernetes.io~empty-dir", "data")
	mustMkdir(t, filepath.Join(victim, "precious"))
	mustMkdir(t, root)
	for _, uid := range []types.UID{"../../other", "a/b", "..", "."} {
		d := &DiskDirs{Root: root}
		pod := &v1.Pod{}
		pod.UID = uid
		if err := d.Add(pod, "data", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}); err != nil {
			t.Fatalf("Add(uid %q) = %v", uid, err)
		}
		d.Remove(pod.UID, "data")
		if _, err := os.Stat(filepath.Join(victim, "precious")); err != nil {
			t.Errorf("pod %q's volume: %v, want %s left alone", uid, err, victim)
		}
		if got := d.Reconstruct(); len(got) != 0 {
			t.Errorf("pod %q's volume: Reconstruct() = %v, want nothing", uid, got)
		}
	}
}

// TestDiskDirsRemoveKeepsContents wants the teardown of a reconstructed volume to leave what its
// directory holds: DiskDirs writes no file, so a file there is someone else's (a real kubelet's
// root directory, another process over the same one).
func TestDiskDirsRemoveKeepsContents(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "pods", "u", "volumes", "kubernetes.io~empty-dir", "cache", "data.db")
	mustMkdir(t, filepath.Dir(data))
	if err := os.WriteFile(data, []byte("user data"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := &DiskDirs{Root: root}
	rec := d.Reconstruct()
	if len(rec) != 1 {
		t.Fatalf("Reconstruct() = %v, want the one volume", rec)
	}
	for _, r := range rec {
		for _, v := range r.Volumes {
			d.Remove(r.Pod.UID, v)
		}
	}
	if _, err := os.Stat(data); err != nil {
		t.Errorf("a file DiskDirs never wrote, after the teardown of its reconstructed volume: %v", err)
	}
}

// TestHasVolumes: both Dirs report a pod's volume directories from what they hold, a new
// DiskDirs from what it reconstructed.
func TestHasVolumes(t *testing.T) {
	secret := v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "db"}}
	root := t.TempDir()
	tests := []struct {
		name string
		dirs Dirs
		// again is the Dirs a restarted process has over the same volumes.
		again func(d Dirs) Dirs
	}{
		{name: "in memory", dirs: &PodDirs{}, again: func(d Dirs) Dirs { return d }},
		{name: "on disk", dirs: &DiskDirs{Root: root}, again: func(Dirs) Dirs { return &DiskDirs{Root: root} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.dirs
			check := func(when string, uid types.UID, want bool) {
				t.Helper()
				if got := d.HasVolumes(uid); got != want {
					t.Errorf("%s: HasVolumes(%s) = %v, want %v", when, uid, got, want)
				}
			}
			check("nothing added", "a", false)
			for _, name := range []string{"creds", "other"} {
				if err := d.Add(uidPod("a"), name, secret); err != nil {
					t.Fatal(err)
				}
			}
			check("two added", "a", true)
			check("another pod", "b", false)
			d = tc.again(d)
			d.Reconstruct()
			check("reconstructed", "a", true)
			for _, name := range []string{"creds", "other"} {
				if err := d.Remove("a", name); err != nil {
					t.Fatal(err)
				}
				check("removed "+name, "a", name == "creds")
			}
		})
	}
}

// TestDiskDirsKnowsEachVolume checks the record of what is on disk, a pod's volumes in a slice:
// each volume is known by its name with its plugin directory (a second record of a name replaces
// its plugin), a removal forgets that volume alone, and the pod's last one the pod.
func TestDiskDirsKnowsEachVolume(t *testing.T) {
	d := &DiskDirs{Root: t.TempDir()}
	d.record("u", "a", "kubernetes.io~secret")
	d.record("u", "b", "kubernetes.io~empty-dir")
	d.record("u", "a", "kubernetes.io~projected")
	d.record("w", "a", "kubernetes.io~configmap")
	for _, tc := range []struct {
		uid              types.UID
		name, wantPlugin string
		wantKnown        bool
	}{
		{"u", "a", "kubernetes.io~projected", true},
		{"u", "b", "kubernetes.io~empty-dir", true},
		{"w", "a", "kubernetes.io~configmap", true},
		{"w", "b", "", false},
		{"x", "a", "", false},
	} {
		if plugin, known := d.plugin(tc.uid, tc.name); plugin != tc.wantPlugin || known != tc.wantKnown {
			t.Errorf("plugin(%s, %s) = %q, %v; want %q, %v", tc.uid, tc.name, plugin, known, tc.wantPlugin, tc.wantKnown)
		}
	}
	if err := d.Remove("u", "a"); err != nil {
		t.Fatal(err)
	}
	if _, known := d.plugin("u", "a"); known {
		t.Error("a removed volume is still known")
	}
	if plugin, _ := d.plugin("u", "b"); plugin != "kubernetes.io~empty-dir" || !d.HasVolumes("u") {
		t.Errorf("after removing another volume: plugin %q, HasVolumes %v; want the volume kept", plugin, d.HasVolumes("u"))
	}
	if err := d.Remove("u", "b"); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.known["u"]; ok || d.HasVolumes("u") {
		t.Error("a pod whose last volume was removed is still known")
	}
	if !d.HasVolumes("w") {
		t.Error("another pod's volume was forgotten")
	}
}
