package status

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// conditionsBefore is the condition list GeneratePodStatus built before it sized the list to
// what it may hold (conditionsCap), with room for every condition of the API status and five
// more: the reference TestConditionsSizedAsBuilt holds it to. s is the status as GeneratePodStatus
// has it when it turns to the conditions (phase, container statuses).
func conditionsBefore(pod *v1.Pod, old v1.PodStatus, rs *kubecontainer.PodStatus, s v1.PodStatus, now time.Time, opts GenerateOptions) []v1.PodCondition {
	s.Conditions = make([]v1.PodCondition, 0, len(pod.Status.Conditions)+5)
	for _, c := range pod.Status.Conditions {
		if !ownedByKubelet(c.Type) {
			s.Conditions = append(s.Conditions, c)
		}
	}
	s.Conditions = append(s.Conditions, opts.ResizeConditions...)
	if _, dt := findCondition(old.Conditions, v1.DisruptionTarget); dt != nil {
		if i, _ := findCondition(s.Conditions, v1.DisruptionTarget); i >= 0 {
			s.Conditions[i] = *dt
		} else {
			s.Conditions = append(s.Conditions, *dt)
		}
	}
	all := joinStatuses(s.InitContainerStatuses, s.ContainerStatuses)
	s.Conditions = append(s.Conditions, readyToStartContainersCondition(pod, rs))
	s.Conditions = append(s.Conditions, initializedCondition(pod, all, s.Phase))
	containersReady := containersReadyCondition(pod, all, s.Phase)
	s.Conditions = append(s.Conditions, readyConditionOf(pod, s.Conditions, containersReady))
	s.Conditions = append(s.Conditions, containersReady)
	s.Conditions = append(s.Conditions, v1.PodCondition{Type: v1.PodScheduled, ObservedGeneration: pod.Generation, Status: v1.ConditionTrue})
	stampTransitions(&s, &old, now)
	return s.Conditions
}

// randomConditions is a list of conditions of the kubelet's types, the resize types, the shared
// DisruptionTarget and others' types (a readiness gate's), in a random order and with random
// statuses, now and then repeating a type.
func randomConditions(r *rand.Rand) []v1.PodCondition {
	types := []v1.PodConditionType{v1.PodScheduled, v1.PodReady, v1.PodInitialized, v1.ContainersReady,
		v1.PodReadyToStartContainers, v1.PodResizePending, v1.PodResizeInProgress, v1.DisruptionTarget,
		"example.com/gate", "example.com/other"}
	var out []v1.PodCondition
	for range r.IntN(8) {
		out = append(out, v1.PodCondition{Type: types[r.IntN(len(types))],
			Status: []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse}[r.IntN(2)], Reason: "R", Message: "m"})
	}
	return out
}

// TestConditionsSizedAsBuilt: the conditions GeneratePodStatus lists in a list made to size are
// the ones the list made for every API condition gave, over random pods with others', shared,
// resize and the kubelet's own conditions in their API status, a disruption target in the old
// status, resize conditions and readiness gates; and the list made holds them all, one spare at
// most (the disruption target that replaces the API's).
func TestConditionsSizedAsBuilt(t *testing.T) {
	if raceEnabled {
		t.Skip(pureUnderRace)
	}
	r := rand.New(rand.NewPCG(22, 13))
	for i := range 3000 {
		pod, rs, old, reasons := randomContainerWorld(r)
		pod.Status.Conditions = randomConditions(r)
		old.Conditions = randomConditions(r)
		if r.IntN(2) == 0 {
			pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "example.com/gate"}}
		}
		opts := GenerateOptions{Reasons: reasons}
		if r.IntN(3) == 0 {
			opts.ResizeConditions = []v1.PodCondition{{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: "Deferred"}}
		}
		got := GeneratePodStatus(pod, old, rs, r.IntN(4) == 0, t1, opts)
		want := conditionsBefore(pod, old, rs, got, t1, opts)
		if diff := cmp.Diff(want, got.Conditions); diff != "" {
			t.Fatalf("case %d: conditions differ (-before +now):\n%s\nAPI %+v\nold %+v", i, diff, pod.Status.Conditions, old.Conditions)
		}
		if n, c := len(got.Conditions), cap(got.Conditions); c > n+1 || c != conditionsCap(pod, &old, opts.ResizeConditions) {
			t.Fatalf("case %d: %d conditions in a list of %d, sized %d", i, n, c, conditionsCap(pod, &old, opts.ResizeConditions))
		}
	}
}

// readyProbes is a ProbeStatus that marks every container it is handed started and ready, and
// counts the statuses it was handed.
type readyProbes struct{ containers, initContainers int }

func (p *readyProbes) UpdateContainerStatuses(_ *v1.Pod, containers, initContainers []v1.ContainerStatus) {
	for _, list := range [][]v1.ContainerStatus{containers, initContainers} {
		for i := range list {
			list[i].Started, list[i].Ready = boolp(true), true
		}
	}
	p.containers += len(containers)
	p.initContainers += len(initContainers)
}

// TestProbesSetTheStatusLists: the prober is handed the status's own lists of container
// statuses, so what it sets is in the status returned and in the conditions computed after it
// (the pod is Ready although the runtime knows no container: only the prober says they are).
func TestProbesSetTheStatusLists(t *testing.T) {
	pod := newPod(v1.RestartPolicyAlways, "app", "log")
	pod.Spec.InitContainers = []v1.Container{{Name: "setup", Image: "setup:1"}}
	p := &readyProbes{}
	s := GeneratePodStatus(pod, pod.Status, &kubecontainer.PodStatus{}, false, t1, GenerateOptions{Probes: p})
	if p.containers != 2 || p.initContainers != 1 {
		t.Fatalf("prober handed %d container and %d init container statuses, want 2 and 1", p.containers, p.initContainers)
	}
	for _, cs := range append(append([]v1.ContainerStatus{}, s.InitContainerStatuses...), s.ContainerStatuses...) {
		if !cs.Ready || cs.Started == nil || !*cs.Started {
			t.Errorf("container %s: ready %v, started %v; want both set by the prober", cs.Name, cs.Ready, cs.Started)
		}
	}
	for _, typ := range []v1.PodConditionType{v1.ContainersReady, v1.PodReady} {
		if _, c := findCondition(s.Conditions, typ); c == nil || c.Status != v1.ConditionTrue {
			t.Errorf("condition %s = %+v, want True from the prober's readiness", typ, c)
		}
	}
}

// TestBuffersBuildTheSameStatus: a status built into Buffers is the one built without them, over
// a chain of random pods built one after the other into the same Buffers (so that each build
// overwrites the lists of the one before), with and without a host IP, a host network, probes,
// resize conditions and init containers; and a build leaves the old status it is handed (the
// status manager's copy of the last one, which it keeps) as it was.
func TestBuffersBuildTheSameStatus(t *testing.T) {
	if raceEnabled {
		t.Skip(pureUnderRace)
	}
	r := rand.New(rand.NewPCG(22, 29))
	var buf Buffers
	var prev v1.PodStatus
	for i := range 3000 {
		pod, rs, old, reasons := randomContainerWorld(r)
		pod.Status.Conditions = randomConditions(r)
		old.Conditions = randomConditions(r)
		if r.IntN(3) == 0 && i > 0 {
			// The status manager's copy of the last status as the old one, as a pod's next
			// sync has it.
			old = *prev.DeepCopy()
		}
		if r.IntN(4) == 0 {
			pod.Spec.HostNetwork = true
		}
		if r.IntN(3) == 0 {
			start := metav1.NewTime(t1.Add(-time.Minute))
			old.StartTime = &start
		}
		opts := GenerateOptions{Reasons: reasons}
		if r.IntN(2) == 0 {
			opts.HostIP = "192.168.0.10"
		}
		if r.IntN(3) == 0 {
			opts.ResizeConditions = []v1.PodCondition{{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: "Deferred"}}
		}
		if r.IntN(3) == 0 {
			opts.Probes = &readyProbes{}
		}
		terminal := r.IntN(4) == 0
		want := GeneratePodStatus(pod, *old.DeepCopy(), rs, terminal, t1, opts)
		opts.Buffers = &buf
		before := *old.DeepCopy()
		got := GeneratePodStatus(pod, old, rs, terminal, t1, opts)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("case %d: built into buffers (-without +with):\n%s", i, diff)
		}
		if diff := cmp.Diff(before, old); diff != "" {
			t.Fatalf("case %d: the build changed the old status it was handed (-before +after):\n%s", i, diff)
		}
		prev = got
	}
}

// TestBuffersSaveTheLists: a running pod's status built into Buffers that served a build before
// allocates neither its conditions, its container statuses, their states, its pod and host IPs
// nor its start time: six allocations fewer than a build without them; and a pod with a running
// container and one not yet created, one fewer again (the waiting state).
func TestBuffersSaveTheLists(t *testing.T) {
	if raceEnabled {
		t.Skip(pureUnderRace)
	}
	pod := newPod(v1.RestartPolicyAlways, "app")
	rs := &kubecontainer.PodStatus{IPs: []string{"10.0.0.5"}, ContainerStatuses: []kubecontainer.ContainerStatus{
		{ID: "c1", Name: "app", State: kubecontainer.ContainerStateRunning, StartedAt: t1}}}
	old := GeneratePodStatus(pod, pod.Status, rs, false, t1, GenerateOptions{HostIP: "192.168.0.10"})
	build := func(buf *Buffers) func() {
		return func() {
			GeneratePodStatus(pod, old, rs, false, t1, GenerateOptions{HostIP: "192.168.0.10", Buffers: buf})
		}
	}
	without := testing.AllocsPerRun(100, build(nil))
	with := testing.AllocsPerRun(100, build(&Buffers{}))
	if without-with != 6 {
		t.Errorf("allocations a build: %v without buffers, %v with; want 6 fewer", without, with)
	}

	pod = newPod(v1.RestartPolicyAlways, "app", "log")
	without = testing.AllocsPerRun(100, build(nil))
	with = testing.AllocsPerRun(100, build(&Buffers{}))
	if without-with != 7 {
		t.Errorf("allocations a build of two containers: %v without buffers, %v with; want 7 fewer", without, with)
	}
}
