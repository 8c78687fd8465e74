package kubeletserver_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/kubeletserver"
)

// fakeKubelet holds two pods: one with a status and a runtime view, one the status manager and
// the PLEG have not seen yet.
type fakeKubelet struct {
	pods     []*v1.Pod
	statuses map[types.UID]v1.PodStatus
	runtime  map[types.UID]*kubecontainer.PodStatus
}

func (k fakeKubelet) GetPods() []*v1.Pod { return k.pods }

func (k fakeKubelet) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	s, ok := k.statuses[uid]
	return s, ok
}

func (k fakeKubelet) GetRuntimeStatus(uid types.UID) *kubecontainer.PodStatus { return k.runtime[uid] }

func TestCaptureReadsTheKubelet(t *testing.T) {
	web := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"}}
	db := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db", UID: "uid-db"}}
	rs := &kubecontainer.PodStatus{UID: "uid-web", Name: "web", Namespace: "default"}
	k := fakeKubelet{
		pods:     []*v1.Pod{web, db},
		statuses: map[types.UID]v1.PodStatus{"uid-web": {Phase: v1.PodRunning}},
		runtime:  map[types.UID]*kubecontainer.PodStatus{"uid-web": rs},
	}
	got := kubeletserver.Capture("node-1", k, t0)
	want := &kubeletserver.Snapshot{Node: "node-1", Taken: t0, Pods: []kubeletserver.PodView{
		{Pod: web, Status: v1.PodStatus{Phase: v1.PodRunning}, HasStatus: true, Runtime: rs},
		{Pod: db},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Capture() (-want +got):\n%s", diff)
	}
}
