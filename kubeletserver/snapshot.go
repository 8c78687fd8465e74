package kubeletserver

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// Snapshot is one node's state as the server shows it, taken on the goroutine that drives the
// node. Nothing in it is mutated after Capture returns.
type Snapshot struct {
	// Node is the node's name.
	Node string
	// Taken is when the snapshot was captured: the end of a sync loop pass.
	Taken time.Time
	// Pods are the pods the pod manager holds, in its order.
	Pods []PodView
}

// PodView is one pod: its config, the status manager's status and the runtime's view.
type PodView struct {
	Pod *v1.Pod
	// Status is the status manager's status; zero if HasStatus is false.
	Status    v1.PodStatus
	HasStatus bool
	// Runtime is the PLEG cache's status: every container instance still known, newest first
	// within one container name. Nil when the PLEG has not seen the pod.
	Runtime *kubecontainer.PodStatus
	// StatusStamp is the status manager's stamp of Status (StampedKubelet), 0 for none: the
	// next CaptureAfter takes Status from here while the stamp stays.
	StatusStamp uint64
}

// Kubelet is what a Snapshot reads of a kubelet: the pod manager's pods, the status manager's
// statuses and the PLEG cache's runtime view. Package kubelet's assembly provides it; the server
// does not import the assembly, which owns the server's view.
type Kubelet interface {
	// GetPods returns the pod manager's pods.
	GetPods() []*v1.Pod
	// GetPodStatus returns the status manager's status of the pod, if it has one.
	GetPodStatus(uid types.UID) (v1.PodStatus, bool)
	// GetRuntimeStatus returns the PLEG cache's status of the pod, nil when the PLEG has not
	// seen it.
	GetRuntimeStatus(uid types.UID) *kubecontainer.PodStatus
}

// StampedKubelet is a Kubelet whose statuses carry stamps: CaptureAfter takes a status whose
// stamp did not change from the previous snapshot instead of copying it again.
type StampedKubelet interface {
	Kubelet
	// PodStatusStamp returns a number that changes whenever the pod's status does and never
	// names another status; false when the pod has none.
	PodStatusStamp(uid types.UID) (uint64, bool)
}

// Capture takes a Snapshot of k at now. It reads the cores, so it must run on the goroutine that
// drives them.
func Capture(name string, k Kubelet, now time.Time) *Snapshot {
	return CaptureAfter(nil, name, k, now)
}

// CaptureAfter is Capture for the snapshot after prev (nil for none): with a StampedKubelet, a
// pod whose status has the stamp it had in prev gets prev's copy of the status, which no one
// mutates, instead of a new one. The snapshot is the same as Capture's.
func CaptureAfter(prev *Snapshot, name string, k Kubelet, now time.Time) *Snapshot {
	pods := k.GetPods()
	s := &Snapshot{Node: name, Taken: now, Pods: make([]PodView, 0, len(pods))}
	stamped, _ := k.(StampedKubelet)
	var before map[types.UID]*PodView
	if stamped != nil && prev != nil && len(prev.Pods) > 0 {
		before = make(map[types.UID]*PodView, len(prev.Pods))
		for i := range prev.Pods {
			if v := &prev.Pods[i]; v.StatusStamp != 0 {
				before[v.Pod.UID] = v
			}
		}
	}
	for _, p := range pods {
		v := PodView{Pod: p}
		var stamp uint64
		if stamped != nil {
			stamp, _ = stamped.PodStatusStamp(p.UID)
		}
		if old, ok := before[p.UID]; ok && stamp != 0 && old.StatusStamp == stamp {
			v.Status, v.HasStatus, v.StatusStamp = old.Status, true, stamp
		} else {
			v.Status, v.HasStatus = k.GetPodStatus(p.UID)
			if v.HasStatus {
				v.StatusStamp = stamp
			}
		}
		v.Runtime = k.GetRuntimeStatus(p.UID)
		s.Pods = append(s.Pods, v)
	}
	return s
}

// find returns the pod with the namespace and name.
func (s *Snapshot) find(namespace, name string) (*PodView, bool) {
	for i := range s.Pods {
		if p := s.Pods[i].Pod; p.Namespace == namespace && p.Name == name {
			return &s.Pods[i], true
		}
	}
	return nil, false
}

// Board holds a node's latest Snapshot and, in `run`, asks for the next one. A handler's Get
// returns a snapshot no older than the freshness bound: the latest, or one the node's driving
// goroutine takes when Get asks for it, between its passes. Snapshots are thus taken when the
// server is asked, not after every pass; a board nothing drives on demand (Demand never called)
// returns its latest snapshot, which its driver publishes.
type Board struct {
	mu      sync.Mutex // guards the fields below
	latest  *Snapshot
	changed chan struct{} // closed and replaced at every publish and at Stop
	// asks carries the requests to the driving goroutine: nil until Demand. Its buffer holds
	// one, so the requests made while the driver is busy are one.
	asks  chan struct{}
	fresh time.Duration
	// Requests are counted in rounds: asked is the latest round a request joined, taking the
	// round the driver's capture in progress (or last taken) answers, served the last answered.
	// A request made once a capture has started joins the next round: it gets a snapshot taken
	// after it was made.
	asked, taking, served uint64
	stopped               bool

	// followers counts the log followers, which want every pass's changes (Follow).
	followers atomic.Int32
	// passed is the UnixNano of the driver's last pass (Passed), 0 for none: the syncloop check.
	passed atomic.Int64
}

// maxAskWait bounds how long a request waits for the driver's capture: a pass held up (a mirror
// pod write waiting on a slow API server, say) would otherwise hold the node's server with it,
// where the kubelet's server reads its live state at once. Past it the request gets the latest
// snapshot.
const maxAskWait = 5 * time.Second

// NewBoard returns a Board with an empty snapshot of the node.
func NewBoard(node string) *Board {
	return &Board{latest: &Snapshot{Node: node}, changed: make(chan struct{})}
}

// Publish makes s the latest snapshot and wakes every waiter, answering every request made so
// far. A driver that publishes after its passes calls it; an on-demand driver calls Take.
func (b *Board) Publish(s *Snapshot) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.taking = b.asked
	b.publish(b.asked, s)
	if !s.Taken.IsZero() {
		// A driver that publishes after its passes publishes a pass; a Take, which only
		// answers requests, does not.
		b.passed.Store(s.Taken.UnixNano())
	}
}

// publish is Publish for the requests of rounds up to round; b.mu is held.
func (b *Board) publish(round uint64, s *Snapshot) {
	b.latest = s
	b.served = max(b.served, round)
	close(b.changed)
	b.changed = make(chan struct{})
}

// Latest returns the latest snapshot and a channel closed when a newer one is published.
func (b *Board) Latest() (*Snapshot, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.latest, b.changed
}

// Demand makes the board ask for its snapshots: a Get whose latest snapshot is fresh bound
// old or older signals the returned channel and waits for the driver's Take. The driver reads
// the channel between its passes; it calls Stop when it stops driving.
func (b *Board) Demand(fresh time.Duration) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.asks == nil {
		b.asks = make(chan struct{}, 1)
	}
	b.fresh = fresh
	return b.asks
}

// Take captures a snapshot with capture and publishes it: every request made before Take
// began gets it. It runs on the driving goroutine, between passes.
func (b *Board) Take(capture func() *Snapshot) {
	b.mu.Lock()
	round := b.asked
	b.taking = round
	b.mu.Unlock()
	s := capture()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.publish(round, s)
}

// Stop ends the asking: the driver has stopped. Waiting requests and later ones get the latest
// snapshot, as a board nothing drives gives it.
func (b *Board) Stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	b.stopped = true
	close(b.changed)
	b.changed = make(chan struct{})
}

// Get returns a snapshot for a request made at now: the latest if it is younger than the
// freshness bound or nothing takes snapshots on demand; otherwise one taken after the call,
// which it asks the driver for and waits for. Concurrent requests share one capture. It
// returns the latest snapshot when ctx ends, the driver stops, or maxAskWait passes first.
func (b *Board) Get(ctx context.Context, now time.Time) *Snapshot {
	b.mu.Lock()
	s := b.latest
	if b.asks == nil || b.stopped || (!s.Taken.IsZero() && now.Sub(s.Taken) < b.fresh) {
		b.mu.Unlock()
		return s
	}
	if b.asked == b.taking {
		// No round is waiting for a capture: this request opens the next one.
		b.asked++
		select {
		case b.asks <- struct{}{}:
		default:
		}
	}
	round, changed := b.asked, b.changed
	b.mu.Unlock()
	timeout := time.NewTimer(maxAskWait)
	defer timeout.Stop()
	for {
		select {
		case <-ctx.Done():
			s, _ := b.Latest()
			return s
		case <-timeout.C:
			s, _ := b.Latest()
			klog.FromContext(ctx).V(2).Info("The sync loop did not take a snapshot in time, answering with the latest", "node", s.Node, "taken", s.Taken, "waited", maxAskWait)
			return s
		case <-changed:
		}
		b.mu.Lock()
		s, stopped := b.latest, b.stopped
		changed = b.changed
		done := b.served >= round || stopped
		b.mu.Unlock()
		if done {
			return s
		}
	}
}

// Follow registers a follower of the node's changes, a log follower: while one is registered,
// the driver publishes after its passes, as Followed tells it. It returns the unregistering.
func (b *Board) Follow() (stop func()) {
	b.followers.Add(1)
	var once sync.Once
	return func() { once.Do(func() { b.followers.Add(-1) }) }
}

// Followed reports whether a follower is registered; the driver reads it after every pass,
// without allocating.
func (b *Board) Followed() bool { return b.followers.Load() > 0 }

// Passed records the end at t of a driver's pass that dispatched (not one held back by runtime
// errors): the syncloop health check reads it, where the kubelet's reads the sync loop monitor
// that each syncLoopIteration stores. It does not allocate.
func (b *Board) Passed(t time.Time) { b.passed.Store(t.UnixNano()) }

// lastPass is the time of the driver's last dispatching pass; zero for none.
func (b *Board) lastPass() time.Time {
	n := b.passed.Load()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}
