package nodestatus

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/events"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// The heartbeat's timing.
const (
	// StatusPeriod is the kubelet's default nodeStatusUpdateFrequency.
	StatusPeriod = 10 * time.Second
	// ReportPeriod is the kubelet's default nodeStatusReportFrequency: with the node lease as
	// the heartbeat, an unchanged status is written only this often.
	ReportPeriod = 5 * time.Minute
	// LeaseRenewPeriod is how often the node lease is renewed: the kubelet's default
	// nodeLeaseDurationSeconds (40s) times its renew interval fraction (0.25).
	LeaseRenewPeriod = 10 * time.Second
	// registerBackoffMin and registerBackoffMax bound the sleep before each registration
	// attempt, the first too, as the kubelet's do.
	registerBackoffMin = 100 * time.Millisecond
	registerBackoffMax = 7 * time.Second
	// FastStatusPeriod is how often fastStatusUpdateOnce checks whether the new node would be
	// Ready, and fastStatusTimeout (the kubelet's nodeReadyGracePeriod) when it gives up.
	FastStatusPeriod  = 100 * time.Millisecond
	fastStatusTimeout = 120 * time.Second
	// periodJitter is the jitter factor of the node status loop's and the lease controller's
	// periods: each waits its period plus up to 4% of it.
	periodJitter = 0.04
	// nodeStatusUpdateRetry is how many times one status update tries to write: the first from
	// the node lister, the others from a fresh read.
	nodeStatusUpdateRetry = 5
)

// RuntimeState is what Ready follows: the kubelet's runtimeState.
type RuntimeState interface {
	// Errors is nil while the runtime answers and the PLEG is healthy.
	Errors() error
	// UpdateRuntimeUp asks the runtime for its status now (the kubelet's updateRuntimeUp), which
	// fastStatusUpdateOnce does before each poll that finds the node not Ready.
	UpdateRuntimeUp(ctx context.Context)
}

// Options configure a Status.
type Options struct {
	// NodeName is the node's name. Required.
	NodeName string
	// NodeIP is reported as the node's InternalIP address. Empty reports none.
	NodeIP string
	// Clock is the time of every write. Required.
	Clock clock.PassiveClock
	// Tracer receives registration, readiness changes and failed writes. Required.
	Tracer trace.Tracer
	// Client writes the node and its lease. Required.
	Client Client
	// Lister is the node informer's view, which the status updates read first, as the
	// kubelet's do. Nil reads the node from the API server.
	Lister NodeLister
	// Taints are registered with the node (the kubelet's registerWithTaints).
	Taints []v1.Taint
	// RuntimeState decides the Ready condition. Required.
	RuntimeState RuntimeState
	// Devices adds the device plugins' extended resources to capacity and allocatable. Nil adds
	// none.
	Devices DeviceCapacity
	// StatusPeriod is nodeStatusUpdateFrequency; zero is the kubelet's default, StatusPeriod.
	StatusPeriod time.Duration
	// ReportPeriod is nodeStatusReportFrequency: how often an unchanged status is written all the
	// same; zero is the kubelet's default, ReportPeriod.
	ReportPeriod time.Duration
	// Rand draws the kubelet's random delay added to ReportPeriod after a change. Nil uses a
	// source seeded with 1.
	Rand *rand.Rand
	// Jitter draws the jitter of the node status and lease periods and of the CSINode's
	// initialization back-off: a stream of its own, so that the report delays do not depend on
	// it. Nil uses a source seeded with 2.
	Jitter *rand.Rand
	// CSINodes, when set, is the client the CSI volume plugin initializes the node's CSINode
	// through; until it has, the node is NotReady ("CSINode is not yet initialized"), as the
	// kubelet's is. Nil initializes none: the node has no storage error.
	CSINodes CSINodeClient
	// KubeletPort is advertised in status.daemonEndpoints. Zero is the kubelet's 10250.
	KubeletPort int32
	// Machine is the node's size and reservations, which make its capacity and allocatable.
	Machine Machine
	// Recorder receives the node's events (NodeAllocatableEnforced, NodeHasSufficientMemory,
	// NodeReady...), about NodeRef(NodeName). Nil records none.
	Recorder EventRecorder
}

// EventRecorder records a Kubernetes event: client-go's record.EventRecorder's Event.
type EventRecorder interface {
	Event(object runtime.Object, eventType, reason, message string)
}

// NodeRef is the reference the kubelet records its node's events about (Kubelet.nodeRef): the
// Node by kind and name only, with no UID, since the node may not exist yet.
func NodeRef(nodeName string) *v1.ObjectReference {
	return &v1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: nodeName}
}

// BirthCry records the event a kubelet process records once, when it starts and before it runs:
// Normal Starting, "Starting kubelet.", about the node (Kubelet.BirthCry).
func BirthCry(r EventRecorder, nodeName string) {
	r.Event(NodeRef(nodeName), v1.EventTypeNormal, events.StartingKubelet, events.MessageStartingKubelet)
}

func (o Options) validate() error {
	var missing []string
	if o.NodeName == "" {
		missing = append(missing, "NodeName")
	}
	if o.Clock == nil {
		missing = append(missing, "Clock")
	}
	if o.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	if o.Client == nil {
		missing = append(missing, "Client")
	}
	if o.RuntimeState == nil {
		missing = append(missing, "RuntimeState")
	}
	if len(missing) > 0 {
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	if err := o.Machine.Validate(); err != nil {
		return fmt.Errorf("options Machine: %w", err)
	}
	if o.StatusPeriod < 0 || o.ReportPeriod < 0 {
		return fmt.Errorf("options StatusPeriod %v, ReportPeriod %v: must not be negative", o.StatusPeriod, o.ReportPeriod)
	}
	return nil
}

func (o Options) reportPeriod() time.Duration {
	if o.ReportPeriod == 0 {
		return ReportPeriod
	}
	return o.ReportPeriod
}

func (o Options) statusPeriod() time.Duration {
	if o.StatusPeriod == 0 {
		return StatusPeriod
	}
	return o.StatusPeriod
}

// Status registers the node and keeps its status fresh, its lease while it has the lease
// controller (see DetachLease), and the CSINode the node's readiness waits for.
type Status struct {
	opts       Options
	registered bool
	uid        types.UID
	// retry is when registration is next tried, and backoff the sleep before it.
	retry   time.Time
	backoff time.Duration
	// status is when the node status is next written: at the registration, then a jittered
	// period after each update.
	status time.Time
	// lease is the lease controller while the heartbeat drives it; nil once detached.
	lease *Lease
	// ready is the Ready condition last reported.
	ready bool
	// fast is when fastStatusUpdateOnce next checks the node, zero once it is done; fastStart is
	// when it started.
	fast, fastStart time.Time
	// lastReport is when the status was last written (the kubelet's lastStatusReportTime), and
	// delay the random delay added to the report period after a change.
	lastReport time.Time
	delay      time.Duration
	rand       *rand.Rand
	// jitter draws the periods' jitter; csi is the CSINode's initialization, nil without a client,
	// which the heartbeat drives until csiDetached (DetachCSINode) and reads the storage error of.
	jitter      *rand.Rand
	csi         *csiNodeInit
	csiDetached bool
	// capacity and allocatable are the machine's (Machine.Resources), made once: the options do
	// not change, and every status update applies them.
	capacity, allocatable v1.ResourceList
	// started is whether the loops started (begin), when the container manager's start is
	// recorded; unschedulable is the spec.unschedulable last seen (Kubelet.lastNodeUnschedulable).
	started, unschedulable bool
}

// New returns a Status whose registration is due at once.
func New(opts Options) (*Status, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new node status: %w", err)
	}
	r := opts.Rand
	if r == nil {
		r = rand.New(rand.NewPCG(1, 1))
	}
	j := opts.Jitter
	if j == nil {
		j = rand.New(rand.NewPCG(2, 2))
	}
	capacity, allocatable := opts.Machine.Resources()
	return &Status{opts: opts, rand: r, jitter: j, lease: newLeaseController(opts, j), csi: newCSINodeInit(opts, j),
		capacity: capacity, allocatable: allocatable}, nil
}

// begin starts what the kubelet starts when it runs, at the first call: the container manager
// (recorded now: Run's first runtime check, which starts it, comes before the node status loop),
// the node status loop, whose registration sleeps 100ms before its first attempt,
// fastStatusUpdateOnce, whose first poll is at once, the lease controller, whose first renewal is
// at once, and the CSINode's initialization (started with the kubelet's volume plugins).
func (s *Status) begin(now time.Time) {
	if s.started {
		return
	}
	s.started = true
	s.record(events.SuccessfulNodeAllocatableEnforcement, events.MessageNodeAllocatableEnforced)
	s.backoff = registerBackoffMin
	s.retry = now.Add(s.backoff)
	s.fastStart, s.fast = now, now
	if s.lease != nil {
		s.lease.next = now
	}
	if s.csi != nil && !s.csiDetached {
		s.csi.start(now)
	}
}

// jitter is wait.Jitter(d, factor) drawn from r: d plus up to factor of it. The node status
// loop and the lease controller wait their periods with factor periodJitter, the CSINode's
// initialization its back-off steps with csiNodeJitter.
func jitter(r *rand.Rand, d time.Duration, factor float64) time.Duration {
	return d + time.Duration(r.Float64()*factor*float64(d))
}

// DetachLease hands the lease controller over to a driver that runs it on its own, as the
// kubelet runs its lease controller beside the node status loop: from then on Heartbeat and
// NextWake leave the lease alone, and the lease's first renewal is due at once. Attached, the
// lease is first renewed when the node registers. It returns nil when already detached.
//
// The detached lease draws its jitter from a stream of its own, seeded from the Status' stream
// now: the two then run on different goroutines, and a *rand.Rand is not safe to share. Attached
// (replay), both draw from the one stream in the heartbeat's order, as before.
func (s *Status) DetachLease() *Lease {
	l := s.lease
	s.lease = nil
	if l != nil {
		l.next = s.opts.Clock.Now()
		l.jitter = rand.New(rand.NewPCG(s.jitter.Uint64(), s.jitter.Uint64()))
	}
	return l
}

// DetachCSINode hands the CSINode's initialization over to a driver that runs it on its own, as
// the kubelet runs initializeCSINode on a goroutine of its own: from then on Heartbeat and
// NextWake leave it alone, its first read is due at once, and the Status reads only its storage
// error, which it publishes atomically. As the detached lease, it draws its back-off's jitter from
// a stream of its own, seeded from the Status' one now. It returns nil without a CSINodes client
// or when already detached.
func (s *Status) DetachCSINode() *CSINode {
	if s.csi == nil || s.csiDetached {
		return nil
	}
	s.csiDetached = true
	s.csi.rand = rand.New(rand.NewPCG(s.jitter.Uint64(), s.jitter.Uint64()))
	s.csi.start(s.opts.Clock.Now())
	return &CSINode{init: s.csi}
}

// Registered reports whether the node object exists.
func (s *Status) Registered() bool { return s.registered }

// NextWake returns when the heartbeat next has work: now before its start.
func (s *Status) NextWake() (time.Time, bool) {
	if !s.started {
		return s.opts.Clock.Now(), true
	}
	next := s.status
	if !s.registered {
		next = s.retry
	}
	if s.lease != nil && s.lease.next.Before(next) {
		next = s.lease.next
	}
	if s.fastPending() && s.fast.Before(next) {
		next = s.fast
	}
	if s.csiDetached {
		return next, true
	}
	if at, ok := s.csi.nextWake(); ok && at.Before(next) {
		next = at
	}
	return next, true
}

// Register creates the node object (the kubelet's registerWithAPIServer), adopting an existing
// one, when an attempt is due. As the kubelet's, it sleeps before every attempt, the first too:
// 100ms, doubling after each failure up to 7s. Once registered, the status update of the same
// syncNodeStatus call is due at once.
func (s *Status) Register(ctx context.Context) error {
	now := s.opts.Clock.Now()
	s.begin(now)
	if s.registered || now.Before(s.retry) {
		return nil
	}
	ready, msg := s.readiness()
	name := s.opts.NodeName
	// registerWithAPIServer builds the node with initialNode at every attempt, and the setters
	// record their events on each.
	initial, recorded := initialNodeEvents(name, s.opts.NodeIP, s.opts.KubeletPort, s.opts.Machine, now, ready, msg)
	initial.Spec.Taints = append([]v1.Taint(nil), s.opts.Taints...)
	s.recordStatus(recorded)
	s.recordSchedulable(initial)
	s.applyDevices(initial)
	created, err := s.opts.Client.CreateNode(ctx, initial)
	if apierrors.IsAlreadyExists(err) {
		created, err = s.opts.Client.GetNode(ctx, name)
	}
	ev := trace.Event{Component: trace.Node, Pod: name, Func: "registerWithAPIServer"}
	if err != nil {
		// registerWithAPIServer sleeps once the failed attempt has returned.
		s.backoff = min(2*s.backoff, registerBackoffMax)
		s.retry = s.opts.Clock.Now().Add(s.backoff)
		ev.Event, ev.Reason, ev.Message = trace.KindError, "FailedToRegisterNode", err.Error()
		s.opts.Tracer.Emit(ev)
		return fmt.Errorf("register node %s: %w", name, err)
	}
	s.registered, s.uid, s.ready = true, created.UID, ready
	// syncNodeStatus goes on to update the status in the same call.
	s.status = now
	ev.Event = trace.KindRegister
	s.opts.Tracer.Emit(ev)
	return nil
}

// Heartbeat does what is due of the loops that run beside registration: the lease controller
// (unless detached), the CSINode's initialization, the node status update (once registered; the
// next one is due nodeStatusUpdateFrequency plus up to 4% after this one ends, as the kubelet's
// sliding JitterUntil waits) and fastStatusUpdateOnce's poll.
func (s *Status) Heartbeat(ctx context.Context) error {
	now := s.opts.Clock.Now()
	s.begin(now)
	var errs []error
	if s.lease != nil {
		// Only a failure is kept: a list of one nil error still cost an allocation at every
		// heartbeat.
		if err := s.lease.Renew(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if !s.csiDetached {
		s.csi.step(ctx, now)
	}
	if s.registered && vclock.Due(s.status, now) {
		err := s.updateNodeStatus(ctx, now)
		s.status = s.opts.Clock.Now().Add(jitter(s.jitter, s.opts.statusPeriod(), periodJitter))
		if err != nil {
			errs = append(errs, err)
		}
	}
	if s.fastPending() && vclock.Due(s.fast, now) {
		if err := s.fastStatusUpdate(ctx, now); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// fastPending reports whether fastStatusUpdateOnce has a poll to make once s.fast is due. The
// kubelet's fastNodeStatusUpdate takes syncNodeStatusMux first, which syncNodeStatus holds through
// the whole of registerWithAPIServer, its back-off sleeps included: the first poll, at the start,
// runs before the node status loop takes the mutex, and the next one, due 100ms later, waits until
// the registration and the status update after it are done. So while the node is not registered
// no poll is pending after the first; the one due then runs in the heartbeat that follows the
// registration, after its status update.
func (s *Status) fastPending() bool {
	return !s.fast.IsZero() && (s.registered || !s.fast.After(s.fastStart))
}

// errRetryCount is what the kubelet's updateNodeStatus returns once every try has failed; each
// try's own error is logged as it fails.
var errRetryCount = errors.New("update node status exceeds retry count")

// fastStatusUpdate is one poll of the kubelet's fastStatusUpdateOnce (fastNodeStatusUpdate): it
// ends when the node object is already Ready, when the node would be Ready and its status has been
// written, or after 120s; otherwise it polls again 100ms after this poll's calls have returned
// (wait.Until is sliding). Like the kubelet's, it logs what goes wrong and returns nothing: a
// node it cannot read, or one without a Ready condition, is polled again, and a write that fails
// is tried again at once by the periodic update.
//
// The 120s are counted to s.fast, when the poll was due, not to now: wait.Until's function
// computes its timeout argument before fastNodeStatusUpdate waits for the mutex, so a poll that
// waited out a long registration runs as any other, and the next one gives up.
func (s *Status) fastStatusUpdate(ctx context.Context, now time.Time) error {
	logger := klog.FromContext(ctx)
	if s.fast.Sub(s.fastStart) >= fastStatusTimeout {
		s.fast = time.Time{}
		logger.Error(nil, "Node not becoming ready in time after startup")
		return nil
	}
	node, err := s.readNode(ctx, 0)
	if err != nil {
		logger.Error(err, "Error getting the current node from lister")
		s.pollAgain()
		return nil
	}
	i := readyIndex(node)
	if i < 0 {
		logger.Error(nil, "Node does not have NodeReady condition", "originalNode", node)
		s.pollAgain()
		return nil
	}
	if node.Status.Conditions[i].Status == v1.ConditionTrue {
		s.fast = time.Time{}
		return nil
	}
	// The poll asks the runtime first rather than wait for the 5s loop's next check.
	s.opts.RuntimeState.UpdateRuntimeUp(ctx)
	// The kubelet computes the whole status first (updateNode): its setters record their events
	// whether or not the node turns out Ready.
	ready, msg := s.readiness()
	upd := node.DeepCopy()
	s.recordStatus(s.updateConditions(ctx, upd, now, ready, msg))
	s.recordSchedulable(upd)
	applyResources(upd, s.capacity, s.allocatable)
	s.applyDevices(upd)
	if !ready || !statusChanged(&node.Status, &upd.Status) {
		s.pollAgain()
		return nil
	}
	s.fast = time.Time{}
	logger.Info("Fast updating node status as it just became ready")
	if err := s.writeStatus(ctx, node, upd, ready, msg); err != nil {
		s.opts.Tracer.Emit(trace.Event{Component: trace.Node, Event: trace.KindError, Pod: s.opts.NodeName, Reason: "FailedToUpdateNodeStatus", Message: err.Error(), Func: "fastNodeStatusUpdate"})
		// The node read is probably stale (a controller tainted it meanwhile): as the kubelet's
		// fastNodeStatusUpdate, retry at once with the periodic update, which reads it again,
		// rather than leave the node NotReady until the next period.
		logger.Error(err, "Error updating node status, will retry with syncNodeStatus")
		return s.updateNodeStatus(ctx, now)
	}
	return nil
}

// pollAgain makes fastStatusUpdateOnce's next poll due 100ms from now, the clock read once the
// poll's calls have returned.
func (s *Status) pollAgain() { s.fast = s.opts.Clock.Now().Add(FastStatusPeriod) }

// readyIndex is the index of node's first Ready condition, -1 when it has none.
func readyIndex(node *v1.Node) int {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == v1.NodeReady {
			return i
		}
	}
	return -1
}

// updateNodeStatus is the kubelet's updateNodeStatus: tryUpdateNodeStatus until one succeeds,
// at most nodeStatusUpdateRetry times, each failure logged. When all fail it traces the last
// failure and returns errRetryCount, as the kubelet's does, for the caller to log.
func (s *Status) updateNodeStatus(ctx context.Context, now time.Time) error {
	var err error
	for try := range nodeStatusUpdateRetry {
		if err = s.tryUpdateNodeStatus(ctx, now, try); err == nil {
			return nil
		}
		klog.FromContext(ctx).Error(err, "Error updating node status, will retry")
	}
	s.opts.Tracer.Emit(trace.Event{Component: trace.Node, Event: trace.KindError, Pod: s.opts.NodeName, Reason: "FailedToUpdateNodeStatus", Message: traceMessage(err), Func: "updateNodeStatus"})
	// The kubelet's error does not name the node, nor does the log that reports it.
	return errRetryCount
}

// readNode reads the node as the kubelet's status updates do: from the node lister at the first
// try, from the API server at a retry (the lister's copy may be what made the write fail). Its
// error is the reader's own: fastNodeStatusUpdate logs the lister's as it is, and
// tryUpdateNodeStatus names the node in front of either.
func (s *Status) readNode(ctx context.Context, try int) (*v1.Node, error) {
	if try == 0 && s.opts.Lister != nil {
		return s.opts.Lister.Get(s.opts.NodeName)
	}
	return s.opts.Client.GetNode(ctx, s.opts.NodeName)
}

// readError is a status update's failed read of the node, from the lister or the API server. Its
// message is the kubelet's, which names the node in front of the reader's error at every try.
type readError struct {
	node string
	err  error
}

func (e *readError) Error() string { return fmt.Sprintf("error getting node %q: %v", e.node, e.err) }
func (e *readError) Unwrap() error { return e.err }

// traceMessage is the message the trace gives a failed status update: the error without the
// kubelet's "error getting node" in front of a failed read, since the event names the node.
// (It is what the trace has always carried, so the golden traces keep it.)
func traceMessage(err error) string {
	if re, ok := errors.AsType[*readError](err); ok {
		return re.err.Error()
	}
	return err.Error()
}

// tryUpdateNodeStatus reads the node and writes its conditions with a fresh heartbeat time, when
// they changed (heartbeat times aside) or nodeStatusReportFrequency has passed since the last
// write. After a change, or at the first write, the next report of an unchanged status waits the
// report period plus a random delay of up to half of it either way, so that nodes do not all
// report at once.
func (s *Status) tryUpdateNodeStatus(ctx context.Context, now time.Time, try int) error {
	node, err := s.readNode(ctx, try)
	if err != nil {
		return &readError{node: s.opts.NodeName, err: err}
	}
	ready, msg := s.readiness()
	// The setters run once on a copy, as the kubelet's do: GetCapacity, which removes an expired
	// resource as it reports it, must not be asked twice.
	upd := node.DeepCopy()
	s.recordStatus(s.updateConditions(ctx, upd, now, ready, msg))
	s.recordSchedulable(upd)
	applyResources(upd, s.capacity, s.allocatable)
	s.applyDevices(upd)
	changed := statusChanged(&node.Status, &upd.Status)
	period := s.opts.reportPeriod()
	// isUpdateStatusPeriodExpired reads the clock after the node read, as this does.
	if !changed && !s.lastReport.IsZero() && s.opts.Clock.Since(s.lastReport) < period+s.delay {
		return nil
	}
	if changed || s.lastReport.IsZero() {
		s.delay = time.Duration(float64(period) * (s.rand.Float64() - 0.5))
	} else {
		s.delay = 0
	}
	return s.writeStatus(ctx, node, upd, ready, msg)
}

// statusChanged compares two node statuses, the conditions without their heartbeat times and the
// rest (capacity, allocatable...) as they are: the kubelet's nodeStatusHasChanged.
func statusChanged(a, b *v1.NodeStatus) bool {
	return conditionsChanged(a.Conditions, b.Conditions) || !restEqual(a, b)
}

// restEqual is apiequality.Semantic.DeepEqual of two node statuses with their conditions left
// out, which the kubelet's nodeStatusHasChanged compares them with, written out field by field:
// the reflective walk, which calls the quantities' comparison through reflect, cost a node's
// heartbeat every 10s more than the rest of the update (80 of its 300 allocations). It keeps the
// walk's semantics: quantities are equal by value (Cmp), a nil and an empty list or map are
// equal, pointers are equal when both are nil or what they point to is. The fields rarely set
// (config, runtime handlers' and node features, swap) go to the walk itself when set. The
// tests pin the fields of the types compared here, and compare the answers with the walk's.
func restEqual(a, b *v1.NodeStatus) bool {
	return resourcesEqual(a.Capacity, b.Capacity) && resourcesEqual(a.Allocatable, b.Allocatable) &&
		a.Phase == b.Phase &&
		slices.Equal(a.Addresses, b.Addresses) &&
		a.DaemonEndpoints == b.DaemonEndpoints &&
		nodeInfoEqual(&a.NodeInfo, &b.NodeInfo) &&
		slices.EqualFunc(a.Images, b.Images, func(x, y v1.ContainerImage) bool {
			return x.SizeBytes == y.SizeBytes && slices.Equal(x.Names, y.Names)
		}) &&
		slices.Equal(a.VolumesInUse, b.VolumesInUse) &&
		slices.Equal(a.VolumesAttached, b.VolumesAttached) &&
		semanticEqual(a.Config, b.Config) &&
		slices.EqualFunc(a.RuntimeHandlers, b.RuntimeHandlers, func(x, y v1.NodeRuntimeHandler) bool {
			return x.Name == y.Name && semanticEqual(x.Features, y.Features)
		}) &&
		semanticEqual(a.Features, b.Features) &&
		slices.Equal(a.DeclaredFeatures, b.DeclaredFeatures)
}

// resourcesEqual compares two resource lists as the semantic walk does: the same names, each
// quantity equal by value.
func resourcesEqual(a, b v1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		r, ok := b[name]
		if !ok || q.Cmp(r) != 0 {
			return false
		}
	}
	return true
}

// nodeInfoEqual compares the nodes' system info: its strings, and the swap status it points to.
func nodeInfoEqual(a, b *v1.NodeSystemInfo) bool {
	x, y := *a, *b
	x.Swap, y.Swap = nil, nil
	return x == y && semanticEqual(a.Swap, b.Swap)
}

// semanticEqual is the semantic walk over two pointers, without it when either is nil.
func semanticEqual[T any](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return apiequality.Semantic.DeepEqual(a, b)
}

// conditionsChanged compares two condition lists with their heartbeat times left out: the
// kubelet's nodeConditionsHaveChanged, which sorts copies of both by type (stably) first, so that
// the same conditions in another order are no change. Lists whose types are in the same order,
// which a heartbeat's are (the setters update conditions where they sit), sort the same way and
// are compared as they are, without the copies.
func conditionsChanged(a, b []v1.NodeCondition) bool {
	if len(a) != len(b) {
		return true
	}
	for i := range a {
		if a[i].Type != b[i].Type {
			a, b = sortedConditions(a), sortedConditions(b)
			break
		}
	}
	for i := range a {
		x, y := a[i], b[i]
		x.LastHeartbeatTime, y.LastHeartbeatTime = metav1.Time{}, metav1.Time{}
		if !x.LastTransitionTime.Equal(&y.LastTransitionTime) {
			return true
		}
		x.LastTransitionTime, y.LastTransitionTime = metav1.Time{}, metav1.Time{}
		if x != y {
			return true
		}
	}
	return false
}

// sortedConditions is a copy of cs sorted stably by type.
func sortedConditions(cs []v1.NodeCondition) []v1.NodeCondition {
	cs = slices.Clone(cs)
	slices.SortStableFunc(cs, func(x, y v1.NodeCondition) int { return strings.Compare(string(x.Type), string(y.Type)) })
	return cs
}

// writeStatus writes upd, the node read with the setters applied, and traces a change of
// readiness.
func (s *Status) writeStatus(ctx context.Context, node, upd *v1.Node, ready bool, msg string) error {
	if _, err := s.opts.Client.PatchNodeStatus(ctx, node, upd); err != nil {
		return err
	}
	// patchNodeStatus reads the clock for lastStatusReportTime once the patch has returned.
	s.lastReport = s.opts.Clock.Now()
	if ready != s.ready {
		s.ready = ready
		to := string(v1.ConditionFalse)
		if ready {
			to = string(v1.ConditionTrue)
		}
		s.opts.Tracer.Emit(trace.Event{Component: trace.Node, Event: trace.KindReady, Pod: s.opts.NodeName, To: to, Message: msg, Func: "setNodeReadyCondition"})
	}
	return nil
}

// readiness is the Ready condition the kubelet would report: not ready while the runtime state
// has errors (the runtime is down, or the PLEG is not healthy) or a storage error (the CSINode
// is not initialized), with the message of the kubelet's aggregate of them, in the Ready setter's
// order.
func (s *Status) readiness() (bool, string) {
	rt, storage := s.opts.RuntimeState.Errors(), s.csi.storageError()
	if rt == nil && storage == nil {
		return true, readyMessage
	}
	return false, aggregateMessage(errors.Join(rt, storage))
}

// aggregateMessage is the message of the errors joined in err as the kubelet's aggregate error
// (k8s.io/apimachinery/pkg/util/errors) writes it, which the Ready setter makes its message: one
// error's message alone, several (without repeats) as "[a, b]". Joined errors are flattened, as
// the aggregate flattens aggregates nested in it.
func aggregateMessage(err error) string {
	var msgs []string
	var visit func(error)
	visit = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				visit(e)
			}
			return
		}
		if m := err.Error(); !slices.Contains(msgs, m) {
			msgs = append(msgs, m)
		}
	}
	visit(err)
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

// updateConditions is the package's setConditions, with the Ready setter's log when the node turns
// not ready.
func (s *Status) updateConditions(ctx context.Context, node *v1.Node, now time.Time, ready bool, msg string) []string {
	recorded := setConditions(node, now, ready, msg)
	if slices.Contains(recorded, events.NodeNotReady) {
		i := readyIndex(node)
		klog.FromContext(ctx).Info("Node became not ready", "node", klog.KObj(node), "condition", node.Status.Conditions[i])
	}
	return recorded
}

// record records one event about the node.
func (s *Status) record(reason, message string) {
	if s.opts.Recorder != nil {
		s.opts.Recorder.Event(NodeRef(s.opts.NodeName), v1.EventTypeNormal, reason, message)
	}
}

// recordStatus records the condition setters' events, with the kubelet's message
// (Kubelet.recordNodeStatusEvent).
func (s *Status) recordStatus(reasons []string) {
	for _, reason := range reasons {
		s.record(reason, fmt.Sprintf("Node %s status is now: %s", s.opts.NodeName, reason))
	}
}

// recordSchedulable records NodeNotSchedulable or NodeSchedulable when the node's
// spec.unschedulable differs from the one last seen: the last setter of the kubelet's node
// status, recordNodeSchedulableEvent. The kubelet starts from false, so a node cordoned before
// the kubelet started records NodeNotSchedulable at its first status update.
func (s *Status) recordSchedulable(node *v1.Node) {
	if node.Spec.Unschedulable == s.unschedulable {
		return
	}
	s.unschedulable = node.Spec.Unschedulable
	if s.unschedulable {
		s.recordStatus([]string{events.NodeNotSchedulable})
	} else {
		s.recordStatus([]string{events.NodeSchedulable})
	}
}
