package syncloop

import (
	"github.com/minikubelet/minikubelet/pleg"
	"github.com/minikubelet/minikubelet/podconfig"
)

// Input is one thing the sync loop reacts to: one case of the kubelet's syncLoopIteration select.
// The set is closed; the implementations are ConfigUpdate, PLEGEvent, SyncTick, HousekeepingTick
// and ProbeUpdate.
type Input interface {
	// kind names the input in the trace: "config", "pleg", "sync" or "housekeeping".
	kind() string
}

// ConfigUpdate is one update from PodConfig, the kubelet's configCh.
type ConfigUpdate struct {
	podconfig.Update
}

// PLEGEvent is one pod lifecycle event from a relist, the kubelet's plegCh.
type PLEGEvent struct {
	pleg.Event
}

// SyncTick is one tick of the kubelet's 1s syncTicker: sync the pods whose work queue entry is due.
type SyncTick struct{}

// HousekeepingTick is one tick of the kubelet's 2s housekeeping ticker: run HandlePodCleanups if
// every source has been seen.
type HousekeepingTick struct{}

func (ConfigUpdate) kind() string     { return "config" }
func (PLEGEvent) kind() string        { return "pleg" }
func (SyncTick) kind() string         { return "sync" }
func (HousekeepingTick) kind() string { return "housekeeping" }
