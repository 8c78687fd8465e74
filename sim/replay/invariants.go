package replay

import (
	"errors"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/minikubelet/minikubelet/kubelet"
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
	// has a worker: a short list a pod, in the order its containers were first seen, where a map
	// a pod cost a fleet's check a lookup more and its heap a table a pod.
	restarts map[types.UID][]containerRestarts
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

	// walked is what the last walk over the workers and the pod manager saw, for the checks
	// after it that find nothing changed (sameAsWalked); valid once a walk ran.
	walked walk
	// uids is a buffer for the sorted UIDs the trace named, reused between checks.
	uids []types.UID
}

// versioned is a component with a change counter: the pod manager here. An interface, so that
// the engine does not import one more of the kubelet's packages (TestReplayImports) for the one
// method it calls; comparing two of them compares the components' pointers.
type versioned interface{ Version() uint64 }

// walk is what one walk over a node's workers and pod manager saw: the components and their
// change counters, whether every source had been seen, and what the walk found.
type walk struct {
	valid          bool
	workers        *podworkers.Workers
	workersVersion uint64
	pods           versioned
	podsVersion    uint64
	ready          bool
	// undesired are the workers in sync whose pod the pod manager does not hold, by UID (the keys
	// of undesiredSince); orphans the orphaned mirror pods whose static pod is not terminating,
	// in the pod manager's order (the keys of orphanSince).
	undesired []types.UID
	orphans   []string
}

func newInvariants() *invariants {
	return &invariants{
		restarts:       map[types.UID][]containerRestarts{},
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
//
// The last two checks depend only on the workers' states, the pod manager's pods and whether
// every source was seen. The workers' and the pod manager's change counters (Version) move with
// every change of the first two, so when both counters and the sources are as at the last walk,
// the walk would find what it found then: the check then looks only at the graces of what it
// found, without listing the workers, sorting their UIDs and listing the pods again, which at
// every instant cost a hundred-pod node more than its periodic work.
func (e *engine) checkInvariants(n *node, step int) error {
	now := e.clk.Now()
	inv := n.inv
	k := n.kubelet
	var errs []error

	// A restart count changes only in a sync, which traces the pod's UID: check the pods the
	// node's trace named since the last check, not every pod at every instant.
	e.distribute()
	inv.uids = inv.uids[:0]
	for uid := range inv.named {
		inv.uids = append(inv.uids, uid)
	}
	slices.Sort(inv.uids)
	for _, uid := range inv.uids {
		errs = append(errs, inv.checkRestarts(uid, n))
	}
	clear(inv.named)
	inv.traced = false

	// The kubelet's own sourcesReady, which housekeeping waits for: PodConfig's answer about the
	// sources the sync loop has seen, asked without listing them.
	ready := k.Loop.SourcesReady()
	if inv.sameAsWalked(k.Workers, k.Pods, ready) {
		// The workers are those of the last walk, and every restart count kept was of one of
		// them: only one read just now can be of a pod without a worker.
		for _, uid := range inv.uids {
			if _, ok := k.Workers.State(uid); !ok {
				delete(inv.restarts, uid)
			}
		}
		for _, uid := range inv.walked.undesired {
			if since := inv.undesiredSince[uid]; now.Sub(since) > invariantGrace {
				errs = append(errs, undesiredError(uid, now.Sub(since)))
			}
		}
		for _, fullName := range inv.walked.orphans {
			if since := inv.orphanSince[fullName]; now.Sub(since) > invariantGrace {
				errs = append(errs, orphanError(fullName, now.Sub(since)))
			}
		}
	} else {
		errs = append(errs, inv.walk(k, ready, now)...)
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

// sameAsWalked reports whether the last walk saw these workers and pod manager at their current
// change counters, and the same answer to whether every source was seen.
func (inv *invariants) sameAsWalked(workers *podworkers.Workers, pods versioned, ready bool) bool {
	w := &inv.walked
	return w.valid && w.workers == workers && w.workersVersion == workers.Version() &&
		w.pods == pods && w.podsVersion == pods.Version() && w.ready == ready
}

// walk goes over every worker and every orphaned mirror pod of the node's kubelet k: it forgets
// the restart counts of pods without a worker, starts or ends the graces of undesired workers
// and orphaned mirror pods, and returns an error for each grace that ran out. It records what it
// saw in inv.walked.
func (inv *invariants) walk(k *kubelet.Kubelet, ready bool, now time.Time) []error {
	var errs []error
	w := &inv.walked
	*w = walk{
		valid: true, workers: k.Workers, workersVersion: k.Workers.Version(),
		pods: k.Pods, podsVersion: k.Pods.Version(), ready: ready,
		undesired: w.undesired[:0], orphans: w.orphans[:0],
	}
	states := k.Workers.States()
	uids := make([]types.UID, 0, len(states))
	for uid := range states {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	for uid := range inv.restarts {
		if _, ok := states[uid]; !ok {
			delete(inv.restarts, uid)
		}
	}

	for _, uid := range uids {
		_, desired := k.Pods.GetPodByUID(uid)
		if states[uid] != podworkers.Sync || desired || !ready {
			delete(inv.undesiredSince, uid)
			continue
		}
		w.undesired = append(w.undesired, uid)
		since, seen := inv.undesiredSince[uid]
		if !seen {
			inv.undesiredSince[uid] = now
			continue
		}
		if now.Sub(since) > invariantGrace {
			errs = append(errs, undesiredError(uid, now.Sub(since)))
		}
	}
	for uid := range inv.undesiredSince {
		if _, ok := states[uid]; !ok {
			delete(inv.undesiredSince, uid)
		}
	}

	_, _, orphaned := k.Pods.GetPodsAndMirrorPods()
	current := sets.New[string]()
	for _, fullName := range orphaned {
		if k.Workers.IsPodForMirrorPodTerminatingByFullName(fullName) {
			continue
		}
		current.Insert(fullName)
		w.orphans = append(w.orphans, fullName)
		since, seen := inv.orphanSince[fullName]
		if !seen {
			inv.orphanSince[fullName] = now
			continue
		}
		if now.Sub(since) > invariantGrace {
			errs = append(errs, orphanError(fullName, now.Sub(since)))
		}
	}
	for fullName := range inv.orphanSince {
		if !current.Has(fullName) {
			delete(inv.orphanSince, fullName)
		}
	}
	return errs
}

func undesiredError(uid types.UID, d time.Duration) error {
	return fmt.Errorf("pod %s is no longer desired but its worker has stayed in sync for %v", uid, d)
}

func orphanError(fullName string, d time.Duration) error {
	return fmt.Errorf("mirror pod %s has had no static pod for %v", fullName, d)
}

// distribute hands each node the pods its trace events named since the last call: one look at
// each event, whatever the number of nodes. With several nodes an event is a node's when it
// carries the node's name, as everything its kubelet traces does; the API server's and the
// scenario's events name no node, and a restart count changes only in a node's own sync.
func (e *engine) distribute() {
	if e.rec.Len() == e.scanned {
		return
	}
	// A node's events come in runs (its settle traces them one after another), and each carries
	// the node's own name string: the last name's index answers most without a look-up in
	// byName, which holds every node of the fleet.
	last, lastIdx := "", -1
	for ev := range e.rec.Since(e.scanned) {
		i := 0
		if len(e.nodes) > 1 {
			if lastIdx < 0 || ev.Node != last {
				var ok bool
				if lastIdx, ok = e.byName[ev.Node]; !ok {
					lastIdx = -1
					continue
				}
				last = ev.Node
			}
			i = lastIdx
		}
		inv := e.nodes[i].inv
		inv.traced = true
		e.toCheck(i)
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
	return inv.traced || inv.graced()
}

// graced reports whether a grace for a state housekeeping repairs is running: only a check
// (walk) starts or ends one.
func (inv *invariants) graced() bool {
	return len(inv.undesiredSince) > 0 || len(inv.orphanSince) > 0
}

// checkRestarts fails when a container's restart count in the pod's status went down.
func (inv *invariants) checkRestarts(uid types.UID, n *node) error {
	status, ok := n.kubelet.Status.GetPodStatus(uid)
	if !ok {
		return nil
	}
	seen := inv.restarts[uid]
	grown := false
	var errs []error
	// The status is the manager's cached one, shared: the lists are only read.
	for _, list := range [...][]v1.ContainerStatus{status.InitContainerStatuses, status.ContainerStatuses, status.EphemeralContainerStatuses} {
		for _, cs := range list {
			j := slices.IndexFunc(seen, func(c containerRestarts) bool { return c.name == cs.Name })
			if j < 0 {
				seen = append(seen, containerRestarts{name: cs.Name, count: cs.RestartCount})
				grown = true
				continue
			}
			if before := seen[j].count; cs.RestartCount < before {
				errs = append(errs, fmt.Errorf("restart count of container %s of pod %s went down from %d to %d", cs.Name, uid, before, cs.RestartCount))
			}
			seen[j].count = max(seen[j].count, cs.RestartCount)
		}
	}
	if grown {
		inv.restarts[uid] = seen
	}
	return errors.Join(errs...)
}

// containerRestarts is the highest restart count seen of one container.
type containerRestarts struct {
	name  string
	count int32
}
