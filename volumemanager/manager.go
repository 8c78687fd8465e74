package volumemanager

import (
	"fmt"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// The timings of the kubelet's volume manager and of its operation executor's back-off.
const (
	// LoopPeriod is how often the populator and the reconciler run
	// (desiredStateOfWorldPopulatorLoopSleepPeriod, reconcilerLoopSleepPeriod).
	LoopPeriod = 100 * time.Millisecond
	// MountTimeout is how long WaitForAttachAndMount and WaitForUnmount wait
	// (podAttachAndMountTimeout: "slightly offset from 2 minutes to make timeouts recognizable").
	MountTimeout = 2*time.Minute + 3*time.Second
	// MountRetryInterval is how often they look (podAttachAndMountRetryInterval).
	MountRetryInterval = 300 * time.Millisecond
	// initialBackoff and maxBackoff bound a failed operation's back-off
	// (initialDurationBeforeRetry, maxDurationBeforeRetry).
	initialBackoff = 500 * time.Millisecond
	maxBackoff     = 2*time.Minute + 2*time.Second
)

// PodLister is the pod manager as the populator reads it.
type PodLister interface {
	// GetPods returns the desired pods, in a stable order.
	GetPods() []*v1.Pod
	GetPodByUID(uid types.UID) (*v1.Pod, bool)
}

// PodStates is the pod workers as the populator asks them: whether a pod may start containers,
// and whether its runtime may be removed. Whoever owns them calls PodsChanged when either answer
// can change.
type PodStates interface {
	ShouldPodContainersBeTerminating(uid types.UID) bool
	ShouldPodRuntimeBeRemoved(uid types.UID) bool
}

// ConfigMapGetter and SecretGetter are the kubelet's ConfigMap and Secret managers.
type (
	ConfigMapGetter interface {
		GetConfigMap(namespace, name string) (*v1.ConfigMap, error)
	}
	SecretGetter interface {
		GetSecret(namespace, name string) (*v1.Secret, error)
	}
)

// TokenGetter is the token manager as the projected volume asks it.
type TokenGetter interface {
	GetServiceAccountToken(namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
	DeleteServiceAccountToken(podUID types.UID)
	// EndSetUp ends a volume's SetUp, pending when it still waits for one of its tokens.
	EndSetUp(pending bool)
}

// EventRecorder records one Kubernetes event about object.
type EventRecorder interface {
	Event(object runtime.Object, eventType, reason, message string)
}

// Options configure a Manager.
type Options struct {
	// Clock is the time of the loops and the waits. Required.
	Clock clock.PassiveClock
	// Tracer receives the mounts and unmounts. Required.
	Tracer trace.Tracer
	// Pods is the pod manager. Required.
	Pods PodLister
	// States is the pod workers. Required.
	States PodStates
	// Recorder receives the FailedMount events. Nil records none.
	Recorder EventRecorder
	// ConfigMaps, Secrets and Tokens are the object managers and the token manager; nil in a
	// standalone kubelet, whose ConfigMap, Secret and projected volumes cannot be set up.
	ConfigMaps ConfigMapGetter
	Secrets    SecretGetter
	Tokens     TokenGetter
	// SourcesReady reports whether every pod source has been seen, after which the populator
	// stops adding pods whose containers are terminating. Nil is always.
	SourcesReady func() bool
	// PodDirs keeps the mounted volumes beyond the process, as the pod directories do: New
	// reconstructs what it holds, and the mounts and unmounts are recorded in it. Nil keeps
	// nothing, and a new Manager finds nothing mounted.
	PodDirs Dirs
	// PodName names a reconstructed pod that no pod source has, for the trace: DiskDirs knows
	// only its UID (the kubelet's reconstruction too, which logs the UID); the kubelet wires the
	// runtime's sandboxes, which carry the pod's name. Nil, or false, leaves the UID alone.
	PodName func(uid types.UID) (namespace, name string, ok bool)
	// Logger receives the failed TearDowns, which the kubelet logs without an event. The zero
	// value discards them.
	Logger klog.Logger
	// Faults are the failures scripted for the volume plugins' SetUp and TearDown (a replay's
	// failVolumeOperation step). Nil fails none.
	Faults PluginFaults
}

func (o Options) validate() error {
	var missing []string
	if o.Clock == nil {
		missing = append(missing, "Clock")
	}
	if o.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	if o.Pods == nil {
		missing = append(missing, "Pods")
	}
	if o.States == nil {
		missing = append(missing, "States")
	}
	if len(missing) > 0 {
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	return nil
}

// Manager is the volume manager: the desired state (the volumes the node's pods use), the
// actual state (what is mounted), and the populator and reconciler passes between them.
type Manager struct {
	opts Options
	// origin is the instant the loops started: their passes fall on its 100ms grid.
	origin time.Time
	// desired holds the pods the populator added, in the order it added them.
	desired map[types.UID]*podVolumes
	order   []types.UID
	// mounted holds, per pod, the volumes mounted for it.
	mounted map[types.UID]*podMounts
	// errors are the populator's errors per pod, popped by the waits.
	errors map[types.UID][]string
	// changedAt is the earliest change the populator has not looked at; zero for none.
	changedAt time.Time
	// hasAddedPods is set once the sources were all seen at a populator pass. Until then the
	// reconciler unmounts nothing (readyToUnmount): a reconstructed volume's pod may not have
	// reached the desired state yet.
	hasAddedPods bool
	// failing counts the desired volumes whose last try failed (failedAt set): NextWake, which
	// a stepping driver asks after every pass, walks the volumes for their back-offs only when
	// there is one.
	failing int
	// removed is set when a pod left the desired state since the reconciler last unmounted:
	// only then can a mounted volume be no longer desired (a pod's desired volumes only grow,
	// and only desired volumes are mounted).
	removed bool
	// podsChanged is set by PodsChanged, and a pass then looks at every pod; otherwise only the
	// pods in reprocess, which ReprocessPod asked to be looked at again (populator.go).
	podsChanged bool
	reprocess   []types.UID
	// processed lists the pods the populator looked at since the reconciler last ran, and
	// walkAll is set when it looked at every pod (a full pass). After a pass, every desired
	// volume is mounted (and not to be remounted), waiting for a token, or failed (failing
	// counts those): a pass whose populator only looked at the pods in processed, with no volume
	// failed, has nothing to do for any other pod, and the reconciler looks only at those
	// (reconcile). In a fleet, most passes follow one pod's periodic sync.
	processed []*podVolumes
	walkAll   bool
	// added numbers the pods added to the desired state: the reconciler visits the pods of
	// processed in that order, which is order's.
	added uint64
	// unmountFailed holds the back-off of every volume whose last TearDown failed; the volume
	// stays in mounted, uncertain, until a retry succeeds or its pod uses it again.
	unmountFailed map[volumeKey]*unmountRetry
	// keepDir is CleanupOrphanedPodDirs' test, made once, and keep its caller's, set during the
	// call.
	keepDir, keep func(types.UID) bool
}

// podVolumes is one pod of the desired state: the volumes its containers use, in spec order.
type podVolumes struct {
	pod       *v1.Pod
	processed bool
	volumes   []*desiredVolume
	// seq is the pod's place in the order the populator added the pods (Manager.added).
	seq uint64
}

// desiredVolume is one volume to mount, with its operation's back-off.
type desiredVolume struct {
	name   string
	source v1.VolumeSource
	// remount is set when a remount was asked for a mounted volume whose plugin refreshes its
	// content (secret, configMap, projected, downwardAPI).
	remount bool
	// failedAt and backoff are the last failure and the wait before the next try; zero when
	// the last try succeeded or none was made.
	failedAt time.Time
	backoff  time.Duration
	// waiting is set while its SetUp waits for a service account token requested beside the
	// loop: the operation is in flight, and the reconciler starts no other for the volume.
	waiting bool
}

// podMounts is what is mounted for one pod: volumes, mounted by this process, and uncertain, the
// volumes a restarted process reconstructed from the pod's directory (VolumeMountUncertain):
// possibly mounted, so torn down when no longer desired and waited for by WaitForVolumesGone, but
// not mounted for WaitForAttachAndMount and WaitForUnmount, and
// set up again by the reconciler while desired. A successful SetUp makes one mounted; a failed
// one leaves it uncertain (markVolumeErrorState keeps a reconstructed volume's state).
type podMounts struct {
	pod       *v1.Pod
	volumes   []string
	uncertain []string
}

// New returns a Manager whose loops start at the clock's now.
func New(opts Options) (*Manager, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new volume manager: %w", err)
	}
	m := &Manager{
		opts: opts, origin: opts.Clock.Now(),
		desired: map[types.UID]*podVolumes{}, mounted: map[types.UID]*podMounts{}, errors: map[types.UID][]string{},
		podsChanged: true,
	}
	// The reconciler reconstructs the volumes on disk before its first pass, before the sources
	// are ready: each is uncertain until a SetUp succeeds or it is torn down.
	if opts.PodDirs == nil {
		m.opts.PodDirs = (*PodDirs)(nil)
	}
	for _, r := range m.opts.PodDirs.Reconstruct() {
		pm := &podMounts{pod: r.Pod, uncertain: r.Volumes}
		m.mounted[pm.pod.UID] = pm
		// No pod is desired yet: each is to be unmounted unless a pod source brings it.
		m.removed = true
		m.changed(m.origin)
	}
	return m, nil
}

// PodsChanged tells the populator that the pod manager's pods changed, or what the pod workers
// answer about them: it looks at the next pass.
func (m *Manager) PodsChanged() {
	m.podsChanged = true
	m.changed(m.opts.Clock.Now())
}

// ReprocessPod asks the populator to look at the pod again at its next pass: its volumes are
// added if they are not, and those mounted are remounted (the kubelet's ReprocessPod, which
// every SyncPod and SyncTerminatedPod calls through the waits).
func (m *Manager) ReprocessPod(uid types.UID) {
	if p, ok := m.desired[uid]; ok {
		p.processed = false
		m.reprocess = append(m.reprocess, uid)
	} else {
		m.podsChanged = true
	}
	m.changed(m.opts.Clock.Now())
}

func (m *Manager) changed(at time.Time) {
	if m.changedAt.IsZero() || at.Before(m.changedAt) {
		m.changedAt = at
	}
}

// tickAfter is the first pass strictly after t.
func (m *Manager) tickAfter(t time.Time) time.Time {
	n := t.Sub(m.origin) / LoopPeriod
	if t.Before(m.origin) {
		n = -1
	}
	return m.origin.Add((n + 1) * LoopPeriod)
}

// NextWake returns when the next pass is due: the first pass after an unseen change, or the
// first pass after a failed volume's back-off expires (its SetUp's, or its TearDown's); false
// when nothing is due.
func (m *Manager) NextWake() (time.Time, bool) {
	var at time.Time
	earlier := func(t time.Time) {
		if at.IsZero() || t.Before(at) {
			at = t
		}
	}
	if !m.changedAt.IsZero() {
		earlier(m.tickAfter(m.changedAt))
	}
	if m.hasAddedPods {
		for _, r := range m.unmountFailed {
			earlier(m.tickAfter(r.failedAt.Add(r.backoff)))
		}
	}
	if m.failing == 0 {
		return at, !at.IsZero()
	}
	for _, uid := range m.order {
		for _, v := range m.desired[uid].volumes {
			// A volume whose retry waits for a token's answer is not retried by a pass (the
			// answer carries its mount on, mountWaiting): its expired back-off is no wake, or
			// in `run` passes would run back to back until the answer.
			if !v.failedAt.IsZero() && !v.waiting {
				earlier(m.tickAfter(v.failedAt.Add(v.backoff)))
			}
		}
	}
	return at, !at.IsZero()
}

// Advance runs a pass when one is due.
func (m *Manager) Advance() {
	now := m.opts.Clock.Now()
	if at, ok := m.NextWake(); !ok || at.After(now) {
		return
	}
	m.populate(now)
	m.reconcile(now)
}

// usedVolumes lists, in spec order, the volumes of the pod that a container mounts or uses as a
// device (GetPodVolumeNames): the others are never mounted.
func usedVolumes(pod *v1.Pod) []v1.Volume {
	used := map[string]bool{}
	visit := func(c *v1.Container) {
		for _, vm := range c.VolumeMounts {
			used[vm.Name] = true
		}
		for _, vd := range c.VolumeDevices {
			used[vd.Name] = true
		}
	}
	for i := range pod.Spec.InitContainers {
		visit(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		visit(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.EphemeralContainers {
		visit((*v1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	var out []v1.Volume
	for _, v := range pod.Spec.Volumes {
		if used[v.Name] {
			out = append(out, v)
		}
	}
	return out
}

// PossiblyMounted lists the volumes possibly mounted for the pod, sorted: those mounted and
// those reconstructed as uncertain (GetPossiblyMountedVolumesForPod, which SyncTerminatedPod's
// second poll asks through podVolumesExist: WaitForVolumesGone).
func (m *Manager) PossiblyMounted(uid types.UID) []string {
	pm, ok := m.mounted[uid]
	if !ok {
		return nil
	}
	return slices.Sorted(slices.Values(slices.Concat(pm.volumes, pm.uncertain)))
}

// mountedOnly lists the volumes mounted for the pod, sorted, not those uncertain
// (GetMountedVolumesForPod, which WaitForUnmount asks).
func (m *Manager) mountedOnly(uid types.UID) []string {
	pm, ok := m.mounted[uid]
	if !ok {
		return nil
	}
	return slices.Sorted(slices.Values(pm.volumes))
}

// emit traces e about pod.
func (m *Manager) emit(pod *v1.Pod, e trace.Event) {
	e.Component = trace.VolumeManager
	e.Pod = ""
	if ns, name := m.podName(pod); name != "" {
		e.Pod = ns + "/" + name
	}
	e.UID = string(pod.UID)
	m.opts.Tracer.Emit(e)
}

// podName is the pod's namespace and name. A pod reconstructed from its directory alone is named
// by the pod manager or the runtime's sandbox when either has it, else not at all (its UID
// alone).
func (m *Manager) podName(pod *v1.Pod) (namespace, name string) {
	if pod.Name != "" {
		return pod.Namespace, pod.Name
	}
	if p, ok := m.opts.Pods.GetPodByUID(pod.UID); ok {
		return p.Namespace, p.Name
	}
	if m.opts.PodName != nil {
		if ns, name, ok := m.opts.PodName(pod.UID); ok {
			return ns, name
		}
	}
	return "", ""
}

// fault is the failure scripted for op on the pod's volume, if any: the node's mounter fails
// the plugin's operation with it. The pod's UID names it, which a pod reconstructed from its
// directory alone has too.
func (m *Manager) fault(pod *v1.Pod, volume string, op Operation) error {
	if m.opts.Faults == nil {
		return nil
	}
	return m.opts.Faults.Fail(pod.UID, volume, op)
}

// podForgetter is the optional capability of a PluginFaults that keeps a script per pod (Faults):
// it is told when nothing can use the pod's script any more, so that what the pod never used up
// goes too.
type podForgetter interface {
	ForgetPod(uid types.UID)
}

// forgetIfGone tells the faults that the pod is forgotten once none of its volumes is desired
// or possibly mounted, and its directory holds no volume's directory. A volume whose first SetUp
// failed under the plugin may have left its directory (a tmpfs's mount point, made before the
// mount), which no TearDown of this process removes: a restarted kubelet reconstructs the
// volume from it and tears it down, and the script, which names the pod's UID as the
// reconstructed volume does, still applies to that TearDown. Its success, which removes the
// last volume directory, forgets the pod then.
func (m *Manager) forgetIfGone(uid types.UID) {
	if _, ok := m.desired[uid]; ok {
		return
	}
	if _, ok := m.mounted[uid]; ok {
		return
	}
	f, ok := m.opts.Faults.(podForgetter)
	if !ok || m.opts.PodDirs.HasVolumes(uid) {
		return
	}
	f.ForgetPod(uid)
}
