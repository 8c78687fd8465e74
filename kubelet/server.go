package kubelet

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/kubeletserver"
)

// serverView is the kubelet as its server's snapshots read it: the pod manager, the status
// manager and the PLEG cache.
type serverView struct{ n *Sync }

var _ kubeletserver.StampedKubelet = serverView{}

func (v serverView) GetPods() []*v1.Pod { return v.n.Pods.GetPods() }

func (v serverView) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	return v.n.Status.GetPodStatus(uid)
}

func (v serverView) PodStatusStamp(uid types.UID) (uint64, bool) {
	return v.n.Status.PodStatusStamp(uid)
}

func (v serverView) GetRuntimeStatus(uid types.UID) *kubecontainer.PodStatus {
	if s, err := v.n.Cache.Get(uid); err == nil && s != nil {
		return s
	}
	return nil
}

// Snapshot captures the server's view of the kubelet at the clock's now. It reads the cores, so it
// runs where they are driven: in Run, on the sync loop's goroutine between passes, when the
// server asks for one (snapshots).
func (k *Kubelet) Snapshot() *kubeletserver.Snapshot {
	return kubeletserver.Capture(k.opts.NodeName, serverView{&k.Sync}, k.opts.Clock.Now())
}

// nextSnapshot is Snapshot after prev (nil for none): the statuses that did not change since
// prev are prev's, not copied again.
func (k *Kubelet) nextSnapshot(prev *kubeletserver.Snapshot) *kubeletserver.Snapshot {
	return kubeletserver.CaptureAfter(prev, k.opts.NodeName, serverView{&k.Sync}, k.opts.Clock.Now())
}

// snapshots takes the server's snapshots in Run. The kubelet's server reads the live state when
// a request comes; the cores here belong to the sync loop's goroutine, so a request asks Board,
// whose asks the loop's runner reads between passes and answers with take; a snapshot younger
// than period is reused without asking. A node nobody asks takes none. While a
// log follower follows, the loop publishes after its passes, at most once per period, as every
// node did before. Its fields are the loop goroutine's.
type snapshots struct {
	k      *Kubelet
	period time.Duration
	prev   *kubeletserver.Snapshot
	last   time.Time // when the last snapshot was taken
}

// take captures and publishes a snapshot: on the loop's goroutine.
func (s *snapshots) take() {
	s.k.Board.Take(func() *kubeletserver.Snapshot {
		s.prev = s.k.nextSnapshot(s.prev)
		s.last = s.prev.Taken
		return s.prev
	})
}

// settled is the sync loop runner's Settled hook: the pass's time for the syncloop health check
// when the pass dispatched, and a snapshot for the followers. Without followers it allocates
// nothing.
func (s *snapshots) settled() {
	now := s.k.opts.Clock.Now()
	if s.k.Loop.Dispatching() {
		s.k.Board.Passed(now)
	}
	if !s.k.Board.Followed() || (!s.last.IsZero() && now.Sub(s.last) < s.period) {
		return
	}
	s.take()
}
