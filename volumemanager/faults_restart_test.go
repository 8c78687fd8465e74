package volumemanager

import (
	"slices"
	"testing"
	"time"
)

// TestFaultsTearDownScriptReachesAReconstructedVolume: a Secret volume whose first SetUp failed
// under the plugin keeps its directory (its tmpfs mount point,
// TestScriptedSetUpFailureKeepsATmpfsDirectory). The pod is deleted: the manager forgets it,
// with no TearDown of creds, which never mounted; the directory stays for a restarted kubelet to
// reconstruct and tear down. Faults belong to the node, and the reconstructed volume's pod has
// the deleted pod's UID, so the TearDown scripted for creds fails that TearDown. The script is
// dropped once that TearDown succeeds at its retry and no volume directory is left.
func TestFaultsTearDownScriptReachesAReconstructedVolume(t *testing.T) {
	f := newFaultyPod(t, true)
	f.script(t, "creds", OpSetUp, 1)
	f.script(t, "creds", OpTearDown, 1)
	// A failure no operation ever asks for: only ForgetPod drops it.
	f.script(t, "elsewhere", OpSetUp, 1)
	f.arrive(1050 * time.Millisecond)
	step(f.w, f.m, 1100*time.Millisecond)
	// The pod is deleted at once: its worker terminated it and the pod manager let it go.
	f.w.terminated[f.pod.UID] = true
	f.w.pods = nil
	f.m.PodsChanged()
	step(f.w, f.m, 5*time.Second)
	var kept []string
	for _, r := range f.dirs.Reconstruct() {
		if r.Pod.UID == f.pod.UID {
			kept = r.Volumes
		}
	}
	if !slices.Contains(kept, "creds") {
		t.Fatalf("volumes left in the pod's directory = %v, want creds (its failed SetUp's mount point)", kept)
	}
	if n := f.faults.Left(f.pod.UID, "creds", OpTearDown); n != 1 {
		t.Errorf("TearDown failures left for creds, whose directory a restarted kubelet will tear down = %d, want 1", n)
	}
	if n := f.faults.Left(f.pod.UID, "elsewhere", OpSetUp); n != 1 {
		t.Errorf("unused failures left while a volume directory of the pod is left = %d, want 1", n)
	}
	// The kubelet restarts over the same node (its directories and its faults).
	f.w.clk.Set(f.w.clk.Now().Add(time.Second))
	m2 := newFaultyManager(t, f.w, f.dirs, f.faults)
	m2.PodsChanged()
	mark := len(f.w.trace)
	restart := f.w.clk.Now()
	at, ok := m2.NextWake()
	for ok && !at.After(restart.Add(100*time.Millisecond)) {
		f.w.clk.Set(at)
		m2.Advance()
		at, ok = m2.NextWake()
	}
	// The first TearDown of creds, at the restarted kubelet's first pass, fails as scripted.
	if got := m2.PossiblyMounted(f.pod.UID); !slices.Contains(got, "creds") {
		t.Errorf("restarted kubelet, first pass: creds possibly mounted = %v, want creds kept by its scripted TearDown failure (trace since the restart %v)", got, f.w.trace[mark:])
	}
	// The retry after the 500ms back-off tears creds down; nothing of the pod is left to use
	// the script, so it goes.
	for ok && !at.After(restart.Add(5*time.Second)) {
		f.w.clk.Set(at)
		m2.Advance()
		at, ok = m2.NextWake()
	}
	if got := m2.PossiblyMounted(f.pod.UID); len(got) != 0 || f.dirs.HasVolumes(f.pod.UID) {
		t.Fatalf("restarted kubelet, 5s on: possibly mounted %v, volume directories left %v; want none", got, f.dirs.HasVolumes(f.pod.UID))
	}
	if n := f.faults.Left(f.pod.UID, "elsewhere", OpSetUp); n != 0 {
		t.Errorf("unused failures left once the reconstructed volume was torn down = %d, want 0", n)
	}
}
