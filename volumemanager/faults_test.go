package volumemanager

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestFaultsScript checks the script's bookkeeping: each call uses up one failure of its own
// operation on its own pod's (by UID) volume, a new script replaces the old, and bad input is
// refused with the input named.
func TestFaultsScript(t *testing.T) {
	var f Faults
	if err := f.Fail("uid-p", "data", OpSetUp); err != nil {
		t.Errorf("zero Faults: Fail() = %v, want nil", err)
	}
	if err := f.Script("uid-p", "data", OpSetUp, 2); err != nil {
		t.Fatal(err)
	}
	if err := f.Script("uid-p", "data", OpSetUp, 3); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 4 {
		got = append(got, errString(f.Fail("uid-p", "data", OpSetUp)))
		got = append(got, errString(f.Fail("uid-p", "data", OpTearDown)), errString(f.Fail("uid-p", "other", OpSetUp)), errString(f.Fail("uid-q", "data", OpSetUp)))
	}
	want := []string{
		"scripted SetUp failure", "", "", "",
		"scripted SetUp failure", "", "", "",
		"scripted SetUp failure", "", "", "",
		"", "", "", "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	if err := f.Script("uid-p", "data", OpTearDown, 1); err != nil {
		t.Fatal(err)
	}
	if err := f.Fail("uid-p", "data", OpTearDown); !errors.Is(err, ErrScripted) || err.Error() != "scripted TearDown failure" {
		t.Errorf("Fail(tearDown) = %v, want the scripted TearDown failure", err)
	}
	if n := f.Left("uid-p", "data", OpTearDown); n != 0 {
		t.Errorf("Left() after the last failure = %d, want 0", n)
	}
	for _, tt := range []struct {
		op    Operation
		times int
		want  string
	}{
		{"mount", 1, `"mount"`},
		{OpSetUp, 0, "times 0"},
		{OpTearDown, -1, "times -1"},
	} {
		err := f.Script("uid-p", "data", tt.op, tt.times)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), `pod uid-p volume "data"`) {
			t.Errorf("Script(%q, %d) = %v, want an error naming %s and the volume", tt.op, tt.times, err, tt.want)
		}
	}
}

// TestOperationsIsACopy: Operations lists SetUp then TearDown, and a caller that changes what it
// got changes neither what Faults accepts nor the next caller's list.
func TestOperationsIsACopy(t *testing.T) {
	want := []Operation{OpSetUp, OpTearDown}
	got := Operations()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Operations() (-want +got):\n%s", diff)
	}
	got[0], got[1] = "mount", "mount"
	if diff := cmp.Diff(want, Operations()); diff != "" {
		t.Errorf("Operations() after a caller changed its copy (-want +got):\n%s", diff)
	}
	var f Faults
	if err := f.Script("uid-p", "data", OpSetUp, 1); err != nil {
		t.Errorf("Script(setUp) after a caller changed its copy = %v, want nil", err)
	}
	if err := f.Script("uid-p", "data", "mount", 1); err == nil {
		t.Error("Script(mount) after a caller changed its copy = nil, want an error")
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// faultyPod is pod "a" (secretPod) and a manager whose plugins ask a Faults script, on a world
// that has the pod's Secret ns/db unless told otherwise. The pod reaches the manager at arrive.
type faultyPod struct {
	w      *world
	faults *Faults
	dirs   *PodDirs
	m      *Manager
	pod    *v1.Pod
}

// newFaultyPod builds it, the Secret on the world when withSecret.
func newFaultyPod(t *testing.T, withSecret bool) *faultyPod {
	t.Helper()
	f := &faultyPod{w: newWorld(), faults: &Faults{}, dirs: &PodDirs{}, pod: secretPod("a")}
	if withSecret {
		f.w.secrets["ns/db"] = &v1.Secret{}
	}
	f.m = newFaultyManager(t, f.w, f.dirs, f.faults)
	return f
}

// script scripts times failures of op on the pod's volume.
func (f *faultyPod) script(t *testing.T, volume string, op Operation, times int) {
	t.Helper()
	if err := f.faults.Script(f.pod.UID, volume, op, times); err != nil {
		t.Fatal(err)
	}
}

// arrive gives the manager the pod at at after the epoch.
func (f *faultyPod) arrive(at time.Duration) {
	f.w.clk.Set(vclock.Epoch.Add(at))
	f.w.pods = append(f.w.pods, f.pod)
	f.m.PodsChanged()
}

// mount steps the manager until WaitForAttachAndMount sees the pod's volumes mounted.
func (f *faultyPod) mount(t *testing.T) {
	t.Helper()
	if _, err := run(t, f.w, f.m, f.m.WaitForAttachAndMount(f.pod), vclock.Epoch.Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
}

// terminate has the pod's worker terminate it at at after the epoch.
func (f *faultyPod) terminate(at time.Duration) {
	f.w.clk.Set(vclock.Epoch.Add(at))
	f.w.terminated[f.pod.UID] = true
	f.m.PodsChanged()
}

// TestScriptedSetUpFailure follows a volume whose SetUp is scripted to fail three times: each
// failure records FailedMount with the plugin's error and backs the operation off (500ms, 1s,
// 2s; tries at 1.1s, 1.7s, 2.8s), nothing is mounted meanwhile though the volume's directory is
// in the pod's (a Secret's tmpfs is mounted on it once made, as setupTmpfs does), and the fourth try, at 4.9s, mounts it; the wait sees it at its next tick. The other volume
// of the pod mounts at once.
func TestScriptedSetUpFailure(t *testing.T) {
	f := newFaultyPod(t, true)
	f.script(t, "creds", OpSetUp, 3)
	f.arrive(1050 * time.Millisecond)
	hooks := map[time.Duration]func(){3 * time.Second: func() {
		if got := f.dirs.Reconstruct(); len(got) != 1 || !cmp.Equal(got[0].Volumes, []string{"creds", "kube-api-access-x"}, cmpopts.SortSlices(func(a, b string) bool { return a < b })) {
			t.Errorf("pod directory while creds fails = %v, want both volumes' directories", got)
		}
	}}
	ended, err := run(t, f.w, f.m, f.m.WaitForAttachAndMount(f.pod), vclock.Epoch.Add(time.Minute), hooks)
	if err != nil || ended != 4950*time.Millisecond {
		t.Errorf("wait ended at %v with %v, want 4.95s (the first tick after the mount at 4.9s)", ended, err)
	}
	msg := `FailedMount MountVolume.SetUp failed for volume "creds" : scripted SetUp failure`
	wantEvents := []string{"1.1s " + msg, "1.7s " + msg, "2.8s " + msg}
	if diff := cmp.Diff(wantEvents, f.w.events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	wantTrace := []string{"1.1s token serviceaccount ns/default", "1.1s mount kube-api-access-x", "4.9s mount creds"}
	if diff := cmp.Diff(wantTrace, f.w.trace); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
	if n := f.faults.Left("a", "creds", OpSetUp); n != 0 {
		t.Errorf("failures left = %d, want none", n)
	}
}

// TestScriptedTearDownFailure follows a volume whose TearDown is scripted to fail twice once
// its pod terminated: no unmount traced and no event, the volume uncertain, the pod's
// directory kept through housekeeping, the retries after 500ms then 1s (5.1s, 5.7s, 6.8s),
// and the directory gone at the first cleanup after the last retry succeeded.
func TestScriptedTearDownFailure(t *testing.T) {
	f := newFaultyPod(t, true)
	f.arrive(0)
	f.mount(t)
	f.script(t, "creds", OpTearDown, 2)
	f.terminate(5 * time.Second)
	w, m, pod := f.w, f.m, f.pod
	mark := len(w.trace)
	for _, at := range []time.Duration{5100 * time.Millisecond, 5700 * time.Millisecond} {
		step(w, m, at)
		if got := m.PossiblyMounted(pod.UID); !cmp.Equal(got, []string{"creds"}) {
			t.Errorf("at %v: possibly mounted = %v, want creds", at, got)
		}
		m.CleanupOrphanedPodDirs(func(types.UID) bool { return false })
		if !f.dirs.HasPodDir(pod.UID) {
			t.Errorf("at %v: pod directory removed while its TearDown fails", at)
		}
	}
	step(w, m, 20*time.Second)
	want := []string{"5.1s unmount kube-api-access-x", "6.8s unmount creds"}
	if diff := cmp.Diff(want, w.trace[mark:]); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
	if len(w.events) != 0 {
		t.Errorf("events = %q, want none: a failed TearDown makes no event", w.events)
	}
	if got := m.PossiblyMounted(pod.UID); len(got) != 0 {
		t.Errorf("possibly mounted after the retry = %v, want nothing", got)
	}
	m.CleanupOrphanedPodDirs(func(types.UID) bool { return false })
	if f.dirs.HasPodDir(pod.UID) {
		t.Error("pod directory kept after its last TearDown succeeded, want it removed")
	}
}

// TestFaultsForgottenWithThePod: what a pod's script never used up (a SetUp failure scripted
// after its first mounts, which remounts never reach) is dropped once the manager has forgotten
// the pod, its volumes no longer desired and their last TearDown done, and not before: a
// TearDown still failing keeps the whole script. Another pod's script stays.
func TestFaultsForgottenWithThePod(t *testing.T) {
	tests := []struct {
		name     string
		tearDown int // scripted TearDown failures of creds
		// keptUntil is a time after the pod terminated (at 5s) at which creds is still
		// possibly mounted, its script kept; zero when nothing holds it.
		keptUntil time.Duration
	}{
		{name: "unmounted at once"},
		// TearDown retries after 500ms, 1s, 2s: it fails at 5.1s, 5.7s, 6.8s, succeeds at 8.9s.
		{name: "while a TearDown fails", tearDown: 3, keptUntil: 8 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFaultyPod(t, true)
			f.arrive(0)
			f.mount(t)
			f.script(t, "creds", OpSetUp, 2)
			if err := f.faults.Script("b", "creds", OpSetUp, 1); err != nil {
				t.Fatal(err)
			}
			if tc.tearDown > 0 {
				f.script(t, "creds", OpTearDown, tc.tearDown)
			}
			f.terminate(5 * time.Second)
			if tc.keptUntil > 0 {
				step(f.w, f.m, tc.keptUntil)
				if got := f.m.PossiblyMounted(f.pod.UID); !cmp.Equal(got, []string{"creds"}) {
					t.Fatalf("at %v: possibly mounted = %v, want creds", tc.keptUntil, got)
				}
				if n := f.faults.Left("a", "creds", OpSetUp); n != 2 {
					t.Errorf("at %v, creds still possibly mounted: SetUp failures left = %d, want 2", tc.keptUntil, n)
				}
				if n := f.faults.Left("a", "creds", OpTearDown); n != 0 {
					t.Errorf("at %v: TearDown failures left = %d, want 0 (all used up)", tc.keptUntil, n)
				}
			}
			step(f.w, f.m, 20*time.Second)
			if got := f.m.PossiblyMounted(f.pod.UID); len(got) != 0 {
				t.Fatalf("possibly mounted at 20s = %v, want nothing", got)
			}
			for _, op := range Operations() {
				if n := f.faults.Left("a", "creds", op); n != 0 {
					t.Errorf("%s failures left for the forgotten pod = %d, want 0", op, n)
				}
			}
			if n := f.faults.Left("b", "creds", OpSetUp); n != 1 {
				t.Errorf("SetUp failures left for pod b, which the manager never had = %d, want 1", n)
			}
		})
	}
}

// TestFaultsForgetPod: ForgetPod drops every operation scripted for the pod's volumes, and
// only those; a nil or zero Faults forgets nothing and does not fail.
func TestFaultsForgetPod(t *testing.T) {
	var none *Faults
	none.ForgetPod("uid-p")
	var zero Faults
	zero.ForgetPod("uid-p")
	var f Faults
	for _, s := range []struct {
		uid    types.UID
		volume string
		op     Operation
	}{
		{"uid-p", "data", OpSetUp}, {"uid-p", "data", OpTearDown}, {"uid-p", "logs", OpSetUp}, {"uid-q", "data", OpSetUp},
	} {
		if err := f.Script(s.uid, s.volume, s.op, 2); err != nil {
			t.Fatal(err)
		}
	}
	f.ForgetPod("uid-p")
	got := []int{f.Left("uid-p", "data", OpSetUp), f.Left("uid-p", "data", OpTearDown), f.Left("uid-p", "logs", OpSetUp), f.Left("uid-q", "data", OpSetUp)}
	if diff := cmp.Diff([]int{0, 0, 0, 2}, got); diff != "" {
		t.Errorf("failures left after ForgetPod(uid-p) (-want +got):\n%s", diff)
	}
}

// newFaultyManager builds a manager on w whose plugins ask faults.
func newFaultyManager(t *testing.T, w *world, dirs Dirs, faults PluginFaults) *Manager {
	t.Helper()
	tokens, err := NewTokenManager(TokenOptions{Clock: w.clk, Tracer: w, Client: w, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{Clock: w.clk, Tracer: w, Pods: w, States: w, Recorder: w, Secrets: w, ConfigMaps: w, Tokens: tokens,
		PodDirs: dirs, Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// v1.35's secret, configMap, projected and downwardAPI plugins read their objects (the projected
// volume asks for its token: collectData) before the wrapped emptyDir's tmpfs mount, where the
// node's mounter can fail (secret.go, projected.go SetUpAt). A mount failing under the projected
// kube-api-access volume therefore still asks for the token at that try (the mount follows at
// the retry after the 500ms back-off), and a missing Secret fails the SetUp with its own error
// before the mounter is reached, leaving the scripted failure for a later try.
func TestScriptedSetUpFailureComesAfterTheObjectReads(t *testing.T) {
	t.Run("projected asks its token first", func(t *testing.T) {
		f := newFaultyPod(t, true)
		f.script(t, "kube-api-access-x", OpSetUp, 1)
		f.arrive(1050 * time.Millisecond)
		f.mount(t)
		want := []string{"1.1s mount creds", "1.1s token serviceaccount ns/default", "1.7s mount kube-api-access-x"}
		if diff := cmp.Diff(want, f.w.trace); diff != "" {
			t.Errorf("trace (-v1.35 +got):\n%s", diff)
		}
	})
	t.Run("a missing secret fails before the mounter", func(t *testing.T) {
		f := newFaultyPod(t, false)
		f.script(t, "creds", OpSetUp, 1)
		f.arrive(1050 * time.Millisecond)
		step(f.w, f.m, 1100*time.Millisecond)
		want := []string{`1.1s FailedMount MountVolume.SetUp failed for volume "creds" : secret "db" not found`}
		if diff := cmp.Diff(want, f.w.events); diff != "" {
			t.Errorf("events (-v1.35 +got):\n%s", diff)
		}
		if n := f.faults.Left("a", "creds", OpSetUp); n != 1 {
			t.Errorf("scripted failures left = %d, want 1: the SetUp failed before the mounter", n)
		}
	})
}

// TestScriptedSetUpFailureSparesRemounts: a volume already set up is remounted after every
// SyncPod, but in v1.35 emptyDir's SetUpAt returns before the mounter for a volume set up, so a
// scripted SetUp failure waits for a first mount and never fails a remount.
func TestScriptedSetUpFailureSparesRemounts(t *testing.T) {
	f := newFaultyPod(t, true)
	f.arrive(1050 * time.Millisecond)
	f.mount(t)
	f.script(t, "creds", OpSetUp, 1)
	for range 3 {
		f.m.ReprocessPod(f.pod.UID)
		f.w.clk.Advance(LoopPeriod)
		f.m.Advance()
	}
	if len(f.w.events) != 0 {
		t.Errorf("events = %v, want none: a remount does not reach the mounter", f.w.events)
	}
	if n := f.faults.Left("a", "creds", OpSetUp); n != 1 {
		t.Errorf("scripted failures left = %d, want 1 for the next first mount", n)
	}
}

// TestScriptedSetUpFailureKeepsATmpfsDirectory: in v1.35 a secret volume's SetUpAt reads
// the Secret, then the wrapped emptyDir (medium Memory) runs setupTmpfs, which calls setupDir
// (MkdirAll of the volume directory) before GetMountMedium and MountSensitiveWithoutSystemd
// (pkg/volume/emptydir/empty_dir.go). A mount failure under the plugin therefore leaves the
// volume's directory in the pod's directory, for a restarted kubelet to reconstruct.
func TestScriptedSetUpFailureKeepsATmpfsDirectory(t *testing.T) {
	f := newFaultyPod(t, true)
	f.script(t, "creds", OpSetUp, 1)
	f.arrive(1050 * time.Millisecond)
	step(f.w, f.m, 1100*time.Millisecond)
	got := f.dirs.Reconstruct()
	var vols []string
	if len(got) == 1 {
		vols = got[0].Volumes
	}
	if want := []string{"creds", "kube-api-access-x"}; !cmp.Equal(want, vols, cmpopts.SortSlices(func(a, b string) bool { return a < b })) {
		t.Errorf("volume directories after a failed tmpfs mount = %v, want %v (setupDir runs before the mount)", vols, want)
	}
}
