package podsync

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podworkers"
)

// resizeFakes stand for the allocation manager (it allocates cpu), the status manager's resize
// conditions, the runtime's IsPodResizeInProgress and the PLEG.
type resizeFakes struct {
	cpu        string
	inProgress bool
	conds      map[v1.PodConditionType]v1.PodCondition
	watched    []types.UID
}

func (r *resizeFakes) UpdatePodFromAllocation(pod *v1.Pod) (*v1.Pod, bool) {
	p := pod.DeepCopy()
	p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse(r.cpu)}
	return p, true
}

func (r *resizeFakes) IsPodResizeInProgress(*v1.Pod, *kubecontainer.PodStatus) bool {
	return r.inProgress
}

func (r *resizeFakes) SetPodWatchCondition(uid types.UID, _ string, _ func(*kubecontainer.PodStatus) bool) {
	r.watched = append(r.watched, uid)
}

func (r *resizeFakes) SetPodResizeInProgressCondition(_ types.UID, reason, message string, gen int64) (int64, bool) {
	prev, ok := r.conds[v1.PodResizeInProgress]
	if ok {
		gen = prev.ObservedGeneration
		if reason == "" {
			reason, message = prev.Reason, prev.Message
		}
	}
	r.conds[v1.PodResizeInProgress] = v1.PodCondition{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue, Reason: reason, Message: message, ObservedGeneration: gen}
	return gen, !ok || prev.Reason != reason
}

func (r *resizeFakes) ClearPodResizeInProgressCondition(types.UID) (int64, bool) {
	prev, ok := r.conds[v1.PodResizeInProgress]
	delete(r.conds, v1.PodResizeInProgress)
	return prev.ObservedGeneration, ok
}

func (r *resizeFakes) ClearPodResizePendingCondition(types.UID) { delete(r.conds, v1.PodResizePending) }

func (r *resizeFakes) PodResizeConditions(types.UID) []v1.PodCondition {
	var out []v1.PodCondition
	for _, t := range []v1.PodConditionType{v1.PodResizePending, v1.PodResizeInProgress} {
		if c, ok := r.conds[t]; ok {
			out = append(out, c)
		}
	}
	return out
}

// resizingRuntime is the fake runtime that also reports a resize action.
type resizingRuntime struct {
	*fakeRuntime
	resized bool
	pods    []*v1.Pod
}

func (r *resizingRuntime) SyncPod(pod *v1.Pod, s *kubecontainer.PodStatus, b *kubecontainer.Backoff) (kubecontainer.Result, error) {
	r.pods = append(r.pods, pod)
	res, err := r.fakeRuntime.SyncPod(pod, s, b)
	res.Resized = r.resized
	return res, err
}

// TestSyncPodResize: SyncPod hands the runtime the allocated pod, sets PodResizeInProgress while
// the runtime lags the allocation and clears it with ResizeCompleted once it does not, has the
// PLEG watch the pod after a resize action, and turns a ResizeError into reason Error with
// ResizeError. The conditions go into the status; a terminal status drops them.
func TestSyncPodResize(t *testing.T) {
	f := newFixture(t)
	fakes := &resizeFakes{cpu: "300m", inProgress: true, conds: map[v1.PodConditionType]v1.PodCondition{}}
	rt := &resizingRuntime{fakeRuntime: f.rt, resized: true}
	f.s.opts.Runtime = rt
	f.s.opts.Resizes = &Resizes{Allocation: fakes, Conditions: fakes, Runtime: fakes, PLEG: fakes}
	p := pod("web")
	p.Generation = 2
	p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}

	rt.syncErr = &kubecontainer.ResizeError{Message: "boom"}
	_, err := f.s.SyncPod(context.Background(), podworkers.SyncPodUpdate, p, nil, &kubecontainer.PodStatus{})
	if !errors.Is(err, kubecontainer.ErrResizePodInPlace) {
		t.Fatalf("SyncPod() = %v, want the resize error", err)
	}
	if got := rt.pods[0].Spec.Containers[0].Resources.Requests.Cpu().String(); got != "300m" {
		t.Errorf("runtime was given cpu %s, want the allocated 300m", got)
	}
	if diff := cmp.Diff([]types.UID{p.UID}, fakes.watched); diff != "" {
		t.Errorf("watched pods mismatch (-want +got):\n%s", diff)
	}
	if c := fakes.conds[v1.PodResizeInProgress]; c.Reason != v1.PodReasonError || c.Message != "boom" || c.ObservedGeneration != 2 {
		t.Errorf("PodResizeInProgress = %+v, want Error boom at generation 2", c)
	}
	if n := len(*f.events); n != 1 || (*f.events)[0] != `Warning ResizeError Pod resize error: {"containers":[{"name":"app","resources":{"requests":{"cpu":"300m"}}}],"generation":2,"error":"boom"}` {
		t.Errorf("events = %q, want one ResizeError", *f.events)
	}

	// The resize is applied: the next sync writes the condition it found, then clears it.
	rt.syncErr, rt.resized = nil, false
	if _, err := f.s.SyncPod(context.Background(), podworkers.SyncPodSync, p, nil, &kubecontainer.PodStatus{}); err != nil {
		t.Fatal(err)
	}
	st := f.status.statuses[p.UID]
	if !hasCondition(st, v1.PodResizeInProgress) {
		t.Errorf("status conditions = %v, want PodResizeInProgress while the runtime lags", st.Conditions)
	}
	fakes.inProgress = false
	if _, err := f.s.SyncPod(context.Background(), podworkers.SyncPodSync, p, nil, &kubecontainer.PodStatus{}); err != nil {
		t.Fatal(err)
	}
	if st := f.status.statuses[p.UID]; hasCondition(st, v1.PodResizeInProgress) {
		t.Errorf("status conditions = %v, want PodResizeInProgress cleared", st.Conditions)
	}
	if last := (*f.events)[len(*f.events)-1]; last != `Normal ResizeCompleted Pod resize completed: {"containers":[{"name":"app","resources":{"requests":{"cpu":"300m"}}}],"generation":2}` {
		t.Errorf("last event = %q, want ResizeCompleted", last)
	}

	fakes.conds[v1.PodResizePending] = v1.PodCondition{Type: v1.PodResizePending, Reason: v1.PodReasonDeferred}
	if _, err := f.s.SyncTerminatedPod(context.Background(), p, &kubecontainer.PodStatus{}); err != nil {
		t.Fatal(err)
	}
	if len(fakes.conds) != 0 || hasCondition(f.status.statuses[p.UID], v1.PodResizePending) {
		t.Errorf("a terminal pod kept its resize conditions: %v", fakes.conds)
	}
}

func hasCondition(st v1.PodStatus, t v1.PodConditionType) bool {
	for _, c := range st.Conditions {
		if c.Type == t {
			return true
		}
	}
	return false
}
