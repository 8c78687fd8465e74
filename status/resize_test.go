package status

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestResizeConditions follows the v1.35 status manager's resize condition cache: PodResizePending
// reports a change of reason or generation, PodResizeInProgress keeps its generation and (unless
// given new ones) its reason and message, a transition time moves only with the reason, and
// clearing returns the generation observed.
func TestResizeConditions(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	m := newManager(t, Options{Clock: clk, Tracer: trace.Discard})
	const uid = "web"
	if !m.SetPodResizePendingCondition(uid, v1.PodReasonDeferred, "no room", 2) {
		t.Errorf("first SetPodResizePendingCondition() = false, want true")
	}
	clk.Set(vclock.Epoch.Add(time.Minute))
	if m.SetPodResizePendingCondition(uid, v1.PodReasonDeferred, "still no room", 2) {
		t.Errorf("SetPodResizePendingCondition() with the same reason and generation = true")
	}
	if !m.IsPodResizeDeferred(uid) || m.IsPodResizeInfeasible(uid) {
		t.Errorf("deferred/infeasible = %v/%v, want true/false", m.IsPodResizeDeferred(uid), m.IsPodResizeInfeasible(uid))
	}
	c := m.PodResizeConditions(uid)[0]
	if !c.LastTransitionTime.Time.Equal(vclock.Epoch) || !c.LastProbeTime.Time.Equal(clk.Now()) || c.Message != "still no room" {
		t.Errorf("PodResizePending = %+v, want transitioned at the start, probed now, the new message", c)
	}
	if !m.SetPodResizePendingCondition(uid, v1.PodReasonInfeasible, "too big", 2) || !m.IsPodResizeInfeasible(uid) {
		t.Errorf("SetPodResizePendingCondition(Infeasible) did not report or record the change")
	}
	m.ClearPodResizePendingCondition(uid)

	if gen, changed := m.SetPodResizeInProgressCondition(uid, "", "", 3); gen != 3 || !changed {
		t.Errorf("SetPodResizeInProgressCondition() = %d, %v, want 3, true", gen, changed)
	}
	if gen, changed := m.SetPodResizeInProgressCondition(uid, "", "", 4); gen != 3 || changed {
		t.Errorf("SetPodResizeInProgressCondition(again, gen 4) = %d, %v, want 3, false", gen, changed)
	}
	if gen, changed := m.SetPodResizeInProgressCondition(uid, v1.PodReasonError, "boom", 4); gen != 3 || !changed {
		t.Errorf("SetPodResizeInProgressCondition(Error) = %d, %v, want 3, true", gen, changed)
	}
	got := m.PodResizeConditions(uid)
	if len(got) != 1 || got[0].Type != v1.PodResizeInProgress || got[0].Reason != v1.PodReasonError || got[0].ObservedGeneration != 3 {
		t.Errorf("PodResizeConditions() = %+v, want one PodResizeInProgress, Error, generation 3", got)
	}
	if gen, cleared := m.ClearPodResizeInProgressCondition(uid); gen != 3 || !cleared {
		t.Errorf("ClearPodResizeInProgressCondition() = %d, %v, want 3, true", gen, cleared)
	}
	if _, cleared := m.ClearPodResizeInProgressCondition(uid); cleared {
		t.Errorf("second ClearPodResizeInProgressCondition() cleared something")
	}
	m.SetPodResizePendingCondition(uid, v1.PodReasonDeferred, "", 5)
	m.RemoveOrphanedStatuses(nil)
	if got := m.PodResizeConditions(uid); len(got) != 0 {
		t.Errorf("PodResizeConditions() of a forgotten pod = %v", got)
	}
}

// TestContainerResourcesFromRuntime: a running instance reports the cpu and memory the runtime
// gave it in place of the allocated ones; allocatedResources stays the allocation.
func TestContainerResourcesFromRuntime(t *testing.T) {
	q := resource.MustParse
	c := &v1.Container{Name: "app", Resources: v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: q("300m"), v1.ResourceMemory: q("64Mi")},
		Limits:   v1.ResourceList{v1.ResourceCPU: q("400m")},
	}}
	old, oldLim := q("100m"), q("200m")
	tests := []struct {
		name     string
		cs       kubecontainer.ContainerStatus
		wantReq  string
		wantLim  string
		wantMemo string
	}{
		{"running, resize not applied", kubecontainer.ContainerStatus{State: kubecontainer.ContainerStateRunning,
			Resources: &kubecontainer.ContainerResources{CPURequest: &old, CPULimit: &oldLim}}, "100m", "200m", "64Mi"},
		{"running, no resources reported", kubecontainer.ContainerStatus{State: kubecontainer.ContainerStateRunning}, "300m", "400m", "64Mi"},
		{"exited", kubecontainer.ContainerStatus{State: kubecontainer.ContainerStateExited,
			Resources: &kubecontainer.ContainerResources{CPURequest: &old}}, "300m", "400m", "64Mi"},
	}
	for _, tt := range tests {
		s := &v1.ContainerStatus{}
		setResources(s, c, &tt.cs)
		if got := s.Resources.Requests.Cpu().String(); got != tt.wantReq {
			t.Errorf("%s: cpu request = %s, want %s", tt.name, got, tt.wantReq)
		}
		if got := s.Resources.Limits.Cpu().String(); got != tt.wantLim {
			t.Errorf("%s: cpu limit = %s, want %s", tt.name, got, tt.wantLim)
		}
		if got := s.Resources.Requests.Memory().String(); got != tt.wantMemo {
			t.Errorf("%s: memory request = %s, want %s", tt.name, got, tt.wantMemo)
		}
		if got := s.AllocatedResources.Cpu().String(); got != "300m" {
			t.Errorf("%s: allocated cpu = %s, want 300m", tt.name, got)
		}
	}
}

// TestBackfillPodResizeConditions: the resize conditions a pod's status shows are taken into the
// cache, probed and transitioned now, with their reason, message and observed generation; other
// conditions and pods without any are left alone, and a later set with the same reason and
// generation reports no change.
func TestBackfillPodResizeConditions(t *testing.T) {
	clk := vclock.New(vclock.Epoch.Add(time.Hour))
	m := newManager(t, Options{Clock: clk, Tracer: trace.Discard})
	before := metav1.NewTime(vclock.Epoch)
	web := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "web"}, Status: v1.PodStatus{Conditions: []v1.PodCondition{
		{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: before},
		{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonDeferred, Message: "no room", ObservedGeneration: 2, LastTransitionTime: before, LastProbeTime: before},
		{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue, ObservedGeneration: 1, LastTransitionTime: before, LastProbeTime: before},
	}}}
	plain := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "plain"}}
	m.BackfillPodResizeConditions([]*v1.Pod{web, plain})
	now := metav1.NewTime(clk.Now())
	want := []v1.PodCondition{
		{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonDeferred, Message: "no room", ObservedGeneration: 2, LastTransitionTime: now, LastProbeTime: now},
		{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue, ObservedGeneration: 1, LastTransitionTime: now, LastProbeTime: now},
	}
	if diff := cmp.Diff(want, m.PodResizeConditions("web")); diff != "" {
		t.Errorf("PodResizeConditions(web) after the backfill (-want +got):\n%s", diff)
	}
	if got := m.PodResizeConditions("plain"); got != nil {
		t.Errorf("PodResizeConditions(plain) = %v, want none", got)
	}
	if m.SetPodResizePendingCondition("web", v1.PodReasonDeferred, "no room", 2) {
		t.Errorf("SetPodResizePendingCondition() as backfilled reports a change")
	}
}
