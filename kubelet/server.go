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
// runs where they are driven: Run's sync loop runner publishes one to Board after passes.
func (k *Kubelet) Snapshot() *kubeletserver.Snapshot {
	return kubeletserver.Capture(k.opts.NodeName, serverView{&k.Sync}, k.opts.Clock.Now())
}

// nextSnapshot is Snapshot after prev (nil for none): the statuses that did not change since
// prev are prev's, not copied again. A fleet's nodes publish one every half second.
func (k *Kubelet) nextSnapshot(prev *kubeletserver.Snapshot) *kubeletserver.Snapshot {
	return kubeletserver.CaptureAfter(prev, k.opts.NodeName, serverView{&k.Sync}, k.opts.Clock.Now())
}

// publisher is the sync loop runner's Settled hook: a snapshot to Board after a pass, at most
// once per period (zero: after every pass). It runs on the runner's goroutine.
func (k *Kubelet) publisher(period time.Duration) func() {
	var last time.Time
	var prev *kubeletserver.Snapshot
	return func() {
		now := k.opts.Clock.Now()
		if !last.IsZero() && now.Sub(last) < period {
			return
		}
		last = now
		prev = k.nextSnapshot(prev)
		k.Board.Publish(prev)
	}
}
