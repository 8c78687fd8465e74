package pleg

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// fakeLister is a runtime whose listing and statuses a test sets directly.
type fakeLister struct {
	pods    []*kubecontainer.Pod
	listErr error
	// statuses and errs answer GetPodStatus; a pod with neither gets an empty status.
	statuses map[types.UID]*kubecontainer.PodStatus
	errs     map[types.UID]error
	calls    map[types.UID]int
}

var _ Lister = (*fakeLister)(nil)

func newFakeLister() *fakeLister {
	return &fakeLister{statuses: map[types.UID]*kubecontainer.PodStatus{}, errs: map[types.UID]error{}, calls: map[types.UID]int{}}
}

func (f *fakeLister) GetPods(bool) ([]*kubecontainer.Pod, error) {
	if f.listErr != nil {
		return nil, f.listErr
	}
	return f.pods, nil
}

func (f *fakeLister) GetPodStatus(uid types.UID, name, namespace string) (*kubecontainer.PodStatus, error) {
	f.calls[uid]++
	if s, ok := f.statuses[uid]; ok || f.errs[uid] != nil {
		return s, f.errs[uid]
	}
	return &kubecontainer.PodStatus{UID: uid, Name: name, Namespace: namespace}, nil
}

// testPLEG is the kubelet's newTestGenericPLEG: relist period 1h, threshold 3m, a virtual clock.
type testPLEG struct {
	pleg   *PLEG
	lister *fakeLister
	cache  *Cache
	clk    *vclock.Clock
	events []trace.Event
}

func newTestPLEG(t *testing.T) *testPLEG {
	t.Helper()
	tp := &testPLEG{lister: newFakeLister(), cache: NewCache(), clk: vclock.New(vclock.Epoch)}
	g, err := New(Options{
		Runtime: tp.lister, Cache: tp.cache, Clock: tp.clk,
		RelistPeriod: 1e12, RelistThreshold: DefaultRelistThreshold,
		Tracer: trace.Func(func(e trace.Event) { tp.events = append(tp.events, e) }),
	})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	tp.pleg = g
	return tp
}

// container is the kubelet tests' createTestContainer: ID and name are both id.
func container(id string, s kubecontainer.ContainerState) kubecontainer.ContainerStatus {
	return kubecontainer.ContainerStatus{ID: id, Name: id, State: s}
}

func sandbox(id string, s kubecontainer.SandboxState) kubecontainer.SandboxStatus {
	return kubecontainer.SandboxStatus{ID: id, State: s}
}

func pod(uid string, cs ...kubecontainer.ContainerStatus) *kubecontainer.Pod {
	return &kubecontainer.Pod{ID: types.UID(uid), Name: "name-" + uid, Namespace: "ns", Containers: cs}
}

func podWithSandboxes(uid string, ss ...kubecontainer.SandboxStatus) *kubecontainer.Pod {
	return &kubecontainer.Pod{ID: types.UID(uid), Name: "name-" + uid, Namespace: "ns", Sandboxes: ss}
}

var errStatus = errors.New("unable to get status")

const (
	running = kubecontainer.ContainerStateRunning
	exited  = kubecontainer.ContainerStateExited
	unknown = kubecontainer.ContainerStateUnknown
)
