package volumemanager

import (
	"testing"
	"time"
)

// A pod removed from the pod manager whose worker has not yet picked up its termination, then a
// SyncPod already taken before the removal calls ReprocessPod. The kubelet's findAndAddNewPods
// walks podManager.GetPods(), which no longer has the pod: no remount, no SetUp. The reprocess
// pass must not look at it either.
func TestReprocessOfAPodGoneFromThePodManager(t *testing.T) {
	w, m := mountedWorld(t, "a")
	// The pod is removed (manifest deleted / force delete) and the secret is deleted too.
	w.pods = nil
	m.PodsChanged()
	m.populate(w.clk.Now()) // full pass: the pod stays desired (runtime not removable yet)
	delete(w.secrets, "ns/db")
	w.events = nil
	// The SyncPod taken before the removal now runs: ReprocessPod.
	m.ReprocessPod("a")
	w.clk.Advance(time.Second)
	m.Advance()
	if len(w.events) != 0 {
		t.Errorf("events after reprocessing a pod the pod manager no longer has: %q (the kubelet's populator does not look at it)", w.events)
	}
}
