package allocation

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/podmanager"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/status"
)

type recorded struct{ eventType, reason, message string }

type recorder []recorded

func (r *recorder) Event(_ runtime.Object, eventType, reason, message string) {
	*r = append(*r, recorded{eventType, reason, message})
}

// env is a Manager over a real status manager and pod manager, with an admit function that fits
// cpu requests into capacity milli-CPUs.
type env struct {
	m      *Manager
	status *status.Manager
	clk    *vclock.Clock
	pods   *podmanager.Manager
	events recorder
	fit    int64
}

func newEnv(t testing.TB, allocatable string, pods ...*v1.Pod) *env {
	t.Helper()
	e := &env{clk: vclock.New(vclock.Epoch), fit: 1500}
	var err error
	if e.pods, err = podmanager.New(podmanager.Options{Tracer: trace.Discard}); err != nil {
		t.Fatal(err)
	}
	if err := e.start(allocatable, nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		e.pods.AddPod(p)
		e.m.SetAllocatedResources(p)
	}
	return e
}

// start builds the status manager and the Manager anew, as a kubelet (re)start does, with the
// checkpoint cp (nil: none). The pod manager is kept: the sources give the pods again.
func (e *env) start(allocatable string, cp Checkpointer) error {
	var err error
	if e.status, err = status.New(status.Options{Clock: e.clk, Tracer: trace.Discard}); err != nil {
		return err
	}
	e.m, err = New(Options{
		Clock:          e.clk,
		Conditions:     e.status,
		Admit:          e.admit,
		Allocatable:    v1.ResourceList{v1.ResourceCPU: resource.MustParse(allocatable), v1.ResourceMemory: resource.MustParse("1Gi")},
		PodByUID:       e.pods.GetPodByUID,
		Recorder:       &e.events,
		Checkpoint:     cp,
		CheckpointPath: "root/allocated_pods_state",
	})
	return err
}

// admit counts the other pods' allocated cpu requests, as admission's counts do.
func (e *env) admit(_ context.Context, pod *v1.Pod) (bool, string, string) {
	used := int64(0)
	for _, other := range e.pods.GetPods() {
		if other.UID == pod.UID {
			continue
		}
		p, _ := e.m.UpdatePodFromAllocation(other)
		used += p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
	}
	if used+pod.Spec.Containers[0].Resources.Requests.Cpu().MilliValue() > e.fit {
		return false, "OutOfcpu", "Node didn't have enough resource: cpu"
	}
	return true, "", ""
}

func pod(name, cpu string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name), Generation: 1},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}}},
	}
}

// resize returns p asking for cpu, one generation on, and makes it the pod manager's.
func (e *env) resize(p *v1.Pod, cpu string) *v1.Pod {
	n := p.DeepCopy()
	n.Generation++
	n.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse(cpu)
	e.pods.UpdatePod(n)
	return n
}

func (e *env) conditions(uid types.UID) map[v1.PodConditionType]string {
	out := map[v1.PodConditionType]string{}
	for _, c := range e.status.PodResizeConditions(uid) {
		out[c.Type] = c.Reason + ": " + c.Message
	}
	return out
}

func names(pods []*v1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestNewMissingOptions(t *testing.T) {
	if _, err := New(Options{}); !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Errorf("New(Options{}) = %v, want ErrMissingOption", err)
	}
}

func TestUpdatePodFromAllocation(t *testing.T) {
	web := pod("web", "100m")
	e := newEnv(t, "4", web)
	if got, updated := e.m.UpdatePodFromAllocation(web); updated || got != web {
		t.Errorf("UpdatePodFromAllocation(allocated pod) = %p, %v, want the pod itself", got, updated)
	}
	wider := e.resize(web, "300m")
	got, updated := e.m.UpdatePodFromAllocation(wider)
	if !updated || got == wider || got.Spec.Containers[0].Resources.Requests.Cpu().String() != "100m" {
		t.Errorf("UpdatePodFromAllocation(resized pod) = %v, %v, want a copy with 100m", got.Spec.Containers[0].Resources, updated)
	}
	if wider.Spec.Containers[0].Resources.Requests.Cpu().String() != "300m" {
		t.Errorf("UpdatePodFromAllocation changed its argument")
	}
	unknown := pod("other", "1")
	if got, updated := e.m.UpdatePodFromAllocation(unknown); updated || got != unknown {
		t.Errorf("UpdatePodFromAllocation(unknown pod) updated it")
	}
}

func TestHandlePodUpdate(t *testing.T) {
	tests := []struct {
		name      string
		cpu       string
		static    bool
		want      map[v1.PodConditionType]string
		wantSync  []string
		wantEvent recorded
		pending   bool
		allocated string
	}{
		{
			name: "fits", cpu: "1",
			want:     map[v1.PodConditionType]string{v1.PodResizeInProgress: ": "},
			wantSync: []string{"web"}, allocated: "1",
			wantEvent: recorded{v1.EventTypeNormal, "ResizeStarted", `Pod resize started: {"containers":[{"name":"app","resources":{"requests":{"cpu":"1"}}}],"generation":2}`},
		},
		{
			name: "over the node", cpu: "5",
			want:     map[v1.PodConditionType]string{v1.PodResizePending: "Infeasible: Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000"},
			wantSync: []string{"web"}, allocated: "100m",
			wantEvent: recorded{v1.EventTypeWarning, "ResizeInfeasible", `Pod resize Infeasible: {"containers":[{"name":"app","resources":{"requests":{"cpu":"5"}}}],"generation":2,"error":"Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000"}`},
		},
		{
			name: "beside the others", cpu: "1500m", pending: true,
			want:     map[v1.PodConditionType]string{v1.PodResizePending: "Deferred: Node didn't have enough resource: cpu"},
			wantSync: []string{"web"}, allocated: "100m",
			wantEvent: recorded{v1.EventTypeWarning, "ResizeDeferred", `Pod resize Deferred: {"containers":[{"name":"app","resources":{"requests":{"cpu":"1500m"}}}],"generation":2,"error":"Node didn't have enough resource: cpu"}`},
		},
		{
			name: "static pod", cpu: "1", static: true,
			want:     map[v1.PodConditionType]string{v1.PodResizePending: "Infeasible: In-place resize of static-pods is not supported"},
			wantSync: []string{"web"}, allocated: "100m",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			web, batch := pod("web", "100m"), pod("batch", "500m")
			if tt.static {
				web.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
			}
			e := newEnv(t, "4", web, batch)
			got := e.m.HandlePodUpdate(context.Background(), web, e.resize(web, tt.cpu))
			if diff := cmp.Diff(tt.wantSync, names(got)); diff != "" {
				t.Errorf("pods to sync mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, e.conditions("web")); diff != "" {
				t.Errorf("conditions mismatch (-want +got):\n%s", diff)
			}
			if e.m.HasPendingResizes() != tt.pending {
				t.Errorf("HasPendingResizes() = %v, want %v", e.m.HasPendingResizes(), tt.pending)
			}
			current, _ := e.pods.GetPodByUID("web")
			alloc, _ := e.m.UpdatePodFromAllocation(current)
			if got := alloc.Spec.Containers[0].Resources.Requests.Cpu().String(); got != tt.allocated {
				t.Errorf("allocated cpu = %s, want %s", got, tt.allocated)
			}
			if tt.wantEvent != (recorded{}) {
				if diff := cmp.Diff([]recorded{tt.wantEvent}, []recorded(e.events), cmp.AllowUnexported(recorded{})); diff != "" {
					t.Errorf("events mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestDeferredRetried: a deferred resize waits; it is retried when the retry timer fires (3
// minutes after the last retry) and when pods go, and allocated once it fits. A resize reverted
// to the allocation clears PodResizePending.
func TestDeferredRetried(t *testing.T) {
	ctx := context.Background()
	web, batch := pod("web", "100m"), pod("batch", "500m")
	e := newEnv(t, "4", web, batch)
	wider := e.resize(web, "1500m")
	e.m.HandlePodUpdate(ctx, web, wider)
	at, ok := e.m.NextWake()
	if !ok || at.Sub(vclock.Epoch) != RetryDelay {
		t.Fatalf("NextWake() = %v, %v, want %v", at.Sub(vclock.Epoch), ok, RetryDelay)
	}
	e.clk.Set(at)
	// Still deferred, but probed again: the condition's lastProbeTime moved, so the pod syncs, as
	// in the kubelet, whose retry compares the conditions whole.
	if got := names(e.m.Advance(ctx)); !cmp.Equal(got, []string{"web"}) {
		t.Errorf("Advance() with the resize still deferred synced %v, want [web]", got)
	}
	for _, c := range e.status.PodResizeConditions("web") {
		if !c.LastProbeTime.Time.Equal(at) || !c.LastTransitionTime.Time.Equal(vclock.Epoch) {
			t.Errorf("%s probed %v, transitioned %v, want %v and the start", c.Type, c.LastProbeTime, c.LastTransitionTime, at)
		}
	}
	if !e.m.HasPendingResizes() {
		t.Fatalf("the deferred resize left the queue")
	}
	e.pods.RemovePod(batch)
	e.m.RemovePod(batch.UID)
	e.clk.Set(e.clk.Now().Add(time.Second))
	if got := names(e.m.RetryPendingResizes(ctx)); !cmp.Equal(got, []string{"web"}) {
		t.Errorf("RetryPendingResizes() after batch went = %v, want [web]", got)
	}
	if e.m.HasPendingResizes() {
		t.Errorf("the allocated resize is still pending")
	}
	if _, ok := e.m.NextWake(); ok {
		t.Errorf("NextWake() with nothing pending reports a wake")
	}

	// A resize back to the allocation while pending clears PodResizePending.
	current, _ := e.pods.GetPodByUID("web")
	again := e.resize(current, "9")
	e.m.HandlePodUpdate(ctx, wider, again)
	if _, ok := e.conditions("web")[v1.PodResizePending]; !ok {
		t.Fatalf("no PodResizePending after an infeasible resize")
	}
	back := e.resize(again, "1500m")
	if got := e.m.HandlePodUpdate(ctx, again, back); len(got) != 0 {
		t.Errorf("HandlePodUpdate(reverted) synced %v", names(got))
	}
	if _, ok := e.conditions("web")[v1.PodResizePending]; ok {
		t.Errorf("PodResizePending kept after the resize was reverted")
	}
}

// TestSortPending: resizes that do not increase requests go first, then higher priority, then
// Guaranteed, then the longest pending.
func TestSortPending(t *testing.T) {
	ctx := context.Background()
	a, b, c := pod("a", "200m"), pod("b", "200m"), pod("c", "200m")
	e := newEnv(t, "4", a, b, c)
	e.fit = 0 // every resize is deferred
	high := int32(10)
	e.m.HandlePodUpdate(ctx, a, e.resize(a, "300m"))
	e.clk.Set(e.clk.Now().Add(time.Second))
	// The pod manager keeps a copy: the priority is set before the resize is stored.
	bp := b.DeepCopy()
	bp.Spec.Priority = &high
	bp = e.resize(bp, "300m")
	e.m.HandlePodUpdate(ctx, b, bp)
	e.clk.Set(e.clk.Now().Add(time.Second))
	e.m.HandlePodUpdate(ctx, c, e.resize(c, "100m"))
	want := []types.UID{"c", "b", "a"}
	if diff := cmp.Diff(want, e.m.pending); diff != "" {
		t.Errorf("pending order mismatch (-want +got):\n%s", diff)
	}
}

// TestOnChange: admission is told of every allocation set or forgotten, so that its counts follow
// the allocated resources.
func TestOnChange(t *testing.T) {
	e := newEnv(t, "4")
	var got []types.UID
	e.m.OnChange(func(uid types.UID) { got = append(got, uid) })
	web := pod("web", "100m")
	e.pods.AddPod(web)
	e.m.SetAllocatedResources(web)
	e.m.HandlePodUpdate(context.Background(), web, e.resize(web, "200m"))
	e.m.RemovePod(web.UID)
	e.m.RemovePod(web.UID)
	if diff := cmp.Diff([]types.UID{"web", "web", "web"}, got); diff != "" {
		t.Errorf("changes mismatch (-want +got):\n%s", diff)
	}
}

// TestUpdatePodFromAllocationOnlyDiffering checks that only the containers whose resources differ
// from their allocation take it: the others keep the spec's lists as they are spelled.
func TestUpdatePodFromAllocationOnlyDiffering(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	mem := func(q string) v1.ResourceRequirements {
		return v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceMemory: resource.MustParse(q)}}
	}
	allocated := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "web"},
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{{Name: "log", RestartPolicy: &always, Resources: mem("1Gi")}},
			Containers:     []v1.Container{{Name: "app", Resources: mem("64Mi")}, {Name: "side", Resources: mem("1Gi")}},
		},
	}
	e := newEnv(t, "4", allocated)
	// The same quantities spelled otherwise, and app resized.
	desired := allocated.DeepCopy()
	desired.Spec.InitContainers[0].Resources = mem("1073741824")
	desired.Spec.Containers[0].Resources = mem("128Mi")
	desired.Spec.Containers[1].Resources = mem("1073741824")
	got, updated := e.m.UpdatePodFromAllocation(desired)
	if !updated {
		t.Fatalf("UpdatePodFromAllocation(resized pod) did not update it")
	}
	spelled := func(c v1.Container) string { return c.Resources.Requests.Memory().String() }
	want := []string{"1073741824", "64Mi", "1073741824"}
	if diff := cmp.Diff(want, []string{spelled(got.Spec.InitContainers[0]), spelled(got.Spec.Containers[0]), spelled(got.Spec.Containers[1])}); diff != "" {
		t.Errorf("memory requests of log, app, side (-want +got):\n%s", diff)
	}
	if spelled(desired.Spec.Containers[0]) != "128Mi" {
		t.Errorf("UpdatePodFromAllocation changed its argument")
	}
}

// TestResizeOverheadCountsWhereRequested: the Infeasible check adds the pod's overhead to a
// resource only when the pod requests some of it, as v1.35's canResizePod does: a pod with a cpu
// overhead above the node's cpu and no cpu request is resized; its memory request carries the
// memory overhead.
func TestResizeOverheadCountsWhereRequested(t *testing.T) {
	ctx := context.Background()
	web := pod("web", "0")
	web.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}
	web.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("512Mi")}
	e := newEnv(t, "50m", web)
	memory := func(p *v1.Pod, q string) *v1.Pod {
		n := p.DeepCopy()
		n.Generation++
		n.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse(q)
		e.pods.UpdatePod(n)
		return n
	}
	wider := memory(web, "128Mi")
	e.m.HandlePodUpdate(ctx, web, wider)
	if _, updated := e.m.UpdatePodFromAllocation(wider); updated {
		t.Fatalf("resize to 128Mi with a 100m cpu overhead on a 50m node not allocated: conditions %v", e.conditions("web"))
	}
	// 600Mi and the 512Mi overhead exceed the node's 1Gi.
	e.m.HandlePodUpdate(ctx, wider, memory(wider, "600Mi"))
	want := map[v1.PodConditionType]string{
		v1.PodResizePending:    "Infeasible: Node didn't have enough capacity: memory, requested: 1166016512, capacity: 1073741824",
		v1.PodResizeInProgress: ": ",
	}
	if diff := cmp.Diff(want, e.conditions("web")); diff != "" {
		t.Errorf("conditions after a resize beyond the node's memory (-want +got):\n%s", diff)
	}
}

// TestRequestsShrank: HandlePodReconcile's test compares the pod before and after a status
// change, each at its allocation and with the resources its status shows: a resize down shrinks
// the requests when the status shows it actuated, not when the spec changes (the allocation
// stands for the spec), and memory counts as cpu does.
func TestRequestsShrank(t *testing.T) {
	actuated := func(p *v1.Pod, cpu, mem string) *v1.Pod {
		p = p.DeepCopy()
		rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}
		if mem != "" {
			rl[v1.ResourceMemory] = resource.MustParse(mem)
		}
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "app", Resources: &v1.ResourceRequirements{Requests: rl}}}
		return p
	}
	web := pod("web", "500m")
	e := newEnv(t, "2", web)
	desired := e.resize(web, "2") // a pending resize up: the allocation stays 500m
	tests := []struct {
		name     string
		old, pod *v1.Pod
		want     bool
	}{
		{"status unchanged", actuated(web, "1", ""), actuated(web, "1", ""), false},
		{"resize down actuated", actuated(web, "1", ""), actuated(web, "500m", ""), true},
		{"status resources gone", actuated(web, "1", ""), web, true},
		{"status resources grew", actuated(web, "500m", ""), actuated(web, "1", ""), false},
		{"memory shrank", actuated(web, "1", "200Mi"), actuated(web, "1", "100Mi"), true},
		{"only the spec grew, not allocated", web, desired, false},
		{"a spec above the allocation does not hide a shrink", actuated(desired, "1", ""), actuated(desired, "500m", ""), true},
	}
	for _, tt := range tests {
		if got := e.m.RequestsShrank(tt.old, tt.pod); got != tt.want {
			t.Errorf("%s: RequestsShrank() = %v, want %v", tt.name, got, tt.want)
		}
	}
}
