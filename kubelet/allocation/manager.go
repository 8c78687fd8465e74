package allocation

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/admission"
	"github.com/minikubelet/minikubelet/api/apidefaults"
	"github.com/minikubelet/minikubelet/events"
	"github.com/minikubelet/minikubelet/kubecontainer"
)

// The retry timer of pending resizes: the first retry 30s after the kubelet starts (or after a
// retry while the sources were not all seen), then 3 minutes after the last retry of any trigger.
const (
	InitialRetryDelay = 30 * time.Second
	RetryDelay        = 3 * time.Minute
)

// Infeasible messages of v1.35.
const (
	MessageStaticPod = "In-place resize of static-pods is not supported"
	// messageCapacity prefixes the resource that exceeds the node's allocatable.
	messageCapacity = "Node didn't have enough capacity: "
)

// ResizeConditions is the status manager's cache of resize conditions.
type ResizeConditions interface {
	SetPodResizePendingCondition(uid types.UID, reason, message string, generation int64) bool
	SetPodResizeInProgressCondition(uid types.UID, reason, message string, generation int64) (int64, bool)
	ClearPodResizePendingCondition(uid types.UID)
	ClearPodResizeInProgressCondition(uid types.UID) (int64, bool)
	IsPodResizeDeferred(uid types.UID) bool
	IsPodResizeInfeasible(uid types.UID) bool
	PodResizeConditions(uid types.UID) []v1.PodCondition
	BackfillPodResizeConditions(pods []*v1.Pod)
}

// EventRecorder records one Kubernetes event about a pod.
type EventRecorder interface {
	Event(object runtime.Object, eventType, reason, message string)
}

// AdmitFunc runs the admit handlers for pod, as its resize wants it, beside the other active pods
// with their allocated resources: canAdmitPod.
type AdmitFunc func(ctx context.Context, pod *v1.Pod) (ok bool, reason, message string)

// Options configure a Manager.
type Options struct {
	// Clock times the retry timer. Required.
	Clock clock.PassiveClock
	// Conditions is the status manager. Required.
	Conditions ResizeConditions
	// Admit is canAdmitPod; a resize it refuses is Deferred. Required.
	Admit AdmitFunc
	// Allocatable is the node's capacity less the kube and system reservations
	// (nodeAllocatableAbsolute), which a resize may not exceed. Required.
	Allocatable v1.ResourceList
	// PodByUID is the pod manager's. Required.
	PodByUID func(uid types.UID) (*v1.Pod, bool)
	// SourcesReady reports whether every pod source has been seen. Nil is always.
	SourcesReady func() bool
	// Recorder receives the resize events. Nil records none.
	Recorder EventRecorder
	// Checkpoint keeps the allocations across restarts (allocated_pods_state in the root
	// directory): New reads them back and Flush writes them. Nil keeps them in memory only, as
	// the kubelet's in-memory manager does.
	Checkpoint Checkpointer
	// CheckpointPath names the checkpoint in errors and logs.
	CheckpointPath string
}

func (o Options) validate() error {
	var missing minikubelet.Missing
	missing.Check("Admit", o.Admit == nil)
	missing.Check("Allocatable", o.Allocatable == nil)
	missing.Check("Clock", o.Clock == nil)
	missing.Check("Conditions", o.Conditions == nil)
	missing.Check("PodByUID", o.PodByUID == nil)
	return missing.Err("")
}

// Manager is the allocation manager.
type Manager struct {
	opts Options
	// allocated holds, per pod, the resources allocated to each main container and sidecar.
	allocated map[types.UID]podAllocation
	// pending are the pods whose resize is not allocated yet, in retry order.
	pending []types.UID
	// admitted are the pods admitted in the current addition whose spec differs from their
	// allocation (NoteAdmitted), in admission order; HandlePodAdditions queues them.
	admitted []types.UID
	// next is when the retry timer fires.
	next time.Time
	// onChange are told of every pod whose allocation changed.
	onChange []func(types.UID)
	// dirty is set when an allocation was set since the last Flush; written is the SHA-256 of
	// what the checkpoint holds, valid when hasWritten. As in the kubelet, forgetting a pod does
	// not write the checkpoint: the next write leaves it out. A digest rather than the bytes:
	// each node of a fleet kept its whole last checkpoint only to tell an unchanged one from a
	// changed one.
	dirty      bool
	written    [sha256.Size]byte
	hasWritten bool
}

// OnChange registers fn to be called with the UID of every pod whose allocation is set or
// forgotten: admission counts the active pods' allocated requests.
func (m *Manager) OnChange(fn func(uid types.UID)) {
	m.onChange = append(m.onChange, fn)
}

func (m *Manager) changed(uid types.UID) {
	for _, fn := range m.onChange {
		fn(uid)
	}
}

// New returns a Manager.
func New(opts Options) (*Manager, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new allocation manager: %w", err)
	}
	m := &Manager{opts: opts, allocated: map[types.UID]podAllocation{},
		next: opts.Clock.Now().Add(InitialRetryDelay)}
	if opts.Checkpoint != nil {
		// The kubelet cannot start over a checkpoint it cannot read: it stops with this message.
		b, err := opts.Checkpoint.Read()
		if err == nil {
			m.allocated, err = decodeCheckpoint(b)
		}
		if err != nil {
			return nil, fmt.Errorf("new allocation manager: could not restore state from checkpoint: %w, please drain this node and delete pod resource information checkpoint file %q before restarting Kubelet",
				err, opts.CheckpointPath)
		}
		if b != nil {
			m.written, m.hasWritten = sha256.Sum256(b), true
		}
	}
	return m, nil
}

// Flush writes the allocations to the checkpoint when one was set since the last Flush and the
// checkpoint does not hold them already. The kubelet writes at each change, the whole checkpoint
// each time. Here a resize writes at once (when it arrives and when it is allocated), and the
// owner (the kubelet assembly) calls Flush for the rest: once a second in `run` and when the
// process stops, so that pods admitted one after the other do not each encode every allocation
// again. A failed write is returned, and not tried again before the next change, as in the
// kubelet.
func (m *Manager) Flush() error {
	if !m.dirty || m.opts.Checkpoint == nil {
		return nil
	}
	m.dirty = false
	buf := savePool.Get().(*checkpointBuffers)
	defer func() {
		buf.reset()
		savePool.Put(buf)
	}()
	if err := buf.appendCheckpoint(m.allocated); err != nil {
		return err
	}
	b := buf.file.Bytes()
	sum := sha256.Sum256(b)
	if m.hasWritten && sum == m.written {
		return nil
	}
	if err := m.opts.Checkpoint.Write(b); err != nil {
		return fmt.Errorf("save pod resource information checkpoint %s: %w", m.opts.CheckpointPath, err)
	}
	m.written, m.hasWritten = sum, true
	return nil
}

// SetAllocatedResources records pod's main containers' and sidecars' resources as allocated.
func (m *Manager) SetAllocatedResources(pod *v1.Pod) {
	n := len(pod.Spec.Containers)
	for i := range pod.Spec.InitContainers {
		if kubecontainer.IsRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			n++
		}
	}
	alloc := make(podAllocation, 0, n)
	for i := range pod.Spec.Containers {
		alloc = alloc.with(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; kubecontainer.IsRestartableInitContainer(c) {
			alloc = alloc.with(c)
		}
	}
	m.dirty = true
	m.allocated[pod.UID] = alloc
	m.changed(pod.UID)
}

// podAllocation is one pod's allocation: the resources allocated to each main container and
// sidecar, by container name in increasing order, each name once. The kubelet keeps a map by
// name (PodResourceInfo.ContainerResources); a pod has a container or a few, and the map's header
// and group were about 500 bytes of every admitted pod's heap for one container's resources,
// against 64 for this list.
type podAllocation []containerAllocation

// containerAllocation is the resources allocated to one container.
type containerAllocation struct {
	name      string
	resources v1.ResourceRequirements
}

// with returns a with c's resources, deep-copied, as c's allocation: in place of an allocation
// of the same name (as the kubelet's map keeps the last container of a name), else inserted in
// order.
func (a podAllocation) with(c *v1.Container) podAllocation {
	i, found := a.index(c.Name)
	if !found {
		a = slices.Insert(a, i, containerAllocation{name: c.Name})
	}
	a[i].resources = v1.ResourceRequirements{}
	c.Resources.DeepCopyInto(&a[i].resources)
	return a
}

// get returns the resources allocated to the container named name.
func (a podAllocation) get(name string) (*v1.ResourceRequirements, bool) {
	if i, found := a.index(name); found {
		return &a[i].resources, true
	}
	return nil, false
}

// index returns the position of the allocation named name and true, or where it would be
// inserted and false. a is sorted and unique by name: with and allocationOf, the only ways an
// allocation is built, keep it so.
func (a podAllocation) index(name string) (int, bool) {
	return slices.BinarySearchFunc(a, name, compareName)
}

// compareName orders an allocation against a container name, by strings.Compare: the byte order
// json.Marshal sorts a map's string keys in, which appendCheckpoint relies on.
func compareName(e containerAllocation, name string) int {
	return strings.Compare(e.name, name)
}

// byName orders two allocations as compareName does.
func byName(x, y containerAllocation) int {
	return compareName(x, y.name)
}

// RemovePod forgets the pod's allocation.
func (m *Manager) RemovePod(uid types.UID) {
	if _, ok := m.allocated[uid]; ok {
		delete(m.allocated, uid)
		m.changed(uid)
	}
}

// RemoveOrphanedPods forgets the allocation of every pod not in remaining (housekeeping's
// HandlePodCleanups). As for RemovePod, the checkpoint is not written for it: the next write
// leaves those pods out.
func (m *Manager) RemoveOrphanedPods(remaining map[types.UID]bool) {
	for uid := range m.allocated {
		if !remaining[uid] {
			delete(m.allocated, uid)
			m.changed(uid)
		}
	}
}

// UpdatePodFromAllocation returns pod with its allocated resources in place of the desired ones,
// a copy when they differ (true), pod itself otherwise.
func (m *Manager) UpdatePodFromAllocation(pod *v1.Pod) (*v1.Pod, bool) {
	if pod == nil {
		return nil, false
	}
	alloc, ok := m.allocated[pod.UID]
	if !ok {
		return pod, false
	}
	// Only the containers whose resources differ take the allocation's (updatePodFromAllocation):
	// the others keep the spec's own lists, where an equal quantity may be spelled otherwise
	// ("1073741824" for "1Gi"), which the pod's status then shows.
	updated := false
	for _, init := range []bool{false, true} {
		for i := range containers(pod, init) {
			c := &containers(pod, init)[i]
			a, ok := alloc.get(c.Name)
			if !ok || sameResources(&c.Resources, a) {
				continue
			}
			if !updated {
				updated = true
				pod = pod.DeepCopy()
			}
			containers(pod, init)[i].Resources = *a.DeepCopy()
		}
	}
	return pod, updated
}

// containers returns the pod's init containers or its main containers.
func containers(pod *v1.Pod, init bool) []v1.Container {
	if init {
		return pod.Spec.InitContainers
	}
	return pod.Spec.Containers
}

// HandlePodUpdate is the resize half of HandlePodUpdates for a pod that changed from old: when a
// container's cpu or memory request or limit changed, a pod whose desired resources differ from
// its allocation is queued and every pending resize retried; a pod whose resize was reverted
// loses its PodResizePending. It returns the pods to sync.
func (m *Manager) HandlePodUpdate(ctx context.Context, old, pod *v1.Pod) []*v1.Pod {
	if old == nil || !resized(old, pod) {
		return nil
	}
	// The allocations not written yet are written before a resize is handled, so that a
	// process killed later never admits this pod again at its new spec's resources: what a
	// restarted kubelet admits from its spec is then always what was allocated. The write
	// carries every pod admitted since the last one, not only this pod's allocation; the kubelet
	// would have failed (and logged) each of those writes at its admission, and goes on.
	if err := m.Flush(); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to save the allocations admitted since the last checkpoint write", "resizedPod", klog.KObj(pod))
	}
	if _, updated := m.UpdatePodFromAllocation(pod); !updated {
		m.opts.Conditions.ClearPodResizePendingCondition(pod.UID)
		return nil
	}
	m.pushPending(pod.UID)
	return m.RetryPendingResizes(ctx)
}

// NoteAdmitted is HandlePodAdditions' check of one pod just admitted (and allocated): when its
// desired resources differ from its allocation (a resize pending when the kubelet restarted), it
// is queued by the HandlePodAdditions that ends the addition. The kubelet decides this per pod
// before the pod's worker is told of it, so a pod the worker then starts terminating (one with a
// deletion timestamp) is queued all the same; a pod whose termination was requested before, or
// that has finished, is not admitted and so never noted.
func (m *Manager) NoteAdmitted(pod *v1.Pod) {
	if _, updated := m.UpdatePodFromAllocation(pod); updated {
		m.admitted = append(m.admitted, pod.UID)
	}
}

// HandlePodAdditions is the resize half of HandlePodAdditions, once every pod of the update was
// added: the resize conditions the pods' statuses show are taken into the status manager's
// cache, the pods NoteAdmitted noted are queued, and every pending resize retried. It returns
// the pods to sync.
func (m *Manager) HandlePodAdditions(ctx context.Context, pods []*v1.Pod) []*v1.Pod {
	m.opts.Conditions.BackfillPodResizeConditions(pods)
	if len(m.admitted) == 0 {
		return nil
	}
	for _, uid := range m.admitted {
		m.pushPending(uid)
	}
	m.admitted = m.admitted[:0]
	return m.RetryPendingResizes(ctx)
}

// resized reports whether a main container's or sidecar's cpu or memory request or limit changed
// (recordContainerResizeOperations).
func resized(old, pod *v1.Pod) bool {
	prev := map[string]v1.ResourceRequirements{}
	for _, c := range append(slices.Clone(old.Spec.InitContainers), old.Spec.Containers...) {
		prev[c.Name] = c.Resources
	}
	for _, c := range append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...) {
		o, ok := prev[c.Name]
		if !ok {
			continue
		}
		for _, pair := range [][2]v1.ResourceList{{o.Requests, c.Resources.Requests}, {o.Limits, c.Resources.Limits}} {
			if !pair[0].Cpu().Equal(*pair[1].Cpu()) || !pair[0].Memory().Equal(*pair[1].Memory()) {
				return true
			}
		}
	}
	return false
}

// pushPending queues the pod unless it is queued: PushPendingResize.
func (m *Manager) pushPending(uid types.UID) {
	if slices.Contains(m.pending, uid) {
		return
	}
	m.pending = append(m.pending, uid)
	m.sortPending()
}

// sortPending orders the pending resizes as sortPendingResizes does: those that do not increase
// requests first, then by priority, Guaranteed before the rest, then the oldest PodResizePending.
// Pods gone from the pod manager drop out.
func (m *Manager) sortPending() {
	var pods []*v1.Pod
	for _, uid := range m.pending {
		if p, ok := m.opts.PodByUID(uid); ok {
			pods = append(pods, p)
		}
	}
	slices.SortStableFunc(pods, func(a, b *v1.Pod) int {
		ai, bi := m.increasesRequests(a), m.increasesRequests(b)
		if ai != bi {
			if !ai {
				return -1
			}
			return 1
		}
		if pa, pb := priority(a), priority(b); pa != pb {
			if pa > pb {
				return -1
			}
			return 1
		}
		ga, gb := apidefaults.QOSClass(a) == v1.PodQOSGuaranteed, apidefaults.QOSClass(b) == v1.PodQOSGuaranteed
		if ga != gb {
			if ga {
				return -1
			}
			return 1
		}
		ta, tb := m.pendingSince(a.UID), m.pendingSince(b.UID)
		switch {
		case ta == nil && tb == nil:
			return 0
		case ta == nil:
			return 1
		case tb == nil:
			return -1
		}
		return ta.Compare(*tb)
	})
	m.pending = m.pending[:0]
	for _, p := range pods {
		m.pending = append(m.pending, p.UID)
	}
}

func priority(p *v1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

func (m *Manager) pendingSince(uid types.UID) *time.Time {
	for _, c := range m.opts.Conditions.PodResizeConditions(uid) {
		if c.Type == v1.PodResizePending {
			t := c.LastTransitionTime.Time
			return &t
		}
	}
	return nil
}

// increasesRequests reports whether the pod's desired cpu or memory requests exceed its allocated
// ones.
func (m *Manager) increasesRequests(pod *v1.Pod) bool {
	alloc, updated := m.UpdatePodFromAllocation(pod)
	if !updated {
		return false
	}
	want, have := admission.PodRequests(pod), admission.PodRequests(alloc)
	return want.Memory().Cmp(*have.Memory()) > 0 || want.Cpu().Cmp(*have.Cpu()) > 0
}

// HasPendingResizes reports whether a resize waits.
func (m *Manager) HasPendingResizes() bool { return len(m.pending) > 0 }

// RequestsShrank is HandlePodReconcile's test of a pod whose status changed from old: whether,
// both taken at their allocation and with the resources their statuses show (what admission
// counts of an active pod), its cpu or memory requests shrank. A resize actuated smaller frees
// what a deferred resize may be waiting for, and the kubelet then retries the pending resizes.
func (m *Manager) RequestsShrank(old, pod *v1.Pod) bool {
	old, _ = m.UpdatePodFromAllocation(old)
	pod, _ = m.UpdatePodFromAllocation(pod)
	opts := resourcehelper.PodResourcesOptions{UseStatusResources: true}
	was, now := resourcehelper.PodRequests(old, opts), resourcehelper.PodRequests(pod, opts)
	return now.Memory().Cmp(*was.Memory()) < 0 || now.Cpu().Cmp(*was.Cpu()) < 0
}

// RetryPendingResizes tries every pending resize in order and returns the pods to sync: those
// whose resize was allocated or whose resize conditions changed. Deferred resizes (and those that
// failed) stay pending; Infeasible ones leave the queue. The retry timer restarts.
func (m *Manager) RetryPendingResizes(ctx context.Context) []*v1.Pod {
	now := m.opts.Clock.Now()
	if m.opts.SourcesReady != nil && !m.opts.SourcesReady() {
		m.next = now.Add(InitialRetryDelay)
		return nil
	}
	m.next = now.Add(RetryDelay)
	var keep []types.UID
	var sync []*v1.Pod
	for _, uid := range m.pending {
		pod, ok := m.opts.PodByUID(uid)
		if !ok {
			continue
		}
		before := m.opts.Conditions.PodResizeConditions(uid)
		allocated, err := m.handlePodResourcesResize(ctx, pod)
		switch {
		case err != nil:
			// The allocation stays in memory; the pod is retried, and then finds nothing left
			// to allocate, as in the kubelet.
			klog.FromContext(ctx).Error(err, "Failed to handle pod resources resize", "pod", klog.KObj(pod))
			keep = append(keep, uid)
		case m.opts.Conditions.IsPodResizeDeferred(uid):
			keep = append(keep, uid)
		}
		if allocated || !equality.Semantic.DeepEqual(before, m.opts.Conditions.PodResizeConditions(uid)) {
			sync = append(sync, pod)
		}
	}
	m.pending = keep
	return sync
}

// handlePodResourcesResize allocates the pod's resize when it can, and otherwise sets
// PodResizePending with why; it reports whether it allocated. An allocation the checkpoint could
// not take is kept in memory and its error returned, with the conditions and events left as they
// were (the kubelet's SetAllocatedResources updates its cache before it writes).
func (m *Manager) handlePodResourcesResize(ctx context.Context, pod *v1.Pod) (bool, error) {
	conds := m.opts.Conditions
	if _, updated := m.UpdatePodFromAllocation(pod); !updated {
		conds.ClearPodResizePendingCondition(pod.UID)
		return false, nil
	}
	if kubecontainer.IsStaticPod(pod) {
		conds.SetPodResizePendingCondition(pod.UID, v1.PodReasonInfeasible, MessageStaticPod, pod.Generation)
		return false, nil
	}
	ok, reason, message := m.canResizePod(ctx, pod)
	if ok {
		m.SetAllocatedResources(pod)
		// A resize allocated is written at once, as the kubelet writes every allocation: a
		// process killed before the next Flush would otherwise find the resize pending again
		// while the runtime may already run it. Resizes are rare; admissions, which are not,
		// wait for Flush.
		if err := m.Flush(); err != nil {
			return false, err
		}
		conds.ClearPodResizePendingCondition(pod.UID)
		// A new resize starts a new PodResizeInProgress, observed at this generation.
		conds.ClearPodResizeInProgressCondition(pod.UID)
		conds.SetPodResizeInProgressCondition(pod.UID, "", "", pod.Generation)
		m.event(pod, v1.EventTypeNormal, events.ResizeStarted, events.PodResizeStartedMsg(pod, pod.Generation))
		return true, nil
	}
	if conds.SetPodResizePendingCondition(pod.UID, reason, message, pod.Generation) {
		kind := events.ResizeDeferred
		if reason == v1.PodReasonInfeasible {
			kind = events.ResizeInfeasible
		}
		m.event(pod, v1.EventTypeWarning, kind, events.PodResizePendingMsg(pod, reason, message, pod.Generation))
	}
	return false, nil
}

// canResizePod: Infeasible when the pod's cpu or memory requests exceed the node's allocatable
// (memory named first), Deferred with the admit handler's message when it does not fit beside
// the other allocated pods.
func (m *Manager) canResizePod(ctx context.Context, pod *v1.Pod) (bool, string, string) {
	alloc := m.opts.Allocatable
	cpuReq, memReq := resizeRequest(pod, v1.ResourceCPU), resizeRequest(pod, v1.ResourceMemory)
	cpu, mem := cpuReq.MilliValue(), memReq.Value()
	cpuAvail, memAvail := alloc.Cpu().MilliValue(), alloc.Memory().Value()
	if cpu > cpuAvail || mem > memAvail {
		msg := fmt.Sprintf("cpu, requested: %d, capacity: %d", cpu, cpuAvail)
		if mem > memAvail {
			msg = fmt.Sprintf("memory, requested: %d, capacity: %d", mem, memAvail)
		}
		return false, v1.PodReasonInfeasible, messageCapacity + msg
	}
	if ok, _, message := m.opts.Admit(ctx, pod); !ok {
		return false, v1.PodReasonDeferred, message
	}
	return true, "", ""
}

// resizeRequest is the pod's request of one resource as canResizePod reads it
// (GetResourceRequest): the pod-level requests in place of the containers' when the pod sets
// pod-level resources, and the pod's overhead only when the pod requests some of the resource.
// Admission's sums add the overhead always: a pod with a cpu overhead and no cpu request asks
// for no cpu here.
func resizeRequest(pod *v1.Pod, name v1.ResourceName) resource.Quantity {
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{
		SkipContainerLevelResources: resourcehelper.IsPodLevelResourcesSet(pod), ExcludeOverhead: true})
	q := reqs[name].DeepCopy() // Add may write into a value shared with the pod
	if o, ok := pod.Spec.Overhead[name]; ok && !q.IsZero() {
		q.Add(o)
	}
	return q
}

func (m *Manager) event(pod *v1.Pod, eventType, reason, message string) {
	if m.opts.Recorder != nil {
		m.opts.Recorder.Event(pod, eventType, reason, message)
	}
}

// NextWake returns when the retry timer fires, while a resize is pending.
func (m *Manager) NextWake() (time.Time, bool) {
	if len(m.pending) == 0 {
		return time.Time{}, false
	}
	return m.next, true
}

// Advance retries the pending resizes when the timer has fired, and returns the pods to sync.
func (m *Manager) Advance(ctx context.Context) []*v1.Pod {
	if len(m.pending) == 0 || m.opts.Clock.Now().Before(m.next) {
		return nil
	}
	return m.RetryPendingResizes(ctx)
}

// sameResources is equality.Semantic.DeepEqual of two containers' resources (quantities by value,
// a nil list or claim slice equal to an empty one) without reflection: every sync of every pod
// asks it of every container, and the reflective walk was a twentieth of the sync side's time.
func sameResources(a, b *v1.ResourceRequirements) bool {
	return sameResourceList(a.Limits, b.Limits) && sameResourceList(a.Requests, b.Requests) && slices.Equal(a.Claims, b.Claims)
}

// sameResourceList is equality.Semantic.DeepEqual of two resource lists.
func sameResourceList(a, b v1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		if p, ok := b[name]; !ok || q.Cmp(p) != 0 {
			return false
		}
	}
	return true
}
