package status

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

var (
	t0 = vclock.Epoch
	t1 = t0.Add(5 * time.Second)
	t2 = t0.Add(20 * time.Second)
)

func mt(t time.Time) metav1.Time { return metav1.NewTime(t) }

func boolp(b bool) *bool { return &b }

func newPod(policy v1.RestartPolicy, containers ...string) *v1.Pod {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web", Generation: 1},
		Spec:       v1.PodSpec{NodeName: "node-1", RestartPolicy: policy},
		Status:     v1.PodStatus{Phase: v1.PodPending},
	}
	for _, c := range containers {
		pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: c, Image: c + ":1"})
	}
	return pod
}

func readySandbox() []kubecontainer.SandboxStatus {
	return []kubecontainer.SandboxStatus{{ID: "sb1", State: kubecontainer.SandboxReady, CreatedAt: t0}}
}

func cond(t v1.PodConditionType, s v1.ConditionStatus, reason, msg string, ltt time.Time) v1.PodCondition {
	return v1.PodCondition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: 1, LastTransitionTime: mt(ltt)}
}

func TestGeneratePodStatusNewPod(t *testing.T) {
	pod := newPod(v1.RestartPolicyAlways, "app")
	got := GeneratePodStatus(pod, pod.Status, &kubecontainer.PodStatus{}, false, t0, GenerateOptions{HostIP: "192.168.0.10"})
	notReady := "containers with unready status: [app]"
	want := v1.PodStatus{
		Phase: v1.PodPending,
		Conditions: []v1.PodCondition{
			cond(v1.PodReadyToStartContainers, v1.ConditionFalse, "", "", t0),
			cond(v1.PodInitialized, v1.ConditionTrue, "", "", t0),
			cond(v1.PodReady, v1.ConditionFalse, reasonContainersNotReady, notReady, t0),
			cond(v1.ContainersReady, v1.ConditionFalse, reasonContainersNotReady, notReady, t0),
			cond(v1.PodScheduled, v1.ConditionTrue, "", "", t0),
		},
		HostIP:    "192.168.0.10",
		HostIPs:   []v1.HostIP{{IP: "192.168.0.10"}},
		StartTime: &metav1.Time{Time: t0},
		QOSClass:  v1.PodQOSBestEffort,
		ContainerStatuses: []v1.ContainerStatus{{
			Name:    "app",
			Image:   "app:1",
			State:   v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reasonContainerCreating}},
			Started: boolp(false),
		}},
		InitContainerStatuses: []v1.ContainerStatus{},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GeneratePodStatus(new pod) mismatch (-want +got):\n%s", diff)
	}
}

func TestGeneratePodStatusRunning(t *testing.T) {
	pod := newPod(v1.RestartPolicyAlways, "app")
	rs := &kubecontainer.PodStatus{
		Sandboxes: readySandbox(),
		IPs:       []string{"10.0.0.7"},
		ContainerStatuses: []kubecontainer.ContainerStatus{{
			ID: "c2", Name: "app", Image: "app:1", ImageRef: "fake://app:1", State: kubecontainer.ContainerStateRunning,
			CreatedAt: t1, StartedAt: t1, RestartCount: 1,
		}, {
			ID: "c1", Name: "app", Image: "app:1", ImageRef: "fake://app:1", State: kubecontainer.ContainerStateExited,
			CreatedAt: t0, StartedAt: t0, FinishedAt: t1, ExitCode: 2,
		}},
	}
	old := pod.Status
	old.StartTime = &metav1.Time{Time: t0}
	got := GeneratePodStatus(pod, old, rs, false, t2, GenerateOptions{})
	want := []v1.ContainerStatus{{
		Name:         "app",
		Image:        "app:1",
		ImageID:      "fake://app:1",
		ContainerID:  "fake://c2",
		RestartCount: 1,
		Ready:        true,
		Started:      boolp(true),
		State:        v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: mt(t1)}},
		LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			ExitCode: 2, Reason: reasonError, StartedAt: mt(t0), FinishedAt: mt(t1), ContainerID: "fake://c1",
		}},
		Resources: &v1.ResourceRequirements{},
	}}
	if diff := cmp.Diff(want, got.ContainerStatuses); diff != "" {
		t.Errorf("GeneratePodStatus(running).ContainerStatuses mismatch (-want +got):\n%s", diff)
	}
	if got.Phase != v1.PodRunning {
		t.Errorf("GeneratePodStatus(running).Phase = %s, want Running", got.Phase)
	}
	if got.PodIP != "10.0.0.7" || len(got.PodIPs) != 1 {
		t.Errorf("GeneratePodStatus(running) podIP = %q %v, want 10.0.0.7", got.PodIP, got.PodIPs)
	}
	if !got.StartTime.Time.Equal(t0) {
		t.Errorf("GeneratePodStatus(running).StartTime = %v, want %v (kept from old)", got.StartTime, t0)
	}
	for _, c := range got.Conditions {
		if c.Status != v1.ConditionTrue {
			t.Errorf("GeneratePodStatus(running) condition %s = %s, want True", c.Type, c.Status)
		}
	}
}

// A container that is not running and would be restarted shows the reason of its last failed start.
func TestGeneratePodStatusWaitingReasons(t *testing.T) {
	exited := kubecontainer.ContainerStatus{
		ID: "c1", Name: "app", Image: "app:1", ImageRef: "fake://app:1", State: kubecontainer.ContainerStateExited,
		CreatedAt: t0, StartedAt: t0, FinishedAt: t1, ExitCode: 1, RestartCount: 3,
	}
	backoff := &kubecontainer.BackoffError{
		Err:    fmt.Errorf("%w: back-off 40s restarting failed container=app pod=web_default", kubecontainer.ErrCrashLoopBackOff),
		Expiry: t2,
	}
	tests := []struct {
		name        string
		policy      v1.RestartPolicy
		instances   []kubecontainer.ContainerStatus
		reasons     map[string]Reason
		wantState   v1.ContainerState
		wantLast    *v1.ContainerStateTerminated
		wantRestart int32
		wantPhase   v1.PodPhase
	}{{
		name:      "crash loop back-off",
		policy:    v1.RestartPolicyAlways,
		instances: []kubecontainer.ContainerStatus{exited},
		reasons:   map[string]Reason{"app": ReasonFromError(backoff)},
		wantState: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{
			Reason: "CrashLoopBackOff", Message: "CrashLoopBackOff: back-off 40s restarting failed container=app pod=web_default",
		}},
		wantLast: &v1.ContainerStateTerminated{
			ExitCode: 1, Reason: reasonError, StartedAt: mt(t0), FinishedAt: mt(t1), ContainerID: "fake://c1",
		},
		wantRestart: 3,
		wantPhase:   v1.PodRunning,
	}, {
		name:    "image pull error before the first start",
		policy:  v1.RestartPolicyAlways,
		reasons: map[string]Reason{"app": {Reason: "ErrImagePull", Message: "pull access denied for app:1"}},
		wantState: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{
			Reason: "ErrImagePull", Message: "pull access denied for app:1",
		}},
		wantPhase: v1.PodPending,
	}, {
		name:    "image pull back-off",
		policy:  v1.RestartPolicyAlways,
		reasons: map[string]Reason{"app": ReasonFromError(&kubecontainer.BackoffError{Err: kubecontainer.ErrImagePullBackOff})},
		wantState: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{
			Reason: "ImagePullBackOff", Message: "ImagePullBackOff",
		}},
		wantPhase: v1.PodPending,
	}, {
		name:      "no reason keeps the terminated state",
		policy:    v1.RestartPolicyAlways,
		instances: []kubecontainer.ContainerStatus{exited},
		wantState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			ExitCode: 1, Reason: reasonError, StartedAt: mt(t0), FinishedAt: mt(t1), ContainerID: "fake://c1",
		}},
		wantRestart: 3,
		wantPhase:   v1.PodRunning,
	}, {
		name:      "never restarted under Never so the reason is ignored",
		policy:    v1.RestartPolicyNever,
		instances: []kubecontainer.ContainerStatus{exited},
		reasons:   map[string]Reason{"app": {Reason: "CrashLoopBackOff"}},
		wantState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			ExitCode: 1, Reason: reasonError, StartedAt: mt(t0), FinishedAt: mt(t1), ContainerID: "fake://c1",
		}},
		wantRestart: 3,
		wantPhase:   v1.PodFailed,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPod(tc.policy, "app")
			rs := &kubecontainer.PodStatus{Sandboxes: readySandbox(), ContainerStatuses: tc.instances}
			got := GeneratePodStatus(pod, pod.Status, rs, false, t2, GenerateOptions{Reasons: tc.reasons})
			cs := got.ContainerStatuses[0]
			if diff := cmp.Diff(tc.wantState, cs.State); diff != "" {
				t.Errorf("State mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLast, cs.LastTerminationState.Terminated); diff != "" {
				t.Errorf("LastTerminationState mismatch (-want +got):\n%s", diff)
			}
			if cs.RestartCount != tc.wantRestart {
				t.Errorf("RestartCount = %d, want %d", cs.RestartCount, tc.wantRestart)
			}
			if got.Phase != tc.wantPhase {
				t.Errorf("Phase = %s, want %s", got.Phase, tc.wantPhase)
			}
		})
	}
}

func TestGeneratePodStatusCompleted(t *testing.T) {
	pod := newPod(v1.RestartPolicyNever, "job")
	rs := &kubecontainer.PodStatus{Sandboxes: readySandbox(), ContainerStatuses: []kubecontainer.ContainerStatus{{
		ID: "c1", Name: "job", Image: "job:1", ImageRef: "fake://job:1", State: kubecontainer.ContainerStateExited,
		CreatedAt: t0, StartedAt: t0, FinishedAt: t1,
	}}}
	got := GeneratePodStatus(pod, pod.Status, rs, false, t1, GenerateOptions{})
	if got.Phase != v1.PodSucceeded {
		t.Errorf("Phase = %s, want Succeeded", got.Phase)
	}
	if term := got.ContainerStatuses[0].State.Terminated; term == nil || term.Reason != reasonCompleted {
		t.Errorf("State = %+v, want Terminated Completed", got.ContainerStatuses[0].State)
	}
	wantConds := []v1.PodCondition{
		cond(v1.PodReadyToStartContainers, v1.ConditionTrue, "", "", t1),
		cond(v1.PodInitialized, v1.ConditionTrue, reasonPodCompleted, "", t1),
		cond(v1.PodReady, v1.ConditionFalse, reasonPodCompleted, "", t1),
		cond(v1.ContainersReady, v1.ConditionFalse, reasonPodCompleted, "", t1),
		cond(v1.PodScheduled, v1.ConditionTrue, "", "", t1),
	}
	if diff := cmp.Diff(wantConds, got.Conditions); diff != "" {
		t.Errorf("Conditions mismatch (-want +got):\n%s", diff)
	}
}

// Ported from the kubelet's Test_generateAPIPodStatus: a terminal phase is sticky, reason and
// message stay while the phase does, and a running pod may go back to Pending.
func TestGeneratePodStatusPhaseStickiness(t *testing.T) {
	running := kubecontainer.ContainerStatus{ID: "c1", Name: "a", State: kubecontainer.ContainerStateRunning, CreatedAt: t0, StartedAt: t0}
	tests := []struct {
		name        string
		apiPhase    v1.PodPhase
		old         v1.PodStatus
		instances   []kubecontainer.ContainerStatus
		terminal    bool
		wantPhase   v1.PodPhase
		wantReason  string
		wantMessage string
	}{{
		name:      "terminal phase cannot be changed when the API shows it",
		apiPhase:  v1.PodSucceeded,
		old:       v1.PodStatus{Phase: v1.PodRunning},
		instances: []kubecontainer.ContainerStatus{running},
		wantPhase: v1.PodSucceeded,
	}, {
		name:        "terminal phase from the cached status stays with its reason",
		apiPhase:    v1.PodRunning,
		old:         v1.PodStatus{Phase: v1.PodFailed, Reason: "Test", Message: "test"},
		wantPhase:   v1.PodFailed,
		wantReason:  "Test",
		wantMessage: "test",
	}, {
		name:      "running can revert to pending",
		apiPhase:  v1.PodRunning,
		old:       v1.PodStatus{Phase: v1.PodRunning},
		wantPhase: v1.PodPending,
	}, {
		name:        "reason and message are kept when the phase does not change",
		apiPhase:    v1.PodPending,
		old:         v1.PodStatus{Phase: v1.PodPending, Reason: "Test", Message: "test"},
		wantPhase:   v1.PodPending,
		wantReason:  "Test",
		wantMessage: "test",
	}, {
		name:      "reason and message are cleared when the phase changes",
		apiPhase:  v1.PodPending,
		old:       v1.PodStatus{Phase: v1.PodPending, Reason: "Test", Message: "test"},
		instances: []kubecontainer.ContainerStatus{running},
		wantPhase: v1.PodRunning,
	}, {
		name:      "pod is terminal and its containers are gone",
		apiPhase:  v1.PodRunning,
		old:       v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{runningState("a")}},
		terminal:  true,
		wantPhase: v1.PodFailed,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPod(v1.RestartPolicyAlways, "a")
			pod.Status.Phase = tc.apiPhase
			rs := &kubecontainer.PodStatus{Sandboxes: readySandbox(), ContainerStatuses: tc.instances}
			got := GeneratePodStatus(pod, tc.old, rs, tc.terminal, t1, GenerateOptions{})
			if got.Phase != tc.wantPhase || got.Reason != tc.wantReason || got.Message != tc.wantMessage {
				t.Errorf("GeneratePodStatus() phase, reason, message = %s, %q, %q, want %s, %q, %q",
					got.Phase, got.Reason, got.Message, tc.wantPhase, tc.wantReason, tc.wantMessage)
			}
		})
	}
}

// Ported from TestConvertToAPIContainerStatuses: a container that was running and vanished from
// the runtime waits with an unknown last termination, and counts a restart unless the pod is
// being deleted.
func TestGeneratePodStatusVanishedContainer(t *testing.T) {
	for _, deleting := range []bool{false, true} {
		t.Run(fmt.Sprintf("deleting=%v", deleting), func(t *testing.T) {
			pod := newPod(v1.RestartPolicyAlways, "a")
			if deleting {
				ts := mt(t0)
				pod.DeletionTimestamp = &ts
			}
			old := v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{runningState("a")}}
			got := GeneratePodStatus(pod, old, &kubecontainer.PodStatus{}, false, t1, GenerateOptions{})
			cs := got.ContainerStatuses[0]
			wantRestarts := int32(1)
			if deleting {
				wantRestarts = 0
			}
			last := cs.LastTerminationState.Terminated
			if cs.State.Waiting == nil || last == nil || last.Reason != reasonStatusUnknown || last.ExitCode != 137 || cs.RestartCount != wantRestarts {
				t.Errorf("container status = %+v, want waiting, last terminated ContainerStatusUnknown 137, %d restarts", cs, wantRestarts)
			}
			if got.Phase != v1.PodRunning {
				t.Errorf("Phase = %s, want Running", got.Phase)
			}
		})
	}
}

func TestGeneratePodStatusInitContainers(t *testing.T) {
	pod := newPod(v1.RestartPolicyAlways, "app")
	pod.Spec.InitContainers = []v1.Container{{Name: "setup", Image: "setup:1"}}
	rs := &kubecontainer.PodStatus{Sandboxes: readySandbox(), ContainerStatuses: []kubecontainer.ContainerStatus{{
		ID: "i1", Name: "setup", Image: "setup:1", ImageRef: "fake://setup:1", State: kubecontainer.ContainerStateRunning, CreatedAt: t0, StartedAt: t0,
	}}}
	got := GeneratePodStatus(pod, pod.Status, rs, false, t1, GenerateOptions{})
	if w := got.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != reasonPodInitializing {
		t.Errorf("app state = %+v, want Waiting PodInitializing", got.ContainerStatuses[0].State)
	}
	if got.InitContainerStatuses[0].State.Running == nil {
		t.Errorf("setup state = %+v, want Running", got.InitContainerStatuses[0].State)
	}
	_, c := findCondition(got.Conditions, v1.PodInitialized)
	want := cond(v1.PodInitialized, v1.ConditionFalse, reasonContainersNotInitialized, "containers with incomplete status: [setup]", t1)
	if diff := cmp.Diff(&want, c); diff != "" {
		t.Errorf("Initialized condition mismatch (-want +got):\n%s", diff)
	}

	// The init container completes: the pod initializes and the init container is ready.
	rs.ContainerStatuses[0].State = kubecontainer.ContainerStateExited
	rs.ContainerStatuses[0].FinishedAt = t1
	got2 := GeneratePodStatus(pod, got, rs, false, t2, GenerateOptions{})
	if !got2.InitContainerStatuses[0].Ready {
		t.Errorf("setup Ready = false after exit 0, want true")
	}
	_, c = findCondition(got2.Conditions, v1.PodInitialized)
	if c.Status != v1.ConditionTrue || !c.LastTransitionTime.Time.Equal(t2) {
		t.Errorf("Initialized = %s at %v, want True at %v", c.Status, c.LastTransitionTime, t2)
	}
	_, s := findCondition(got2.Conditions, v1.PodScheduled)
	if !s.LastTransitionTime.Time.Equal(t1) {
		t.Errorf("PodScheduled transition = %v, want %v (unchanged status keeps its time)", s.LastTransitionTime, t1)
	}
}

func TestGeneratePodStatusActiveDeadline(t *testing.T) {
	pod := newPod(v1.RestartPolicyAlways, "a")
	deadline := int64(30)
	pod.Spec.ActiveDeadlineSeconds = &deadline
	old := v1.PodStatus{Phase: v1.PodRunning, StartTime: &metav1.Time{Time: t0}}
	rs := &kubecontainer.PodStatus{Sandboxes: readySandbox(), ContainerStatuses: []kubecontainer.ContainerStatus{{
		ID: "c1", Name: "a", State: kubecontainer.ContainerStateRunning, CreatedAt: t0, StartedAt: t0,
	}}}
	if got := GeneratePodStatus(pod, old, rs, false, t2, GenerateOptions{}); got.Phase != v1.PodRunning {
		t.Errorf("Phase before the deadline = %s, want Running", got.Phase)
	}
	got := GeneratePodStatus(pod, old, rs, false, t0.Add(30*time.Second), GenerateOptions{})
	if got.Phase != v1.PodFailed || got.Reason != ReasonDeadlineExceeded || got.Message != MessageDeadlineExceeded {
		t.Errorf("after the deadline = %s %q %q, want Failed %q", got.Phase, got.Reason, got.Message, ReasonDeadlineExceeded)
	}
}

func TestGeneratePodStatusHostNetwork(t *testing.T) {
	pod := newPod(v1.RestartPolicyAlways, "a")
	pod.Spec.HostNetwork = true
	got := GeneratePodStatus(pod, pod.Status, &kubecontainer.PodStatus{Sandboxes: readySandbox()}, false, t0, GenerateOptions{HostIP: "192.168.0.10"})
	if got.PodIP != "192.168.0.10" {
		t.Errorf("PodIP = %q, want the host IP", got.PodIP)
	}
	pod.Spec.HostNetwork = false
	got = GeneratePodStatus(pod, pod.Status, &kubecontainer.PodStatus{Sandboxes: readySandbox(), IPs: []string{"10.88.1.2"}}, false, t0, GenerateOptions{})
	if got.PodIP != "10.88.1.2" || len(got.PodIPs) != 1 {
		t.Errorf("PodIP = %q %v, want the sandbox's 10.88.1.2", got.PodIP, got.PodIPs)
	}
	// Without a ready sandbox the runtime reports no IP, and the last one shown stays.
	got = GeneratePodStatus(pod, got, &kubecontainer.PodStatus{}, false, t0, GenerateOptions{})
	if got.PodIP != "10.88.1.2" {
		t.Errorf("PodIP after the sandbox went = %q, want the last one, 10.88.1.2", got.PodIP)
	}
}

// TestGeneratePodStatusResources checks the v1.35 container resources: a container the runtime
// knows reports its requests and limits as resources (empty, `resources: {}`, when it has none),
// and its requests as allocatedResources; a container not yet created reports neither.
func TestGeneratePodStatusResources(t *testing.T) {
	pod := newPod(v1.RestartPolicyAlways, "app", "plain", "later")
	pod.Spec.InitContainers = []v1.Container{{Name: "setup", Image: "setup:1", Resources: v1.ResourceRequirements{
		Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}}}
	res := v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("64Mi")},
		Limits:   v1.ResourceList{v1.ResourceMemory: resource.MustParse("128Mi")},
	}
	pod.Spec.Containers[0].Resources = res
	pod.Spec.Containers[2].Resources = res
	rs := &kubecontainer.PodStatus{Sandboxes: readySandbox(), ContainerStatuses: []kubecontainer.ContainerStatus{
		{ID: "i1", Name: "setup", Image: "setup:1", ImageRef: "fake://setup:1", State: kubecontainer.ContainerStateExited, CreatedAt: t0, StartedAt: t0, FinishedAt: t0},
		{ID: "c1", Name: "app", Image: "app:1", ImageRef: "fake://app:1", State: kubecontainer.ContainerStateRunning, CreatedAt: t0, StartedAt: t0},
		{ID: "c2", Name: "plain", Image: "plain:1", ImageRef: "fake://plain:1", State: kubecontainer.ContainerStateRunning, CreatedAt: t0, StartedAt: t0},
	}}
	got := GeneratePodStatus(pod, pod.Status, rs, false, t1, GenerateOptions{})
	type pair struct {
		Resources *v1.ResourceRequirements
		Allocated v1.ResourceList
	}
	gotPairs := map[string]pair{}
	for _, s := range append(append([]v1.ContainerStatus{}, got.InitContainerStatuses...), got.ContainerStatuses...) {
		gotPairs[s.Name] = pair{s.Resources, s.AllocatedResources}
	}
	want := map[string]pair{
		"setup": {Resources: &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}},
		"app":   {Resources: &res, Allocated: res.Requests},
		"plain": {Resources: &v1.ResourceRequirements{}},
		"later": {},
	}
	if diff := cmp.Diff(want, gotPairs); diff != "" {
		t.Errorf("container resources (-want +got):\n%s", diff)
	}
	// What the API server stores and kubectl shows for the container without any.
	for _, cs := range got.ContainerStatuses {
		if cs.Name != "plain" {
			continue
		}
		b, err := json.Marshal(cs)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"resources":{}`) || strings.Contains(string(b), "allocatedResources") {
			t.Errorf("status of plain = %s, want resources {} and no allocatedResources", b)
		}
	}
}

// TestReadyConditionsComputedOnce checks that the Ready and ContainersReady conditions
// GeneratePodStatus sets from one ContainersReady computation are what computing each on its own,
// as the kubelet does, gives: unready and unknown containers, readiness gates met, unmet and
// missing, sidecars, and terminal phases.
func TestReadyConditionsComputedOnce(t *testing.T) {
	running := func(names ...string) *kubecontainer.PodStatus {
		rs := &kubecontainer.PodStatus{Sandboxes: readySandbox()}
		for i, n := range names {
			rs.ContainerStatuses = append(rs.ContainerStatuses, kubecontainer.ContainerStatus{
				ID: fmt.Sprintf("c%d", i), Name: n, State: kubecontainer.ContainerStateRunning, CreatedAt: t0, StartedAt: t0})
		}
		return rs
	}
	gated := func(pod *v1.Pod, status v1.ConditionStatus) *v1.Pod {
		pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "example.com/gate"}, {ConditionType: "example.com/other"}}
		if status != "" {
			pod.Status.Conditions = []v1.PodCondition{{Type: "example.com/gate", Status: status}}
		}
		return pod
	}
	withSidecar := func(pod *v1.Pod) *v1.Pod {
		always := v1.ContainerRestartPolicyAlways
		pod.Spec.InitContainers = []v1.Container{{Name: "proxy", Image: "proxy:1", RestartPolicy: &always}}
		return pod
	}
	for _, tc := range []struct {
		name     string
		pod      *v1.Pod
		rs       *kubecontainer.PodStatus
		terminal bool
	}{
		{"new pod", newPod(v1.RestartPolicyAlways, "app", "log"), &kubecontainer.PodStatus{}, false},
		{"running, no probes", newPod(v1.RestartPolicyAlways, "app", "log"), running("app", "log"), false},
		{"one of two running", newPod(v1.RestartPolicyAlways, "app", "log"), running("log"), false},
		{"gates missing", gated(newPod(v1.RestartPolicyAlways, "app"), ""), running("app"), false},
		{"gate false", gated(newPod(v1.RestartPolicyAlways, "app"), v1.ConditionFalse), running("app"), false},
		{"gate true", gated(newPod(v1.RestartPolicyAlways, "app"), v1.ConditionTrue), running("app"), false},
		{"sidecar not started", withSidecar(newPod(v1.RestartPolicyAlways, "app")), running("app"), false},
		{"terminal", newPod(v1.RestartPolicyNever, "app"), &kubecontainer.PodStatus{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := GeneratePodStatus(tc.pod, tc.pod.Status, tc.rs, tc.terminal, t1, GenerateOptions{})
			all := joinStatuses(s.InitContainerStatuses, s.ContainerStatuses)
			// The conditions before Ready, as GeneratePodStatus had them when it computed Ready.
			i, _ := findCondition(s.Conditions, v1.PodReady)
			if i < 0 {
				t.Fatalf("no Ready condition in %v", s.Conditions)
			}
			ready := readyCondition(tc.pod, s.Conditions[:i], all, s.Phase)
			containersReady := containersReadyCondition(tc.pod, all, s.Phase)
			for _, want := range []v1.PodCondition{ready, containersReady} {
				_, got := findCondition(s.Conditions, want.Type)
				if got == nil {
					t.Fatalf("no %s condition in %v", want.Type, s.Conditions)
				}
				want.LastTransitionTime = got.LastTransitionTime
				if diff := cmp.Diff(want, *got); diff != "" {
					t.Errorf("%s (-computed alone +generated):\n%s", want.Type, diff)
				}
			}
		})
	}
}
