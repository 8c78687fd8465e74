package kubeletserver

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

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

// Board holds a node's latest Snapshot. Publish is called by the node's driving goroutine;
// handlers read Latest and wait on Changed from any goroutine.
type Board struct {
	mu      sync.Mutex // guards latest and changed
	latest  *Snapshot
	changed chan struct{}
}

// NewBoard returns a Board with an empty snapshot of the node.
func NewBoard(node string) *Board {
	return &Board{latest: &Snapshot{Node: node}, changed: make(chan struct{})}
}

// Publish makes s the latest snapshot and wakes every waiter.
func (b *Board) Publish(s *Snapshot) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.latest = s
	close(b.changed)
	b.changed = make(chan struct{})
}

// Latest returns the latest snapshot and a channel closed when a newer one is published.
func (b *Board) Latest() (*Snapshot, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.latest, b.changed
}
