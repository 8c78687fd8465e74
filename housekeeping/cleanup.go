package housekeeping

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/metrics"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// orphanKillGracePeriod is the grace, in seconds, housekeeping gives a pod that exists only in the
// runtime.
const orphanKillGracePeriod int64 = 1

// PodManager is the desired pod set as housekeeping reads it.
type PodManager interface {
	// GetPodsAndMirrorPods returns the regular pods, the mirror pods and the full names of the
	// mirror pods whose static pod is gone.
	GetPodsAndMirrorPods() (pods, mirrorPods []*v1.Pod, orphanedMirrorFullnames []string)
	// GetPodAndMirrorPod resolves a pod to its static pod and mirror pod.
	GetPodAndMirrorPod(pod *v1.Pod) (resolved, mirror *v1.Pod, wasMirror bool)
}

// Workers are the pod workers as housekeeping drives and asks them.
type Workers interface {
	SyncKnownPods(desired []*v1.Pod) map[types.UID]podworkers.PodWorkerSync
	UpdatePod(opts podworkers.UpdateOptions)
	IsPodForMirrorPodTerminatingByFullName(fullname string) bool
	IsPodKnownTerminated(uid types.UID) bool
	IsPodTerminationRequested(uid types.UID) bool
}

// Runtime lists the pods the runtime runs.
type Runtime interface {
	GetPods(all bool) ([]*kubecontainer.Pod, error)
}

// StatusManager is the status manager as housekeeping cleans and reads it.
type StatusManager interface {
	// RemoveOrphanedStatuses drops the statuses of pods not in podUIDs.
	RemoveOrphanedStatuses(podUIDs map[types.UID]bool)
	// GetPodPhase returns the phase last set for the pod, if any.
	GetPodPhase(uid types.UID) (v1.PodPhase, bool)
}

// MirrorDeleter deletes mirror pods.
type MirrorDeleter interface {
	// DeleteMirrorPod deletes the mirror pod with the full name; a nil uid sets no precondition.
	DeleteMirrorPod(ctx context.Context, fullName string, uid *types.UID) (bool, error)
}

// BackoffGC is the crash-loop back-off, collected at the end of each pass.
type BackoffGC interface {
	GC()
}

// Options configure a Cleaner.
type Options struct {
	// Tracer receives the pass's decisions. Required.
	Tracer trace.Tracer
	// Pods, Workers, Runtime and Status are the components the pass reads and drives. Required.
	Pods    PodManager
	Workers Workers
	Runtime Runtime
	Status  StatusManager
	// CrashLoopBackOff is garbage-collected after each pass. Required.
	CrashLoopBackOff BackoffGC
	// Mirror deletes orphaned mirror pods. Nil is a standalone kubelet: there are none.
	Mirror MirrorDeleter
	// Metrics receives the pass's pod counts. Nil records none.
	Metrics Metrics
	// Prober stops the probe workers of pods that no longer run. Nil runs no probes.
	Prober Prober
	// Allocations forgets the allocations of pods the pod manager does not have. Nil keeps
	// none.
	Allocations Allocations
	// PodDirs removes the directories of the pods that are gone. Nil keeps them.
	PodDirs PodDirs
}

// PodDirs is the volume manager as housekeeping cleans up the pods' directories.
type PodDirs interface {
	// CleanupOrphanedPodDirs removes the directory of every pod keep does not keep whose
	// volumes are all torn down (cleanupOrphanedPodDirs).
	CleanupOrphanedPodDirs(keep func(types.UID) bool)
}

// Allocations is the allocation manager as housekeeping cleans it up.
type Allocations interface {
	// RemoveOrphanedPods forgets the allocation of every pod not in remaining: those of pods
	// deleted while the kubelet was down, which its checkpoint brought back.
	RemoveOrphanedPods(remaining map[types.UID]bool)
}

// Prober is the prober manager as housekeeping cleans it up.
type Prober interface {
	// CleanupPods stops the workers of every pod not in desired.
	CleanupPods(desired map[types.UID]bool)
}

func (o Options) validate() error {
	var missing []string
	for _, c := range []struct {
		name  string
		unset bool
	}{
		{"Tracer", o.Tracer == nil}, {"Pods", o.Pods == nil}, {"Workers", o.Workers == nil},
		{"Runtime", o.Runtime == nil}, {"Status", o.Status == nil}, {"CrashLoopBackOff", o.CrashLoopBackOff == nil},
	} {
		if c.unset {
			missing = append(missing, c.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	return nil
}

// Cleaner runs housekeeping passes.
type Cleaner struct {
	opts Options
	// buf holds a pass's maps and lists, cleared and reused by the next: a pass runs every 2s
	// and, when there is nothing to clean, allocates nothing.
	buf buffers
	// versions reads the components' change numbers; nil when one of them has none, and then
	// every pass is a full one.
	versions *versionReader
	// quiet is the stamp after the last pass that did nothing, valid while quietOK.
	quiet   stamp
	quietOK bool
	// emitted counts the events traced, which a pass that did nothing has none of.
	emitted int
	// skipped counts the passes that proved nothing changed since a pass that did nothing.
	skipped int
	// keepPodDir is the pod directories' test, made once; running is the pass's runtime
	// listing it reads, and runningUIDs that listing as a set, made for the first pod directory
	// it is asked about (most passes have none).
	keepPodDir  func(types.UID) bool
	running     []*kubecontainer.Pod
	runningUIDs map[types.UID]bool
	runningSet  bool
}

// buffers are what one pass builds. No pass keeps them: each reads them only until it returns.
type buffers struct {
	// known are the pod manager's pods and mirror pods; pods its pods only.
	known, pods, possiblyRunning map[types.UID]bool
	active                       []*v1.Pod
	// working counts the workers for the metrics.
	working map[metrics.WorkingKey]int
}

// reset clears the buffers for a pass, making the maps on first use.
func (b *buffers) reset() {
	if b.known == nil {
		b.known, b.pods, b.possiblyRunning = map[types.UID]bool{}, map[types.UID]bool{}, map[types.UID]bool{}
	}
	clear(b.known)
	clear(b.pods)
	clear(b.possiblyRunning)
	clear(b.active) // drop the last pass's pods
	b.active = b.active[:0]
}

// New returns a Cleaner.
func New(opts Options) (*Cleaner, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new housekeeping: %w", err)
	}
	c := &Cleaner{opts: opts, versions: newVersionReader(opts)}
	c.keepPodDir = c.keepsPodDir
	return c, nil
}

// cleanupPodDirs removes the directories of the pods that neither the pod manager (its pods of
// the last full pass: a quiet pass's are the same) nor the runtime's listing has, whose volumes
// are all torn down: the kubelet's cleanupOrphanedPodDirs, which it logs and does not trace. It
// runs at every pass, quiet or not: a volume's teardown does not move the numbers a quiet pass
// reads.
func (c *Cleaner) cleanupPodDirs(running []*kubecontainer.Pod) {
	if c.opts.PodDirs == nil {
		return
	}
	c.running, c.runningSet = running, false
	c.opts.PodDirs.CleanupOrphanedPodDirs(c.keepPodDir)
	c.running = nil
}

// keepsPodDir reports whether the pod's directory stays: the pod manager or the runtime has
// the pod.
func (c *Cleaner) keepsPodDir(uid types.UID) bool {
	if c.buf.pods[uid] {
		return true
	}
	if !c.runningSet {
		if c.runningUIDs == nil {
			c.runningUIDs = map[types.UID]bool{}
		}
		clear(c.runningUIDs)
		for _, rp := range c.running {
			c.runningUIDs[rp.ID] = true
		}
		c.runningSet = true
	}
	return c.runningUIDs[uid]
}

// HandlePodCleanups runs one housekeeping pass (see the package doc). It fails only when the
// runtime cannot list its pods; the rest of the pass is then skipped, as in the kubelet.
//
// A pass that finds everything it reads as the last pass left it, when that pass did nothing,
// would do nothing again: it lists the runtime (a runtime that is down fails the pass as
// always) and collects the crash-loop back-off, and skips the rest (see quiet.go).
func (c *Cleaner) HandlePodCleanups(ctx context.Context) error {
	var running []*kubecontainer.Pod
	listed := false
	// runtimeAt is the runtime's state version read before the listing: a pass's stamp then
	// never claims a state its listing did not see (in run, a timed exit may fall due between).
	var runtimeAt uint64
	if c.quietOK && c.versions.read() == c.quiet.components {
		// SyncKnownPods would change nothing and trace nothing: the runtime's listing comes
		// first without it.
		runtimeAt = c.versions.runtime()
		var err error
		if running, err = c.listRunning(); err != nil {
			return err
		}
		// The skip reads the version after the listing: it only grows, so the same number
		// then means the listing saw the quiet pass's state (in run, a timed exit may fall due
		// while listing; read before, it would be skipped until the next pass).
		if c.versions.runtime() == c.quiet.runtime {
			c.skipped++
			c.cleanupPodDirs(running)
			c.opts.CrashLoopBackOff.GC()
			return nil
		}
		listed = true
	}
	var before components
	if c.versions != nil {
		before = c.versions.read()
	}
	emitted := c.emitted

	pm, workers := c.opts.Pods, c.opts.Workers
	allPods, mirrorPods, orphanedMirrors := pm.GetPodsAndMirrorPods()
	working := workers.SyncKnownPods(allPods)

	if !listed {
		if c.versions != nil {
			runtimeAt = c.versions.runtime()
		}
		var err error
		if running, err = c.listRunning(); err != nil {
			return err
		}
	}
	// A worker that is not desired is an orphan that SyncKnownPods drives to termination again
	// at every pass: such a pass is never quiet.
	orphanWorker := false

	c.buf.reset()
	known, pods := c.buf.known, c.buf.pods
	for _, p := range allPods {
		known[p.UID] = true
		pods[p.UID] = true
	}
	for _, p := range mirrorPods {
		known[p.UID] = true
	}
	possiblyRunning := c.buf.possiblyRunning
	for uid, w := range working {
		orphanWorker = orphanWorker || w.Orphan
		if w.State == podworkers.Sync || w.State == podworkers.Terminating {
			possiblyRunning[uid] = true
		}
	}
	if c.opts.Prober != nil {
		// Stop probing pods that are not running: those whose worker is neither syncing nor
		// terminating.
		c.opts.Prober.CleanupPods(possiblyRunning)
	}
	c.opts.Status.RemoveOrphanedStatuses(known)
	if c.opts.Allocations != nil {
		// The pod manager's pods only, not its mirror pods, as HandlePodCleanups passes: an
		// allocation is a pod's own, never a mirror's.
		c.opts.Allocations.RemoveOrphanedPods(pods)
	}
	c.cleanupPodDirs(running)

	sort.Strings(orphanedMirrors)
	for _, fullName := range orphanedMirrors {
		if workers.IsPodForMirrorPodTerminatingByFullName(fullName) {
			continue
		}
		c.deleteOrphanedMirror(ctx, fullName)
	}

	active := c.filterOutInactivePods(allPods)
	var restarted map[types.UID]bool // made for the first restart: most passes have none
	for _, pod := range active {
		if _, known := working[pod.UID]; known {
			continue
		}
		static, mirror, wasMirror := pm.GetPodAndMirrorPod(pod)
		if static == nil || wasMirror {
			continue
		}
		c.emit(trace.Event{Event: trace.KindRestart, Pod: podkey.Of(pod), UID: string(pod.UID), Func: "HandlePodCleanups"})
		workers.UpdatePod(podworkers.UpdateOptions{UpdateType: podworkers.SyncPodCreate, Pod: static, MirrorPod: mirror})
		working[pod.UID] = podworkers.PodWorkerSync{State: podworkers.Sync, HasConfig: true, Static: kubecontainer.IsStaticPod(pod)}
		if restarted == nil {
			restarted = map[types.UID]bool{}
		}
		restarted[pod.UID] = kubecontainer.IsStaticPod(pod)
	}

	for _, pod := range filterTerminalPodsToDelete(allPods, running, working) {
		c.emit(trace.Event{Event: trace.KindKill, Pod: podkey.Of(pod), UID: string(pod.UID), Reason: "TerminalPodDeleted", Func: "HandlePodCleanups"})
		workers.UpdatePod(podworkers.UpdateOptions{UpdateType: podworkers.SyncPodKill, Pod: pod})
	}

	// The runtime's listing is shared with its later callers: sort a copy, and only if the
	// runtime did not list in UID order already.
	byUID := func(i, j int) bool { return running[i].ID < running[j].ID }
	if !sort.SliceIsSorted(running, byUID) {
		running = slices.Clone(running)
		sort.Slice(running, byUID)
	}
	orphans := 0
	for _, rp := range running {
		if _, known := working[rp.ID]; known {
			continue
		}
		grace := orphanKillGracePeriod
		c.emit(trace.Event{Event: trace.KindKill, Pod: podkey.Build(rp.Namespace, rp.Name), UID: string(rp.ID), Reason: "OrphanedRuntimePod", Func: "HandlePodCleanups"})
		workers.UpdatePod(podworkers.UpdateOptions{
			UpdateType:     podworkers.SyncPodKill,
			RunningPod:     rp,
			KillPodOptions: &podworkers.KillPodOptions{PodTerminationGracePeriodSecondsOverride: &grace},
		})
		working[rp.ID] = podworkers.PodWorkerSync{State: podworkers.Terminating, Orphan: true}
		orphans++
	}

	c.observe(allPods, active, mirrorPods, restarted, working, orphans)
	c.opts.CrashLoopBackOff.GC()
	c.quietOK = false
	if c.versions != nil && !orphanWorker && c.emitted == emitted && c.versions.read() == before {
		c.quiet, c.quietOK = stamp{components: before, runtime: runtimeAt}, true
	}
	return nil
}

// listRunning lists the runtime's running pods. A runtime that cannot list fails the pass, which
// traces the error and is never quiet.
func (c *Cleaner) listRunning() ([]*kubecontainer.Pod, error) {
	running, err := c.opts.Runtime.GetPods(false)
	if err != nil {
		c.quietOK = false
		err = fmt.Errorf("housekeeping: list running pods: %w", err)
		c.emit(trace.Event{Event: trace.KindError, Reason: "FailedToListPods", Message: err.Error(), Func: "HandlePodCleanups"})
		return nil, err
	}
	return running, nil
}

// deleteOrphanedMirror deletes the mirror pod of a static pod that is gone, with grace 0 and no
// UID precondition. Without a mirror client (standalone) there is none.
func (c *Cleaner) deleteOrphanedMirror(ctx context.Context, fullName string) {
	if c.opts.Mirror == nil {
		return
	}
	name, namespace, _ := kubecontainer.ParsePodFullName(fullName)
	ev := trace.Event{Event: trace.KindDeleteMirror, Pod: podkey.Build(namespace, name), Reason: "OrphanedMirrorPod", Func: "HandlePodCleanups"}
	c.emit(ev)
	// The mirror client traces the API call and its outcome; only a bad full name is an error.
	if _, err := c.opts.Mirror.DeleteMirrorPod(ctx, fullName, nil); err != nil {
		ev.Event, ev.Reason, ev.Message = trace.KindError, "FailedToDeleteMirrorPod", err.Error()
		c.emit(ev)
	}
}

// filterOutInactivePods returns the pods that are admitted and not done: the kubelet's
// filterOutInactivePods. A pod is inactive once its worker is terminated, or when it is terminal
// (in the API or the status manager) and not terminating. The list is the pass's buffer.
func (c *Cleaner) filterOutInactivePods(pods []*v1.Pod) []*v1.Pod {
	active := c.buf.active
	for _, p := range pods {
		if c.opts.Workers.IsPodKnownTerminated(p.UID) {
			continue
		}
		if c.isAdmittedPodTerminal(p) && !c.opts.Workers.IsPodTerminationRequested(p.UID) {
			continue
		}
		active = append(active, p)
	}
	c.buf.active = active
	return active
}

// isAdmittedPodTerminal reports whether the pod's API phase, or the status manager's, is terminal.
func (c *Cleaner) isAdmittedPodTerminal(pod *v1.Pod) bool {
	if terminalPhase(pod.Status.Phase) {
		return true
	}
	phase, ok := c.opts.Status.GetPodPhase(pod.UID)
	return ok && terminalPhase(phase)
}

func terminalPhase(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }

// filterTerminalPodsToDelete returns the pods being deleted that are terminal, unknown to the
// workers and absent from the runtime, so that a kill lets their API deletion finish.
func filterTerminalPodsToDelete(pods []*v1.Pod, running []*kubecontainer.Pod, working map[types.UID]podworkers.PodWorkerSync) []*v1.Pod {
	var inRuntime map[types.UID]bool // built for the first candidate: most passes have none
	var out []*v1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil || !terminalPhase(p.Status.Phase) {
			continue
		}
		if inRuntime == nil {
			inRuntime = make(map[types.UID]bool, len(running))
			for _, rp := range running {
				inRuntime[rp.ID] = true
			}
		}
		if inRuntime[p.UID] {
			continue
		}
		if _, known := working[p.UID]; known {
			continue
		}
		out = append(out, p)
	}
	return out
}

// emit traces e as housekeeping.
func (c *Cleaner) emit(e trace.Event) {
	c.emitted++
	e.Component = trace.Housekeeping
	c.opts.Tracer.Emit(e)
}
