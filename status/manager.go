package status

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// DefaultSyncPeriod is how often the Manager rewrites and reconciles every status: the kubelet's
// status manager syncPeriod.
const DefaultSyncPeriod = 10 * time.Second

// PodManager is what the Manager needs from the kubelet's desired pod set to route a static pod's
// status to its mirror pod. The kubelet's pod manager satisfies it.
type PodManager interface {
	// GetPodByUID returns a regular or static pod by UID; mirror pods are not found this way.
	GetPodByUID(uid types.UID) (*v1.Pod, bool)
	// GetMirrorPodByPod returns the mirror pod with the static pod's full name.
	GetMirrorPodByPod(pod *v1.Pod) (*v1.Pod, bool)
	// TranslatePodUID returns the static pod's UID for a known mirror pod UID, otherwise uid.
	TranslatePodUID(uid types.UID) types.UID
	// MirrorTranslations returns TranslatePodUID's table, a copy: every mirror pod UID it
	// translates, with its static pod's UID.
	MirrorTranslations() map[types.UID]types.UID
}

// DeletionSafety says whether a pod could still have running containers; while it could, a
// terminal phase is held back from the API. The kubelet's pod workers provide it.
type DeletionSafety interface {
	// PodCouldHaveRunningContainers is asked with the UID of the API object written (for a
	// static pod, its mirror pod's), as the kubelet asks with the object.
	PodCouldHaveRunningContainers(uid types.UID) bool
}

// Options configures a Manager.
type Options struct {
	// Client writes to the API. Nil runs standalone: statuses are cached and nothing is written.
	Client PodStatusClient
	// PodManager finds pods and mirror pods. Nil knows no pod: API pods are still written, static
	// pods never are (they have no mirror).
	PodManager PodManager
	// DeletionSafety holds terminal phases back while containers may run. Nil means none may.
	DeletionSafety DeletionSafety
	// Clock gives the time. Required.
	Clock clock.PassiveClock
	// SyncPeriod is the full batch period; zero means DefaultSyncPeriod.
	SyncPeriod time.Duration
	// Tracer receives events. Required; pass trace.Discard for none.
	Tracer trace.Tracer
	// Startup is told of each status write that changed a pod, and of each status forgotten
	// after one: the kubelet's podStartupLatencyHelper. Nil tells no one.
	Startup StartupTracker
	// Keys hands out the trace keys of pods another component built already (one string a
	// pod, shared). Nil builds every key.
	Keys *kubecontainer.SharedKeys
}

// StartupTracker is the pod startup latency tracker as the status manager sees it.
type StartupTracker interface {
	RecordStatusUpdated(pod *v1.Pod)
	DeletePodStartupState(uid types.UID)
}

// validate reports every missing required option, wrapping ErrMissingOption.
func (o Options) validate() error {
	var missing []string
	if o.Clock == nil {
		missing = append(missing, "Clock")
	}
	if o.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	if len(missing) > 0 {
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	return nil
}

// versioned is one pod's cached status: the kubelet's versionedPodStatus.
type versioned struct {
	// version grows by one with every accepted change.
	version uint64
	// stamp is unique among the statuses the manager ever stored (Manager.stamps), where
	// version starts again at 1 for a UID that comes back: PodStatusStamp.
	stamp     uint64
	name      string
	namespace string
	// key is "namespace/name" for the trace, kept from version to version of the same pod
	// rather than built again at every change and every write.
	key string
	// finished is set by TerminatePod: the pod worker is done, the API object may go.
	finished bool
	status   v1.PodStatus
}

// Manager is the kubelet's status manager as a core: one goroutine drives it, and it is not safe
// for concurrent use.
type Manager struct {
	client  PodStatusClient
	pods    PodManager
	safety  DeletionSafety
	startup StartupTracker
	clock   clock.PassiveClock
	period  time.Duration
	tracer  trace.Tracer
	// keys hands out pods' trace keys built elsewhere (Options.Keys).
	keys     *kubecontainer.SharedKeys
	anchored time.Time // full batches are due at anchored + k*period

	// statuses is keyed by the pod's own UID (the static pod's for static pods).
	statuses map[types.UID]*versioned
	// stamps counts the statuses stored: the last versioned.stamp handed out.
	stamps uint64
	// apiVersions is the last version written, keyed by the UID of the API object written (the
	// mirror pod's for static pods).
	apiVersions map[types.UID]uint64
	// pending stands for the kubelet's podStatusChannel holding a signal.
	pending bool
	// notify, when set, is called whenever pending is set: a Runner's podStatusChannel.
	notify func()
	// nextFull is when the next full batch is due.
	nextFull time.Time
	// reconciled memoizes needsReconcile.
	reconciled map[types.UID]reconcileMemo
	// onChange are told the UID of every status cached or forgotten.
	onChange []func(types.UID)
	// version numbers the set of statuses and resize conditions cached (Version).
	version uint64
	// written counts the versions recorded as written; quiet is what the last full batch that
	// wrote nothing read (quiet.go).
	written uint64
	quiet   quietBatch
	// resizes holds each pod's in-place resize conditions (status/resize.go).
	resizes map[types.UID]resizeConditions
}

// OnChange registers fn to be called, on the Manager's goroutine, with the pod UID of every status
// the Manager caches or forgets, after the change: admission keeps its counts of the active pods,
// which depend on the cached phase, from it. Register before the first status.
func (m *Manager) OnChange(fn func(uid types.UID)) {
	m.onChange = append(m.onChange, fn)
}

// Version returns a number that grows with every status the Manager caches or forgets (every
// call of OnChange's functions) and every pod that gets resize conditions. Two calls that return
// the same number have, between them, the same answers to GetPodPhase for a pod manager whose
// UID translations did not change, and a RemoveOrphanedStatuses between them with the same pods
// forgot nothing: housekeeping skips the pass's work when it proves nothing changed.
func (m *Manager) Version() uint64 { return m.version }

// changed tells the OnChange functions of a change to the status of the pod with uid.
func (m *Manager) changed(uid types.UID) {
	m.version++
	for _, fn := range m.onChange {
		fn(uid)
	}
}

// New returns a Manager. A missing required option is an error wrapping ErrMissingOption.
func New(opts Options) (*Manager, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new status manager: %w", err)
	}
	if opts.SyncPeriod <= 0 {
		opts.SyncPeriod = DefaultSyncPeriod
	}
	if opts.PodManager == nil {
		opts.PodManager = noPods{}
	}
	now := opts.Clock.Now()
	return &Manager{
		client:      opts.Client,
		pods:        opts.PodManager,
		safety:      opts.DeletionSafety,
		startup:     opts.Startup,
		clock:       opts.Clock,
		period:      opts.SyncPeriod,
		tracer:      opts.Tracer,
		keys:        opts.Keys,
		anchored:    now,
		statuses:    map[types.UID]*versioned{},
		apiVersions: map[types.UID]uint64{},
		reconciled:  map[types.UID]reconcileMemo{},
		resizes:     map[types.UID]resizeConditions{},
		nextFull:    now.Add(opts.SyncPeriod),
	}, nil
}

// noPods is the PodManager of a Manager given none.
type noPods struct{}

func (noPods) GetPodByUID(types.UID) (*v1.Pod, bool)       { return nil, false }
func (noPods) GetMirrorPodByPod(*v1.Pod) (*v1.Pod, bool)   { return nil, false }
func (noPods) TranslatePodUID(uid types.UID) types.UID     { return uid }
func (noPods) MirrorTranslations() map[types.UID]types.UID { return nil }

// EachCachedStatus calls f with every status the manager holds, in no particular order: the very
// objects GetPodStatus hands out. It is for checks of the read-only contract
// (docs/design/008-shared-pods.md), which copy each new one and compare later.
func (m *Manager) EachCachedStatus(f func(uid types.UID, status *v1.PodStatus)) {
	for uid, v := range m.statuses {
		f(uid, &v.status)
	}
}

// GetPodStatus returns the cached status of the pod with uid (a mirror pod UID is translated to
// its static pod's), and whether there is one. As the kubelet's, it is the cached value itself,
// not a deep copy: its slices and pointers are the cache's, which the manager replaces and never
// changes, so the caller reads them and must not change them (docs/design/008-shared-pods.md).
// The prober reads a pod's status at every probe, the pod sync at every sync.
func (m *Manager) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	uid = m.pods.TranslatePodUID(uid)
	v, ok := m.statuses[uid]
	if !ok {
		return v1.PodStatus{}, false
	}
	return v.status, true
}

// PodStatusStamp returns a number that names the cached status of the pod: it changes whenever
// the status does, and is never handed out for another status. A reader that keeps a copy of
// GetPodStatus (the kubelet server's snapshots) copies again only when the stamp changed.
func (m *Manager) PodStatusStamp(uid types.UID) (uint64, bool) {
	v, ok := m.statuses[m.pods.TranslatePodUID(uid)]
	if !ok {
		return 0, false
	}
	return v.stamp, true
}

// GetPodPhase returns the phase of the cached status, without copying the status: housekeeping
// asks it for every pod every 2s.
func (m *Manager) GetPodPhase(uid types.UID) (v1.PodPhase, bool) {
	uid = m.pods.TranslatePodUID(uid)
	v, ok := m.statuses[uid]
	if !ok {
		return "", false
	}
	return v.status.Phase, true
}

// SetPodStatus caches status as the pod's latest and, if it differs from the cached one (or the
// pod is being deleted), queues it for writing.
func (m *Manager) SetPodStatus(pod *v1.Pod, status v1.PodStatus) {
	m.ResyncPodStatus(pod, status)
}

// ResyncPodStatus is SetPodStatus that also reports whether the status was the cached one
// already: compared equal to it and neither written nor refused. The pod sync skips building
// the next status of a pod whose inputs did not change since a resync that found it unchanged
// (podsync's periodic skip): with the same inputs and the same cached status (PodStatusStamp),
// the next status would compare equal again.
func (m *Manager) ResyncPodStatus(pod *v1.Pod, status v1.PodStatus) (unchanged bool) {
	// The kubelet's copy, which the pod sync relies on: it builds its next status into the lists
	// of the one handed over (status.Buffers).
	status = *status.DeepCopy()
	status.ObservedGeneration = pod.Generation
	return m.update(pod, status, pod.DeletionTimestamp != nil, false, "SetPodStatus") == updateUnchanged
}

// updateOutcome is what update did with a status.
type updateOutcome int

const (
	updateSet       updateOutcome = iota // cached as the new version, queued for writing
	updateUnchanged                      // equal to the cached version: nothing happened
	updateRejected                       // refused, with a reject in the trace
)

// TerminatePod marks the pod's status final, once the pod worker has finished with it: every
// container without a terminated state is reported terminated with exit code 137 (unless the pod
// never initialized), a non-static pod still Pending or Running becomes Failed, and the status is
// flagged finished, which allows the API object to be deleted.
func (m *Manager) TerminatePod(pod *v1.Pod) {
	base := pod.Status
	if v, ok := m.statuses[pod.UID]; ok {
		base = v.status
	}
	status := *base.DeepCopy()
	unknown := v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
		Reason: reasonStatusUnknown, Message: msgNotLocatedTerminated, ExitCode: exitCodeUnknown,
	}}
	if hasPodInitialized(pod) {
		for i := range status.ContainerStatuses {
			if status.ContainerStatuses[i].State.Terminated == nil {
				status.ContainerStatuses[i].State = *unknown.DeepCopy()
			}
		}
	}
	for i := range startedInitContainers(status.InitContainerStatuses) {
		if status.InitContainerStatuses[i].State.Terminated == nil {
			status.InitContainerStatuses[i].State = *unknown.DeepCopy()
		}
	}
	if !kubecontainer.IsStaticPod(pod) && !isTerminal(status.Phase) {
		status.Phase = v1.PodFailed
	}
	m.update(pod, status, true, true, "TerminatePod")
}

// RemoveOrphanedStatuses forgets the status of every pod whose UID is not in podUIDs.
func (m *Manager) RemoveOrphanedStatuses(podUIDs map[types.UID]bool) {
	for uid := range m.statuses {
		if !podUIDs[uid] {
			delete(m.statuses, uid)
			m.changed(uid)
		}
	}
	for uid := range m.resizes {
		if !podUIDs[uid] {
			delete(m.resizes, uid)
		}
	}
}

// hasPodInitialized reports whether the pod as given shows evidence that its regular containers
// ever started, judged from the pod's own status as the kubelet does.
func hasPodInitialized(pod *v1.Pod) bool {
	if len(pod.Spec.InitContainers) == 0 {
		return true
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.LastTerminationState.Terminated != nil || s.State.Waiting == nil {
			return true
		}
	}
	n := len(pod.Status.InitContainerStatuses)
	if n == 0 {
		return false
	}
	last := pod.Status.InitContainerStatuses[n-1]
	if n > len(pod.Spec.InitContainers) || pod.Spec.InitContainers[n-1].Name != last.Name {
		return false
	}
	if kubecontainer.IsRestartableInitContainer(&pod.Spec.InitContainers[n-1]) {
		return last.State.Running != nil && last.Started != nil && *last.Started
	}
	for _, st := range []v1.ContainerState{last.LastTerminationState, last.State} {
		if st.Terminated != nil && st.Terminated.ExitCode == 0 {
			return true
		}
	}
	return false
}

// startedInitContainers returns the init container statuses without the trailing ones that never
// tried to start; the first is always included.
func startedInitContainers(statuses []v1.ContainerStatus) []v1.ContainerStatus {
	for i := len(statuses) - 1; i >= 0; i-- {
		if statuses[i].State.Waiting == nil || statuses[i].LastTerminationState.Terminated != nil {
			return statuses[:i+1]
		}
	}
	if len(statuses) > 0 {
		return statuses[:1]
	}
	return nil
}

// update is the kubelet's updateStatusInternal. fn names the caller for the trace. given must be
// the caller's own deep copy: the version cached keeps its pointers (its start time among them,
// which normalizeStatus rounds in place), so a status shared with anyone else must not reach it.
//
// The status is worked on in place in the version it may become: the comparison with the cached
// one takes it as an interface, which moved a status parameter to the heap at every call, to be
// copied again into the new version.
func (m *Manager) update(pod *v1.Pod, given v1.PodStatus, force, finished bool, fn string) updateOutcome {
	next := &versioned{version: 1, name: pod.Name, namespace: pod.Namespace, status: given}
	status := &next.status
	var old v1.PodStatus
	cached, isCached := m.statuses[pod.UID]
	switch {
	case isCached:
		old = cached.status
		if !kubecontainer.IsStaticPod(pod) && cached.finished {
			finished = true
		}
	default:
		if mirror, ok := m.pods.GetMirrorPodByPod(pod); ok {
			old = mirror.Status
		} else {
			old = pod.Status
		}
	}
	if err := checkContainerStateTransition(&old, status, &pod.Spec); err != nil {
		m.tracer.Emit(trace.Event{Component: trace.Status, Event: trace.KindReject, Pod: podkey.Of(pod),
			UID: string(pod.UID), Reason: "IllegalTransition", Message: err.Error(), Func: fn})
		return updateRejected
	}
	now := m.clock.Now()
	stampTransitions(status, &old, now)
	if old.StartTime != nil && !old.StartTime.IsZero() {
		// Every caller hands over a deep copy, so the status's own start time, when it is
		// already the old one to the last field (GeneratePodStatus took it from there), is kept
		// instead of a third copy of the same instant.
		if status.StartTime == nil || *status.StartTime != *old.StartTime {
			status.StartTime = old.StartTime.DeepCopy()
		}
	} else if status.StartTime == nil || status.StartTime.IsZero() {
		t := metav1.NewTime(now)
		status.StartTime = &t
	}
	normalizeStatus(pod, status)

	if isCached && equalByKubelet(&cached.status, status) && !force {
		return updateUnchanged
	}
	next.finished = finished
	from := ""
	if isCached {
		next.version = cached.version + 1
		from = string(cached.status.Phase)
	}
	if isCached && cached.key != "" && cached.name == pod.Name && cached.namespace == pod.Namespace {
		next.key = cached.key
	} else {
		next.key = m.keys.Of(pod)
	}
	m.stamps++
	next.stamp = m.stamps
	m.statuses[pod.UID] = next
	m.pending = true
	m.changed(pod.UID)
	if m.notify != nil {
		m.notify()
	}
	m.tracer.Emit(trace.Event{Component: trace.Status, Event: trace.KindSet, Pod: next.key,
		UID: string(pod.UID), From: from, To: string(status.Phase), Func: fn})
	return updateSet
}

// checkContainerStateTransition refuses a status in which a container that terminated for good
// (under restartPolicy Never, or OnFailure after exit 0) is no longer terminated.
func checkContainerStateTransition(old, next *v1.PodStatus, spec *v1.PodSpec) error {
	if spec.RestartPolicy == v1.RestartPolicyAlways {
		return nil
	}
	final := func(s v1.ContainerStatus) bool {
		t := s.State.Terminated
		return t != nil && !(t.ExitCode != 0 && spec.RestartPolicy == v1.RestartPolicyOnFailure)
	}
	for _, o := range old.ContainerStatuses {
		if !final(o) {
			continue
		}
		// A container whose own restart policy restarts it may leave terminated
		// (ContainerRestartRules, on in v1.35).
		if c := containerByName(spec.Containers, o.Name); c != nil && kubecontainer.ContainerShouldRestart(c, spec, o.State.Terminated.ExitCode) {
			continue
		}
		if n, ok := findStatus(next.ContainerStatuses, o.Name); ok && n.State.Terminated == nil {
			return fmt.Errorf("terminated container %s attempted illegal transition to non-terminated state", o.Name)
		}
	}
	for i, o := range old.InitContainerStatuses {
		if i >= len(spec.InitContainers) || spec.InitContainers[i].Name != o.Name {
			return fmt.Errorf("found mismatch between pod spec and status, container: %s", o.Name)
		}
		if kubecontainer.IsRestartableInitContainer(&spec.InitContainers[i]) || !final(o) {
			continue
		}
		if n, ok := findStatus(next.InitContainerStatuses, o.Name); ok && n.State.Terminated == nil {
			return fmt.Errorf("terminated init container %s attempted illegal transition to non-terminated state", o.Name)
		}
	}
	return nil
}

// equalByKubelet reports whether two statuses are the same as far as the kubelet is concerned:
// equal apart from conditions the kubelet neither owns nor shares, and apart from the transition
// times of its own conditions. The kubelet's isPodStatusByKubeletEqual.
func equalByKubelet(old, status *v1.PodStatus) bool {
	for _, c := range status.Conditions {
		if ownedByKubelet(c.Type) || sharedWithKubelet(c.Type) {
			_, oc := findCondition(old.Conditions, c.Type)
			if oc == nil || oc.Status != c.Status || oc.Message != c.Message || oc.Reason != c.Reason {
				return false
			}
		}
	}
	// Only the conditions are swapped, and nothing is written through the copy: a shallow copy
	// does, where the kubelet deep-copies. Every periodic SyncPod compares, nearly always equal
	// statuses: reflect.DeepEqual answers those several times faster, and its equality implies
	// the semantic one (which also equates nil and empty, quantities by value and times by
	// instant), so that only the statuses it finds different are compared again.
	oldCopy := *old
	oldCopy.Conditions = status.Conditions
	return reflect.DeepEqual(&oldCopy, status) || apiequality.Semantic.DeepEqual(&oldCopy, status)
}
