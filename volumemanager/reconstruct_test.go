package volumemanager

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/sim/vclock"
)

// restarted mounts a secretPod "a" with a manager recording into its PodDirs, then starts a new
// manager over the same PodDirs at restartAt, as a restarted kubelet does; ready is its sources'
// readiness. The trace and events of the first manager are dropped.
func restarted(t *testing.T, restartAt time.Duration, ready func() bool) (*world, *Manager, *PodDirs) {
	t.Helper()
	dirs := &PodDirs{}
	w, m := restartedOver(t, dirs, func() Dirs { return dirs }, restartAt, ready)
	return w, m, dirs
}

// restartedOver is restarted over the pod directories dirs and, for the new manager, again
// (the same in memory; a new DiskDirs over the same root directory).
func restartedOver(t *testing.T, dirs Dirs, again func() Dirs, restartAt time.Duration, ready func() bool) (*world, *Manager) {
	t.Helper()
	w := newWorld()
	w.secrets["ns/db"] = &v1.Secret{}
	first := newManagerWith(t, w, dirs, nil)
	a := secretPod("a")
	w.pods = append(w.pods, a)
	first.PodsChanged()
	if _, err := run(t, w, first, first.WaitForAttachAndMount(a), vclock.Epoch.Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	w.clk.Set(vclock.Epoch.Add(restartAt))
	w.trace, w.events = nil, nil
	return w, newManagerWith(t, w, again(), ready)
}

func newManagerWith(t *testing.T, w *world, dirs Dirs, ready func() bool) *Manager {
	t.Helper()
	tokens, err := NewTokenManager(TokenOptions{Clock: w.clk, Tracer: w, Client: w, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{Clock: w.clk, Tracer: w, Pods: w, States: w, Recorder: w, Secrets: w, ConfigMaps: w, Tokens: tokens,
		PodDirs: dirs, SourcesReady: ready})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// step advances m at each of its wakes up to until.
func step(w *world, m *Manager, until time.Duration) {
	for {
		at, ok := m.NextWake()
		if !ok || at.Sub(vclock.Epoch) > until {
			return
		}
		w.clk.Set(at)
		m.Advance()
	}
}

// TestReconstructedVolumes follows a restarted kubelet's volumes (reconciler reconstructVolumes
// and updateStates, then the populator and the reconciler): the new manager finds the pod's
// mounted volumes in its PodDirs, uncertain. An uncertain volume is not mounted for
// WaitForAttachAndMount and WaitForUnmount but possibly mounted (WaitForVolumesGone); a SetUp
// that succeeds makes it mounted, one that fails leaves it uncertain; unlike a volume that never mounted, an uncertain one leaves the
// desired state at the first pass after its pod's runtime may be removed, though the pod manager
// still has the pod, and is torn down; a volume whose pod no source has is torn down once the
// sources are ready, not before.
func TestReconstructedVolumes(t *testing.T) {
	for _, tt := range []struct {
		name string
		// secret is whether ns/db exists after the restart; inPods whether the pod manager has
		// the pod; terminatedAt when its runtime may be removed (0: never); readyAt when the
		// sources are all seen.
		secret       bool
		inPods       bool
		terminatedAt time.Duration
		readyAt      time.Duration
		wantTrace    []string
		wantFails    []string
		// wantMounted and wantUnmounted are Mounted and unmounted of a's volumes at 1.15s.
		wantMounted, wantUnmounted []string
		wantDirs                   []string
	}{
		{
			name: "set up again", secret: true, inPods: true,
			wantTrace:   []string{"1.1s mount creds", "1.1s mount kube-api-access-x"},
			wantMounted: []string{"creds", "kube-api-access-x"}, wantDirs: []string{"creds", "kube-api-access-x"},
		},
		{
			name: "set up fails until terminated", inPods: true, terminatedAt: 2500 * time.Millisecond,
			wantTrace: []string{"1.1s mount kube-api-access-x", "2.6s unmount kube-api-access-x", "2.6s unmount creds"},
			wantFails: []string{"1.1s", "1.7s"},
			// creds is uncertain: possibly mounted, not mounted.
			wantMounted: []string{"creds", "kube-api-access-x"}, wantUnmounted: []string{"creds"},
		},
		{
			name: "set up fails, never terminated", inPods: true,
			wantTrace:   []string{"1.1s mount kube-api-access-x"},
			wantFails:   []string{"1.1s", "1.7s", "2.8s", "4.9s", "9s", "17.1s"},
			wantMounted: []string{"creds", "kube-api-access-x"}, wantUnmounted: []string{"creds"},
			wantDirs: []string{"creds", "kube-api-access-x"},
		},
		{
			name: "pod gone, sources ready late", readyAt: 1500 * time.Millisecond,
			wantTrace: []string{"1.5s unmount creds", "1.5s unmount kube-api-access-x"},
			// Nothing is unmounted before the sources are ready.
			wantMounted: []string{"creds", "kube-api-access-x"}, wantUnmounted: []string{"creds", "kube-api-access-x"},
		},
	} {
		for _, disk := range []bool{false, true} {
			name := tt.name
			if disk {
				name += ", on disk"
			}
			t.Run(name, func(t *testing.T) {
				ready := func() bool { return true }
				var w *world
				if tt.readyAt > 0 {
					ready = func() bool { return w.clk.Since(vclock.Epoch) >= tt.readyAt }
				}
				var first Dirs = &PodDirs{}
				again := func() Dirs { return first }
				if disk {
					root := t.TempDir()
					first = &DiskDirs{Root: root}
					again = func() Dirs { return &DiskDirs{Root: root} }
				}
				w, m := restartedOver(t, first, again, time.Second, ready)
				if !tt.secret {
					delete(w.secrets, "ns/db")
				}
				if !tt.inPods {
					w.pods = nil
				}
				m.PodsChanged()
				step(w, m, 1150*time.Millisecond)
				if diff := cmp.Diff(tt.wantMounted, m.PossiblyMounted("a")); diff != "" {
					t.Errorf("PossiblyMounted() at 1.15s (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.wantUnmounted, m.unmounted("a", []string{"creds", "kube-api-access-x"})); diff != "" {
					t.Errorf("unmounted() at 1.15s (-want +got):\n%s", diff)
				}
				if tt.terminatedAt > 0 {
					step(w, m, tt.terminatedAt)
					w.clk.Set(vclock.Epoch.Add(tt.terminatedAt))
					w.terminated["a"] = true
					m.PodsChanged()
				}
				step(w, m, 20*time.Second)
				trace := slices.DeleteFunc(slices.Clone(w.trace), func(s string) bool { return strings.Contains(s, " token ") })
				if diff := cmp.Diff(tt.wantTrace, trace); diff != "" {
					t.Errorf("mounts (-want +got):\n%s", diff)
				}
				var fails []string
				for _, e := range w.events {
					if strings.Contains(e, "FailedMount") {
						fails = append(fails, strings.Fields(e)[0])
					}
				}
				if diff := cmp.Diff(tt.wantFails, fails); diff != "" {
					t.Errorf("FailedMount events (-want +got):\n%s", diff)
				}
				// What a third process would find.
				var kept []string
				for _, r := range again().Reconstruct() {
					if r.Pod.UID == "a" {
						kept = r.Volumes
					}
				}
				if diff := cmp.Diff(tt.wantDirs, kept); diff != "" {
					t.Errorf("volumes kept in the pod's directory (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestReconstructSkipsHostPath checks that a hostPath volume, whose SetUp makes no directory
// under the pod's volumes directory, is not reconstructed by a restarted kubelet, so a pod gone
// after the restart does not have it torn down.
func TestReconstructSkipsHostPath(t *testing.T) {
	w := newWorld()
	dirs := &PodDirs{}
	first := newManagerWith(t, w, dirs, nil)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p-h", UID: "h"}, Spec: v1.PodSpec{
		Containers: []v1.Container{{Name: "app", VolumeMounts: []v1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
		Volumes:    []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/var/data"}}}}}}
	w.pods = append(w.pods, pod)
	first.PodsChanged()
	if _, err := run(t, w, first, first.WaitForAttachAndMount(pod), vclock.Epoch.Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	w.clk.Set(vclock.Epoch.Add(time.Second))
	w.trace, w.events, w.pods = nil, nil, nil
	m := newManagerWith(t, w, dirs, nil)
	m.PodsChanged()
	step(w, m, 5*time.Second)
	if slices.Contains(w.trace, "1.1s unmount data") {
		t.Errorf("tore down a hostPath volume v1.35 never reconstructs: %q", w.trace)
	}
}

// TestPodDirsRecordsOnlyDirectories checks which volumes a mount records in the pod directories:
// every one whose plugin's SetUp writes a directory under the pod's volumes directory, not a
// hostPath (its path is the host's) or an image volume (its SetUp does nothing).
func TestPodDirsRecordsOnlyDirectories(t *testing.T) {
	for _, tt := range []struct {
		name string
		src  v1.VolumeSource
		want bool
	}{
		{"emptyDir", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}, true},
		{"downwardAPI", v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{}}, true},
		{"persistentVolumeClaim", v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}, true},
		{"hostPath", v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/var/data"}}, false},
		{"image", v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: "registry.example/data:1"}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld()
			dirs := &PodDirs{}
			m := newManagerWith(t, w, dirs, nil)
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "p"}, Spec: v1.PodSpec{
				Containers: []v1.Container{{Name: "app", VolumeMounts: []v1.VolumeMount{{Name: "v", MountPath: "/v"}}}},
				Volumes:    []v1.Volume{{Name: "v", VolumeSource: tt.src}}}}
			w.pods = append(w.pods, pod)
			m.PodsChanged()
			if _, err := run(t, w, m, m.WaitForAttachAndMount(pod), vclock.Epoch.Add(time.Minute), nil); err != nil {
				t.Fatal(err)
			}
			if got := len(dirs.reconstruct()) == 1; got != tt.want {
				t.Errorf("recorded in the pod directories = %t, want %t", got, tt.want)
			}
		})
	}
}

// TestWaitForUnmountIgnoresUncertain checks that an uncertain volume does not hold up
// WaitForUnmount, which counts mounted volumes only (PodHasMountedVolumes), but holds up
// WaitForVolumesGone (podVolumesExist) until it is torn down: that wait looks at once and then
// every 100ms from its first look, with no deadline, and here the sources are all seen only at
// 3s, so the uncertain volumes wait for the first pass from then.
func TestWaitForUnmountIgnoresUncertain(t *testing.T) {
	var w *world
	ready := func() bool { return w.clk.Since(vclock.Epoch) >= 3*time.Second }
	w, m, _ := restarted(t, time.Second, ready)
	w.terminated["a"] = true
	w.pods = nil
	m.PodsChanged()
	if _, done, err := m.WaitForUnmount(secretPod("a")).Poll(false); !done || err != nil {
		t.Errorf("first look with only uncertain volumes = done %t, err %v; want done at once", done, err)
	}
	w.clk.Set(vclock.Epoch.Add(1050 * time.Millisecond))
	gone := m.WaitForVolumesGone(secretPod("a"))
	var looks []string
	for {
		next, done, err := gone.Poll(false)
		looks = append(looks, w.clk.Since(vclock.Epoch).String())
		if err != nil {
			t.Fatalf("WaitForVolumesGone: %v", err)
		}
		if done {
			break
		}
		if len(looks) > 100 {
			t.Fatalf("WaitForVolumesGone still waits after %v", looks)
		}
		step(w, m, next.Sub(vclock.Epoch))
		w.clk.Set(next)
	}
	if got, want := looks[len(looks)-1], "3.05s"; got != want {
		t.Errorf("WaitForVolumesGone done at %s, want %s (the first 100ms tick after the unmounts at 3s); looks %v", got, want, looks)
	}
	if !slices.Contains(w.trace, "3s unmount creds") {
		t.Errorf("trace %q, want the uncertain creds unmounted at 3s", w.trace)
	}
	// A later look after the worker's context was cancelled ends with the context's error, as
	// PollUntilContextCancel does, without looking.
	if _, done, err := m.WaitForVolumesGone(secretPod("a")).Poll(true); !done || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled poll = done %t, err %v; want done, %v", done, err, context.Canceled)
	}
}
