package replay

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/syncloop"
)

// ErrInvariant is returned when a cross-component invariant breaks during a replay. The error
// names the virtual time and the last step played.
var ErrInvariant = errors.New("invariant violated")

// invariantGrace is how long a state that housekeeping repairs may last: two housekeeping periods,
// so that a pass that ran just before the state arose and the next one both fit.
const invariantGrace = 2 * syncloop.HousekeepingPeriod

// invariants holds what the checks remember between two instants.
type invariants struct {
	// restarts is the highest restart count seen per pod UID and container name, while the pod
	// has a worker.
	restarts map[types.UID]map[string]int32
	// named holds the pods the node's trace events named since its last check, and traced
	// whether it traced anything since (engine.distribute).
	named  sets.Set[types.UID]
	traced bool
	// undesiredSince is when each worker in sync was first seen without its pod in the pod
	// manager, once every source had been seen.
	undesiredSince map[types.UID]time.Time
	// orphanSince is when each mirror pod was first seen without its static pod, the static pod's
	// worker not terminating.
	orphanSince map[string]time.Time
}

func newInvariants() *invariants {
	return &invariants{
		restarts:       map[types.UID]map[string]int32{},
		named:          sets.New[types.UID](),
		undesiredSince: map[types.UID]time.Time{},
		orphanSince:    map[string]time.Time{},
	}
}

// checkInvariants runs every cross-component check on the settled state at the current instant:
//
//   - a container's restart count never goes down while its pod has a worker;
//   - once every source has been seen, a worker in sync whose pod the pod manager no longer holds
//     is asked to stop within invariantGrace (housekeeping's SyncKnownPods);
//   - a mirror pod whose static pod is gone, and whose static pod is not terminating, is deleted
//     within invariantGrace (housekeeping's orphaned mirror pod deletion).
//
// n is the node checked and step the index of the last step played, -1 before the first.
func (e *engine) checkInvariants(n *node, step int) error {
	now := e.clk.Now()
	var errs []error
	states := n.kubelet.Workers.States()
	uids := make([]types.UID, 0, len(states))
	for uid := range states {
		uids = append(uids, uid)
	}
	sort.Slice(uids, func(i, j int) bool { return uids[i] < uids[j] })

	// A restart count changes only in a sync, which traces the pod's UID: check the pods the
	// node's trace named since the last check, not every pod at every instant.
	e.distribute()
	if len(n.inv.named) > 0 {
		for _, uid := range sets.List(n.inv.named) {
			errs = append(errs, n.inv.checkRestarts(uid, n))
		}
		clear(n.inv.named)
	}
	n.inv.traced = false
	for uid := range n.inv.restarts {
		if _, ok := states[uid]; !ok {
			delete(n.inv.restarts, uid)
		}
	}

	ready := n.kubelet.PodConfig.SeenAllSources(sets.New(n.kubelet.Loop.SourcesSeen()...))
	for _, uid := range uids {
		_, desired := n.kubelet.Pods.GetPodByUID(uid)
		if states[uid] != podworkers.Sync || desired || !ready {
			delete(n.inv.undesiredSince, uid)
			continue
		}
		since, seen := n.inv.undesiredSince[uid]
		if !seen {
			n.inv.undesiredSince[uid] = now
			continue
		}
		if now.Sub(since) > invariantGrace {
			errs = append(errs, fmt.Errorf("pod %s is no longer desired but its worker has stayed in sync for %v", uid, now.Sub(since)))
		}
	}
	for uid := range n.inv.undesiredSince {
		if _, ok := states[uid]; !ok {
			delete(n.inv.undesiredSince, uid)
		}
	}

	_, _, orphaned := n.kubelet.Pods.GetPodsAndMirrorPods()
	current := sets.New[string]()
	for _, fullName := range orphaned {
		if n.kubelet.Workers.IsPodForMirrorPodTerminatingByFullName(fullName) {
			continue
		}
		current.Insert(fullName)
		since, seen := n.inv.orphanSince[fullName]
		if !seen {
			n.inv.orphanSince[fullName] = now
			continue
		}
		if now.Sub(since) > invariantGrace {
			errs = append(errs, fmt.Errorf("mirror pod %s has had no static pod for %v", fullName, now.Sub(since)))
		}
	}
	for fullName := range n.inv.orphanSince {
		if !current.Has(fullName) {
			delete(n.inv.orphanSince, fullName)
		}
	}

	if err := errors.Join(errs...); err != nil {
		where := "before the first step"
		if step >= 0 {
			where = fmt.Sprintf("after step %d", step+1)
		}
		return fmt.Errorf("at %v, %s: %w: %w", e.clk.Since(vclock.Epoch), where, ErrInvariant, err)
	}
	return nil
}

// distribute hands each node the pods its trace events named since the last call: one look at
// each event, whatever the number of nodes. With several nodes an event is a node's when it
// carries the node's name, as everything its kubelet traces does; the API server's and the
// scenario's events name no node, and a restart count changes only in a node's own sync.
func (e *engine) distribute() {
	if e.rec.Len() == e.scanned {
		return
	}
	for _, ev := range e.rec.EventsSince(e.scanned) {
		i := 0
		if len(e.nodes) > 1 {
			var ok bool
			if i, ok = e.byName[ev.Node]; !ok {
				continue
			}
		}
		inv := e.nodes[i].inv
		inv.traced = true
		if ev.UID != "" {
			inv.named.Insert(types.UID(ev.UID))
		}
	}
	e.scanned = e.rec.Len()
}

// needsCheck reports whether the node's invariants can have changed since its last check: when
// it traced something (what changes its pod manager, its workers or a pod's status is traced), or
// when a grace for a state housekeeping repairs is running, which time alone can run out. A node
// that settled and traced nothing, as most of a fleet's nodes at most instants, is as it was.
func (inv *invariants) needsCheck() bool {
	return inv.traced || len(inv.undesiredSince) > 0 || len(inv.orphanSince) > 0
}

// checkRestarts fails when a container's restart count in the pod's status went down.
func (inv *invariants) checkRestarts(uid types.UID, n *node) error {
	status, ok := n.kubelet.Status.GetPodStatus(uid)
	if !ok {
		return nil
	}
	seen := inv.restarts[uid]
	if seen == nil {
		seen = map[string]int32{}
		inv.restarts[uid] = seen
	}
	var errs []error
	// The status is the manager's cached one, shared: the lists are read, never appended to.
	for _, cs := range slices.Concat(status.InitContainerStatuses, status.ContainerStatuses, status.EphemeralContainerStatuses) {
		if before, ok := seen[cs.Name]; ok && cs.RestartCount < before {
			errs = append(errs, fmt.Errorf("restart count of container %s of pod %s went down from %d to %d", cs.Name, uid, before, cs.RestartCount))
		}
		seen[cs.Name] = max(seen[cs.Name], cs.RestartCount)
	}
	return errors.Join(errs...)
}
