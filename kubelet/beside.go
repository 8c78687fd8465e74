package kubelet

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/nodestatus"
	"github.com/minikubelet/minikubelet/podmanager"
	"github.com/minikubelet/minikubelet/podsync"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/runtimestate"
	"github.com/minikubelet/minikubelet/status"
	"github.com/minikubelet/minikubelet/volumemanager"
)

// The cores that run beside the sync loop in `run` (docs/design/007-beside-the-loop.md): a
// stepping driver steps them from the loop's Advance; Run takes them out of the loop's hands
// (besides) and gives each a goroutine of its own. The wrappers here are the seams.

// besides are the sync side's seams of the cores that Run takes out of the loop.
type besides struct {
	status  *loopStatus
	node    *registeringNode // nil for a standalone kubelet
	runtime *runtimeView
	nodes   *nodeReader
	// tokens is the volume manager's token manager, whose requests Run makes beside the loop; nil
	// for a standalone kubelet.
	tokens *volumemanager.TokenManager
	// syncer runs the pod sync functions. Run hands their mirror pod calls to mirrors, which is
	// nil until then, and for a standalone kubelet, which makes none.
	syncer  *podsync.Syncer
	mirrors *mirrorCalls
}

// mirrorCalls makes the pod workers' mirror pod calls beside the sync loop (podsync.Beside): each
// on a goroutine of its own, as each kubelet pod worker blocks in its own API calls while the
// others go on. Once a call has returned, a call into the loop ends its worker's wait, which the
// loop's next wake-up, at once, carries on.
type mirrorCalls struct {
	// do runs a function on the loop's goroutine between its passes and waits for it.
	do      func(context.Context, func()) bool
	workers *podworkers.Workers
	wg      sync.WaitGroup
}

// Go runs call beside the loop. ctx is the sync loop's: when it ends, so does the call, and
// nothing is handed back to a loop that has stopped.
func (m *mirrorCalls) Go(ctx context.Context, uid types.UID, call func(context.Context), returned func()) (cancel func()) {
	callCtx, cancel := context.WithCancel(ctx)
	m.wg.Go(func() {
		defer cancel()
		call(callCtx)
		m.do(ctx, func() {
			returned()
			m.workers.Resume(uid)
		})
	})
	return cancel
}

// wait returns once every call has ended. The loop is the only caller of Go: call it once the
// loop has stopped.
func (m *mirrorCalls) wait() { m.wg.Wait() }

// loopStatus is the status manager as the sync loop steps it: itself, until Run gives its
// writes a goroutine of their own.
type loopStatus struct {
	*status.Manager
	beside bool
}

// Step is the Manager's, unless the writes run beside the loop.
func (s *loopStatus) Step(ctx context.Context) error {
	if s.beside {
		return nil
	}
	return s.Manager.Step(ctx)
}

// NextWake is the Manager's, unless the writes run beside the loop.
func (s *loopStatus) NextWake() (time.Time, bool) {
	if s.beside {
		return time.Time{}, false
	}
	return s.Manager.NextWake()
}

// registeringNode is the node status with the kubelet's fastStaticPodsRegistration: once the node
// object exists, the mirror pods of the static pods known then are reconciled at once. Beside the
// loop the node status runner registers, the loop hands over the static pods (staticPods), and
// a runner of its own reconciles them.
type registeringNode struct {
	*nodestatus.Status
	pods   *podmanager.Manager
	syncer *podsync.Syncer
	done   bool
	beside bool
}

// Register registers the node and, the first time it is registered, reconciles the mirror pods.
func (r *registeringNode) Register(ctx context.Context) error {
	if r.beside {
		return nil
	}
	err := r.Status.Register(ctx)
	if r.Registered() {
		r.staticPodsRegistered(ctx)
	}
	return err
}

// staticPodsRegistered is fastStaticPodsRegistration, once.
func (r *registeringNode) staticPodsRegistered(ctx context.Context) {
	if pods, ok := r.staticPods(); ok {
		r.syncer.FastStaticPodsRegistration(ctx, pods)
	}
}

// staticPods are the static pods, each with its mirror pod, that fastStaticPodsRegistration
// reconciles: the first time only (ok), read on the loop's goroutine, which owns the pod manager.
func (r *registeringNode) staticPods() (_ map[*v1.Pod]*v1.Pod, ok bool) {
	if r.done {
		return nil, false
	}
	r.done = true
	return r.pods.GetStaticPodToMirrorPodMap(), true
}

// Heartbeat is the Status', unless it runs beside the loop.
func (r *registeringNode) Heartbeat(ctx context.Context) error {
	if r.beside {
		return nil
	}
	return r.Status.Heartbeat(ctx)
}

// NextWake is the Status', unless it runs beside the loop.
func (r *registeringNode) NextWake() (time.Time, bool) {
	if r.beside {
		return time.Time{}, false
	}
	return r.Status.NextWake()
}

// runtimeView is the runtime state as the node status reads it: the core itself on the loop's
// goroutine, and beside the loop the snapshot the loop publishes after each pass (the kubelet's
// runtimeState is locked; the core is not).
type runtimeView struct {
	state *runtimestate.State
	snap  atomic.Pointer[runtimeSnapshot] // nil until Run publishes the first
	// do runs a function on the loop's goroutine between its passes and waits for it; set by Run
	// before the node status runs beside the loop, nil while the loop steps it.
	do func(context.Context, func()) bool
}

// runtimeSnapshot is the runtime state as of a sync loop pass.
type runtimeSnapshot struct {
	errs error
}

// publish takes a snapshot of the runtime state: on the loop's goroutine.
func (v *runtimeView) publish() {
	v.snap.Store(&runtimeSnapshot{errs: v.state.Errors()})
}

// Errors is the runtime state's errors.
func (v *runtimeView) Errors() error {
	if s := v.snap.Load(); s != nil {
		return s.errs
	}
	return v.state.Errors()
}

// UpdateRuntimeUp asks the runtime for its status now. Beside the loop the check runs on the
// loop's goroutine, which owns the runtime and its state, and the snapshot is published again, so
// that the node status reads the answer.
func (v *runtimeView) UpdateRuntimeUp(ctx context.Context) {
	if v.do == nil {
		v.state.Check()
		return
	}
	v.do(ctx, func() {
		v.state.Check()
		v.publish()
	})
}

// nodeReader reads the node object as the kubelet's GetNode does: from its node lister once Run
// has an informer, else from the API server (a stepping driver's API server answers at once).
// Admission falls back to the node the kubelet would register (getNodeAnyWay).
type nodeReader struct {
	api nodestatus.Client
	// lister is set by Run before its runners start, and only read after.
	lister nodestatus.NodeLister
}

// GetNode reads the node.
func (n *nodeReader) GetNode(ctx context.Context, name string) (*v1.Node, error) {
	if n.lister != nil {
		return n.lister.Get(name)
	}
	return n.api.GetNode(ctx, name)
}

// Get is GetNode for the node status' first read: the lister's copy, or the API server's.
func (n *nodeReader) Get(name string) (*v1.Node, error) {
	return n.GetNode(context.Background(), name)
}
