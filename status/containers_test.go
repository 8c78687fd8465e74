package status

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// TestConvertContainerStatuses gives, case by case, the statuses v1.35's
// convertToAPIContainerStatuses builds from a pod, the runtime's view of it, its previous API
// statuses and the reasons of its last sync; the image and container IDs carry the fake
// runtime's prefix, and an exit with no reason from the runtime gets containerd's Error or
// Completed. Every status of an instance also gets the allocated resources (setResources).
func TestConvertContainerStatuses(t *testing.T) {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1, t2, t3 := metav1.NewTime(epoch.Add(time.Second)), metav1.NewTime(epoch.Add(2*time.Second)), metav1.NewTime(epoch.Add(3*time.Second))
	running := func(id string, created metav1.Time, restarts int) kubecontainer.ContainerStatus {
		return kubecontainer.ContainerStatus{ID: id, Name: "app", Image: "busybox:1.36", ImageRef: "fake://busybox:1.36", State: kubecontainer.ContainerStateRunning,
			CreatedAt: created.Time, StartedAt: created.Time, RestartCount: restarts}
	}
	exited := func(id string, created metav1.Time, code, restarts int) kubecontainer.ContainerStatus {
		return kubecontainer.ContainerStatus{ID: id, Name: "app", Image: "busybox:1.36", ImageRef: "fake://busybox:1.36", State: kubecontainer.ContainerStateExited,
			CreatedAt: created.Time, StartedAt: created.Time, FinishedAt: created.Add(500 * time.Millisecond), ExitCode: code, RestartCount: restarts}
	}
	terminated := func(id string, started metav1.Time, code int32, reason string) *v1.ContainerStateTerminated {
		return &v1.ContainerStateTerminated{ExitCode: code, Reason: reason, StartedAt: started,
			FinishedAt: metav1.NewTime(started.Add(500 * time.Millisecond)), ContainerID: "fake://" + id}
	}
	waiting := func(reason string) v1.ContainerState {
		return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason}}
	}
	// instance is the status of a runtime instance of app: its IDs and resources.
	instance := func(id string, restarts int32, state v1.ContainerState) v1.ContainerStatus {
		return v1.ContainerStatus{Name: "app", Image: "busybox:1.36", ImageID: "fake://busybox:1.36", ContainerID: "fake://" + id,
			RestartCount: restarts, State: state, Resources: &v1.ResourceRequirements{}}
	}
	wasRunning := v1.ContainerStatus{Name: "app", Image: "busybox:1.36", RestartCount: 2,
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: t1}}}
	app := []v1.Container{{Name: "app", Image: "busybox:1.36"}}
	// mounting is app with a writable volume and the service account token the API server's
	// admission mounts read-only; mounted is what its status reports of them.
	token := "/var/run/secrets/kubernetes.io/serviceaccount"
	mounting := []v1.Container{{Name: "app", Image: "busybox:1.36", VolumeMounts: []v1.VolumeMount{
		{Name: "data", MountPath: "/data"}, {Name: "kube-api-access-x", MountPath: token, ReadOnly: true}}}}
	disabled, enabled := v1.RecursiveReadOnlyDisabled, v1.RecursiveReadOnlyEnabled
	mounted := []v1.VolumeMountStatus{{Name: "data", MountPath: "/data"},
		{Name: "kube-api-access-x", MountPath: token, ReadOnly: true, RecursiveReadOnly: &disabled}}
	// rroMount is app with one read-only mount that asks for mode.
	rroMount := func(mode v1.RecursiveReadOnlyMode, propagation *v1.MountPropagationMode) []v1.Container {
		return []v1.Container{{Name: "app", Image: "busybox:1.36", VolumeMounts: []v1.VolumeMount{{Name: "cfg", MountPath: "/cfg",
			ReadOnly: true, RecursiveReadOnly: &mode, MountPropagation: propagation}}}}
	}
	rroStatus := func(mode v1.RecursiveReadOnlyMode) []v1.ContainerStatus {
		return []v1.ContainerStatus{{Name: "app", Image: "busybox:1.36", State: waiting("ContainerCreating"),
			VolumeMounts: []v1.VolumeMountStatus{{Name: "cfg", MountPath: "/cfg", ReadOnly: true, RecursiveReadOnly: &mode}}}}
	}
	withMounts := func(s v1.ContainerStatus, m []v1.VolumeMountStatus) v1.ContainerStatus { s.VolumeMounts = m; return s }
	tests := []struct {
		name       string
		containers []v1.Container // the pod's regular containers; app when nil
		init       []v1.Container // the pod's init containers
		isInit     bool           // convert init, not regular, containers
		deleting   bool
		instances  []kubecontainer.ContainerStatus
		previous   []v1.ContainerStatus
		reasons    map[string]Reason
		rro        bool // the runtime handler supports recursive read-only mounts
		want       []v1.ContainerStatus
	}{{
		name: "nothing in the runtime: ContainerCreating",
		want: []v1.ContainerStatus{{Name: "app", Image: "busybox:1.36", State: waiting("ContainerCreating")}},
	}, {
		name: "with init containers: PodInitializing",
		init: []v1.Container{{Name: "setup", Image: "setup:1"}},
		want: []v1.ContainerStatus{{Name: "app", Image: "busybox:1.36", State: waiting("PodInitializing")}},
	}, {
		name:      "a running instance",
		instances: []kubecontainer.ContainerStatus{running("c1", t1, 0)},
		want:      []v1.ContainerStatus{instance("c1", 0, v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: t1}})},
	}, {
		name:      "a created instance waits with no reason",
		instances: []kubecontainer.ContainerStatus{{ID: "c1", Name: "app", Image: "busybox:1.36", ImageRef: "fake://busybox:1.36", State: kubecontainer.ContainerStateCreated, CreatedAt: t1.Time}},
		want:      []v1.ContainerStatus{instance("c1", 0, v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}})},
	}, {
		name: "the newest instance gives the state, the one before the last state, older ones nothing",
		instances: []kubecontainer.ContainerStatus{
			exited("c1", t1, 2, 0), running("c3", t3, 2), exited("c2", t2, 1, 1),
		},
		want: []v1.ContainerStatus{func() v1.ContainerStatus {
			s := instance("c3", 2, v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: t3}})
			s.LastTerminationState = v1.ContainerState{Terminated: terminated("c2", t2, 1, "Error")}
			return s
		}()},
	}, {
		name:      "an exit's reason from the runtime stays",
		instances: []kubecontainer.ContainerStatus{func() kubecontainer.ContainerStatus { c := exited("c1", t1, 137, 0); c.Reason = "OOMKilled"; return c }()},
		previous:  []v1.ContainerStatus{wasRunning},
		want:      []v1.ContainerStatus{instance("c1", 0, v1.ContainerState{Terminated: terminated("c1", t1, 137, "OOMKilled")})},
	}, {
		name:     "gone from the runtime after running: last state unknown, one more restart",
		previous: []v1.ContainerStatus{wasRunning},
		want: []v1.ContainerStatus{{Name: "app", Image: "busybox:1.36", RestartCount: 3, State: waiting("ContainerCreating"),
			LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
				Reason: "ContainerStatusUnknown", ExitCode: 137,
				Message: "The container could not be located when the pod was deleted.  The container used to be Running"}}}},
	}, {
		name:     "gone from the runtime of a pod being deleted: no restart counted",
		deleting: true,
		previous: []v1.ContainerStatus{wasRunning},
		want: []v1.ContainerStatus{{Name: "app", Image: "busybox:1.36", RestartCount: 2, State: waiting("ContainerCreating"),
			LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
				Reason: "ContainerStatusUnknown", ExitCode: 137,
				Message: "The container could not be located when the pod was deleted.  The container used to be Running"}}}},
	}, {
		name:     "gone from the runtime after it terminated: the previous status whole",
		deleting: true,
		previous: []v1.ContainerStatus{{Name: "app", Image: "busybox:1.36", ContainerID: "fake://c1", RestartCount: 1,
			State: v1.ContainerState{Terminated: terminated("c1", t1, 0, "Completed")}}},
		want: []v1.ContainerStatus{{Name: "app", Image: "busybox:1.36", ContainerID: "fake://c1", RestartCount: 1,
			State: v1.ContainerState{Terminated: terminated("c1", t1, 0, "Completed")}}},
	}, {
		name:      "an unknown instance after running: terminated unknown, one more restart",
		deleting:  true,
		instances: []kubecontainer.ContainerStatus{{ID: "c1", Name: "app", Image: "busybox:1.36", ImageRef: "fake://busybox:1.36", State: kubecontainer.ContainerStateUnknown, CreatedAt: t1.Time, RestartCount: 2}},
		previous:  []v1.ContainerStatus{wasRunning},
		want: []v1.ContainerStatus{instance("c1", 3, v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			Reason: "ContainerStatusUnknown", ExitCode: 137, Message: "The container could not be located when the pod was terminated"}})},
	}, {
		name:      "an unknown instance with nothing before: waiting",
		instances: []kubecontainer.ContainerStatus{{ID: "c1", Name: "app", Image: "busybox:1.36", ImageRef: "fake://busybox:1.36", State: kubecontainer.ContainerStateUnknown, CreatedAt: t1.Time}},
		deleting:  true,
		want:      []v1.ContainerStatus{instance("c1", 0, v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}})},
	}, {
		name:      "restarted after a failure: the reason waits, the exit is the last state",
		instances: []kubecontainer.ContainerStatus{exited("c1", t1, 1, 0)},
		reasons:   map[string]Reason{"app": {Reason: "CrashLoopBackOff", Message: "back-off 10s restarting failed container=app pod=p_default(uid-p)"}},
		want: []v1.ContainerStatus{func() v1.ContainerStatus {
			s := instance("c1", 0, v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
				Message: "back-off 10s restarting failed container=app pod=p_default(uid-p)"}})
			s.LastTerminationState = v1.ContainerState{Terminated: terminated("c1", t1, 1, "Error")}
			return s
		}()},
	}, {
		name:      "running: a reason of the last sync is not shown",
		instances: []kubecontainer.ContainerStatus{running("c1", t1, 0)},
		reasons:   map[string]Reason{"app": {Reason: "CrashLoopBackOff"}},
		want:      []v1.ContainerStatus{instance("c1", 0, v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: t1}})},
	}, {
		name:       "regular containers sorted by name",
		containers: []v1.Container{{Name: "web", Image: "nginx:1.27"}, {Name: "log", Image: "busybox:1.36"}},
		want: []v1.ContainerStatus{
			{Name: "log", Image: "busybox:1.36", State: waiting("ContainerCreating")},
			{Name: "web", Image: "nginx:1.27", State: waiting("ContainerCreating")},
		},
	}, {
		// v1.36 shows such an init container Completed ("treat it as exited normally") once a
		// regular container was created; v1.35 only skips one whose instance exited 0.
		name:      "an init container gone from the runtime while a regular one runs stays waiting",
		init:      []v1.Container{{Name: "setup", Image: "setup:1"}},
		isInit:    true,
		instances: []kubecontainer.ContainerStatus{running("c1", t1, 0)},
		want:      []v1.ContainerStatus{{Name: "setup", Image: "setup:1", State: waiting("PodInitializing")}},
	}, {
		// RecursiveReadOnlyMounts is GA and locked on in v1.35: every default status lists the
		// spec's mounts, and a read-only one says whether it was made recursively read-only.
		name:       "volume mounts: listed in the default status, read-only ones not recursive",
		containers: mounting,
		want:       []v1.ContainerStatus{{Name: "app", Image: "busybox:1.36", State: waiting("ContainerCreating"), VolumeMounts: mounted}},
	}, {
		name:       "volume mounts: read-only IfPossible on a runtime that supports it is recursive",
		containers: rroMount(v1.RecursiveReadOnlyIfPossible, nil),
		rro:        true,
		want:       rroStatus(enabled),
	}, {
		name:       "volume mounts: read-only IfPossible on a runtime that does not support it is not",
		containers: rroMount(v1.RecursiveReadOnlyIfPossible, nil),
		want:       rroStatus(disabled),
	}, {
		name:       "volume mounts: read-only Enabled on a runtime that supports it is recursive",
		containers: rroMount(v1.RecursiveReadOnlyEnabled, nil),
		rro:        true,
		want:       rroStatus(enabled),
	}, {
		name:       "volume mounts: read-only Enabled the runtime cannot meet is logged and reported Disabled",
		containers: rroMount(v1.RecursiveReadOnlyEnabled, nil),
		want:       rroStatus(disabled),
	}, {
		name:       "volume mounts: a propagation other than None cannot be recursive",
		containers: rroMount(v1.RecursiveReadOnlyIfPossible, ptrTo(v1.MountPropagationHostToContainer)),
		rro:        true,
		want:       rroStatus(disabled),
	}, {
		name:       "volume mounts: a running instance keeps the previous status's mounts",
		containers: mounting,
		instances:  []kubecontainer.ContainerStatus{running("c1", t1, 0)},
		previous:   []v1.ContainerStatus{{Name: "app", Image: "busybox:1.36", State: waiting("ContainerCreating"), VolumeMounts: mounted[:1]}},
		want:       []v1.ContainerStatus{withMounts(instance("c1", 0, v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: t1}}), mounted[:1])},
	}, {
		// The runtime does not know the volumes' names: with no previous status, none.
		name:       "volume mounts: an instance with no previous status has none",
		containers: mounting,
		instances:  []kubecontainer.ContainerStatus{running("c1", t1, 0)},
		want:       []v1.ContainerStatus{instance("c1", 0, v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: t1}})},
	}, {
		name:       "volume mounts: gone from the runtime after it terminated: the previous status's",
		containers: mounting,
		previous: []v1.ContainerStatus{{Name: "app", Image: "busybox:1.36", ContainerID: "fake://c1",
			State: v1.ContainerState{Terminated: terminated("c1", t1, 0, "Completed")}}},
		want: []v1.ContainerStatus{{Name: "app", Image: "busybox:1.36", ContainerID: "fake://c1",
			State: v1.ContainerState{Terminated: terminated("c1", t1, 0, "Completed")}}},
	}, {
		name:   "volume mounts: init containers too",
		init:   []v1.Container{{Name: "setup", Image: "setup:1", VolumeMounts: mounting[0].VolumeMounts}},
		isInit: true,
		want:   []v1.ContainerStatus{{Name: "setup", Image: "setup:1", State: waiting("PodInitializing"), VolumeMounts: mounted}},
	}, {
		name:   "init containers in the spec's order; one that exited 0 shows no reason",
		init:   []v1.Container{{Name: "setup", Image: "setup:1"}, {Name: "migrate", Image: "migrate:1"}},
		isInit: true,
		instances: []kubecontainer.ContainerStatus{{ID: "i1", Name: "setup", Image: "setup:1", ImageRef: "fake://setup:1", State: kubecontainer.ContainerStateExited,
			CreatedAt: t1.Time, StartedAt: t1.Time, FinishedAt: t1.Add(500 * time.Millisecond)}},
		reasons: map[string]Reason{"setup": {Reason: "CrashLoopBackOff"}, "migrate": {Reason: "ErrImagePull", Message: "pull failed"}},
		want: []v1.ContainerStatus{
			{Name: "setup", Image: "setup:1", ImageID: "fake://setup:1", ContainerID: "fake://i1", Resources: &v1.ResourceRequirements{},
				State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Reason: "Completed", StartedAt: t1,
					FinishedAt: metav1.NewTime(t1.Add(500 * time.Millisecond)), ContainerID: "fake://i1"}}},
			{Name: "migrate", Image: "migrate:1", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "pull failed"}}},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
				Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: tc.containers, InitContainers: tc.init}}
			if pod.Spec.Containers == nil {
				pod.Spec.Containers = app
			}
			if tc.deleting {
				pod.DeletionTimestamp = &t3
			}
			containers := pod.Spec.Containers
			if tc.isInit {
				containers = pod.Spec.InitContainers
			}
			rs := &kubecontainer.PodStatus{UID: pod.UID, Name: pod.Name, Namespace: pod.Namespace, ContainerStatuses: tc.instances}
			got := convertContainerStatuses(pod, rs, tc.previous, containers, tc.isInit, tc.reasons, tc.rro, nil)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("statuses (-v1.35 +got):\n%s", diff)
			}
		})
	}
}

// randomContainerWorld makes a pod, the runtime's view of it, its previous API statuses and the
// reasons of its last sync, from a small universe of names (so that they collide, and now and
// then repeat in the spec, which validation would refuse), states and times.
func randomContainerWorld(r *rand.Rand) (*v1.Pod, *kubecontainer.PodStatus, v1.PodStatus, map[string]Reason) {
	names := []string{"a", "b", "c", "d", "e"}
	pick := func() string { return names[r.IntN(len(names))] }
	image := func() string { return []string{"busybox:1.36", "nginx:1.27", ""}[r.IntN(3)] }
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func() time.Time { return epoch.Add(time.Duration(r.IntN(5)) * time.Second) }
	container := func() v1.Container {
		c := v1.Container{Name: pick(), Image: image()}
		if r.IntN(3) == 0 {
			c.Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse(fmt.Sprintf("%dm", 100*(1+r.IntN(3))))}
		}
		if r.IntN(2) == 0 {
			m := v1.VolumeMount{Name: "v", MountPath: "/v", ReadOnly: r.IntN(2) == 0}
			if r.IntN(2) == 0 {
				m.RecursiveReadOnly = ptrTo([]v1.RecursiveReadOnlyMode{v1.RecursiveReadOnlyDisabled, v1.RecursiveReadOnlyIfPossible, v1.RecursiveReadOnlyEnabled}[r.IntN(3)])
			}
			c.VolumeMounts = append(c.VolumeMounts, m)
		}
		return c
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"}}
	pod.Spec.RestartPolicy = []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}[r.IntN(3)]
	if r.IntN(6) == 0 {
		pod.DeletionTimestamp = &metav1.Time{Time: epoch}
	}
	for range 1 + r.IntN(3) {
		pod.Spec.Containers = append(pod.Spec.Containers, container())
	}
	for range r.IntN(3) {
		c := container()
		if r.IntN(2) == 0 {
			c.RestartPolicy = ptrTo(v1.ContainerRestartPolicyAlways)
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
	}
	rs := &kubecontainer.PodStatus{UID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	for i := range r.IntN(6) {
		cs := kubecontainer.ContainerStatus{ID: fmt.Sprintf("c-%d", i), Name: pick(), Image: image(), CreatedAt: at(), RestartCount: r.IntN(3)}
		switch r.IntN(4) {
		case 0:
			cs.State, cs.StartedAt = kubecontainer.ContainerStateRunning, at()
		case 1:
			cs.State = kubecontainer.ContainerStateCreated
		case 2:
			cs.State, cs.StartedAt, cs.FinishedAt, cs.ExitCode = kubecontainer.ContainerStateExited, at(), at(), r.IntN(2)
			if r.IntN(4) == 0 {
				cs.Reason = "OOMKilled"
			}
		default:
			cs.State = kubecontainer.ContainerStateUnknown
		}
		if r.IntN(3) == 0 {
			cs.Resources = &kubecontainer.ContainerResources{}
		}
		rs.ContainerStatuses = append(rs.ContainerStatuses, cs)
	}
	previous := func() []v1.ContainerStatus {
		var out []v1.ContainerStatus
		for range r.IntN(4) {
			s := v1.ContainerStatus{Name: pick(), Image: image(), RestartCount: int32(r.IntN(3))}
			switch r.IntN(3) {
			case 0:
				s.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(at())}
			case 1:
				s.State.Terminated = &v1.ContainerStateTerminated{ExitCode: int32(r.IntN(2)), Reason: "Error", FinishedAt: metav1.NewTime(at())}
			default:
				s.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
			}
			if r.IntN(2) == 0 {
				s.LastTerminationState.Terminated = &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}
			}
			if r.IntN(2) == 0 {
				s.VolumeMounts = []v1.VolumeMountStatus{{Name: "v", MountPath: "/v"}}
			}
			out = append(out, s)
		}
		return out
	}
	old := v1.PodStatus{ContainerStatuses: previous(), InitContainerStatuses: previous()}
	reasons := map[string]Reason{}
	for range r.IntN(3) {
		reasons[pick()] = Reason{Reason: "CrashLoopBackOff", Message: "back-off " + pick()}
	}
	return pod, rs, old, reasons
}

func ptrTo[T any](v T) *T { return &v }

// TestConvertContainerStatusesLeavesItsInputs: building the statuses of the regular and the
// init containers, over random pods, runtime views, previous statuses and reasons, changes
// neither the previous statuses nor the runtime's view, and gives every container a status.
func TestConvertContainerStatusesLeavesItsInputs(t *testing.T) {
	if raceEnabled {
		t.Skip(pureUnderRace)
	}
	r := rand.New(rand.NewPCG(22, 10))
	for i := range 3000 {
		pod, rs, old, reasons := randomContainerWorld(r)
		keptOld, keptRS := old.DeepCopy(), slices.Clone(rs.ContainerStatuses)
		for _, isInit := range []bool{false, true} {
			containers, previous := pod.Spec.Containers, old.ContainerStatuses
			if isInit {
				containers, previous = pod.Spec.InitContainers, old.InitContainerStatuses
			}
			got := convertContainerStatuses(pod, rs, previous, containers, isInit, reasons, r.IntN(2) == 0, nil)
			for _, c := range containers {
				if !slices.ContainsFunc(got, func(s v1.ContainerStatus) bool { return s.Name == c.Name }) {
					t.Fatalf("case %d (init %v): no status of container %s:\n%+v", i, isInit, c.Name, got)
				}
			}
		}
		if diff := cmp.Diff(keptOld, &old); diff != "" {
			t.Fatalf("case %d: previous statuses changed:\n%s", i, diff)
		}
		if diff := cmp.Diff(keptRS, rs.ContainerStatuses); diff != "" {
			t.Fatalf("case %d: runtime statuses changed:\n%s", i, diff)
		}
	}
}
