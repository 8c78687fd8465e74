package kubelet

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/kubeletserver"
)

// serverView is the kubelet as its server's snapshots read it: the pod manager, the status
// manager and the PLEG cache.
type serverView struct{ n *Node }

var _ kubeletserver.Kubelet = serverView{}

func (v serverView) GetPods() []*v1.Pod { return v.n.Pods.GetPods() }

func (v serverView) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	return v.n.Status.GetPodStatus(uid)
}

func (v serverView) GetRuntimeStatus(uid types.UID) *kubecontainer.PodStatus {
	if s, err := v.n.Cache.Get(uid); err == nil && s != nil {
		return s
	}
	return nil
}

// ServerView is the node as the kubelet server's snapshots read it.
func (n *Node) ServerView() kubeletserver.Kubelet { return serverView{n} }
