package status

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

var sidecarPolicy = v1.ContainerRestartPolicyAlways

func waitingState(name string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}}}
}

func waitingAfter(name string, exitCode int32) v1.ContainerStatus {
	s := waitingState(name)
	s.LastTerminationState.Terminated = &v1.ContainerStateTerminated{ExitCode: exitCode}
	return s
}

func runningState(name string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
}

func startedState(name string) v1.ContainerStatus {
	s := runningState(name)
	started := true
	s.Started = &started
	return s
}

func stoppedState(name string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{}}}
}

func succeededState(name string) v1.ContainerStatus { return stoppedState(name) }

func failedState(name string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: -1}}}
}

type phaseCase struct {
	name     string
	init     []v1.ContainerStatus
	regular  []v1.ContainerStatus
	terminal bool
	// initialized is podHasInitialized; nil derives it from the regular containers' statuses.
	initialized *bool
	want        v1.PodPhase
}

func runPhaseCases(t *testing.T, spec v1.PodSpec, annotations map[string]string, cases []phaseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: spec}
			pod.Annotations = annotations
			info := append(append([]v1.ContainerStatus{}, tc.init...), tc.regular...)
			// Unless a case says otherwise, a regular container that ran means it ran in the
			// current sandbox.
			initialized := anyRegularContainerStarted(&spec, info)
			if tc.initialized != nil {
				initialized = *tc.initialized
			}
			if got := GetPhase(pod, info, tc.terminal, initialized); got != tc.want {
				t.Errorf("GetPhase(%v, terminal=%v) = %s, want %s", info, tc.terminal, got, tc.want)
			}
		})
	}
}

func twoContainers(policy v1.RestartPolicy) v1.PodSpec {
	return v1.PodSpec{
		NodeName:      "machine",
		Containers:    []v1.Container{{Name: "containerA"}, {Name: "containerB"}},
		RestartPolicy: policy,
	}
}

// The cases of the kubelet's TestPodPhaseWithRestartAlways.
func TestGetPhaseRestartAlways(t *testing.T) {
	runPhaseCases(t, twoContainers(v1.RestartPolicyAlways), nil, []phaseCase{
		{name: "waiting", want: v1.PodPending},
		{name: "all running", regular: []v1.ContainerStatus{runningState("containerA"), runningState("containerB")}, want: v1.PodRunning},
		{name: "all stopped with restart always", regular: []v1.ContainerStatus{stoppedState("containerA"), stoppedState("containerB")}, want: v1.PodRunning},
		{name: "all succeeded with restart always but the pod is terminal", regular: []v1.ContainerStatus{succeededState("containerA"), succeededState("containerB")}, terminal: true, want: v1.PodSucceeded},
		{name: "all stopped with restart always but the pod is terminal", regular: []v1.ContainerStatus{succeededState("containerA"), failedState("containerB")}, terminal: true, want: v1.PodFailed},
		{name: "mixed state 1", regular: []v1.ContainerStatus{runningState("containerA"), stoppedState("containerB")}, want: v1.PodRunning},
		{name: "mixed state 2", regular: []v1.ContainerStatus{runningState("containerA")}, want: v1.PodPending},
		{name: "mixed state 3", regular: []v1.ContainerStatus{runningState("containerA"), waitingState("containerB")}, want: v1.PodPending},
		{name: "backoff crashloop container", regular: []v1.ContainerStatus{runningState("containerA"), waitingAfter("containerB", 0)}, want: v1.PodRunning},
	})
}

// A static pod is never forced terminal (kubelet TODO #116484): with restartPolicy Always it keeps
// showing Running after its containers stopped.
func TestGetPhaseStaticPodNotForcedTerminal(t *testing.T) {
	static := map[string]string{kubecontainer.ConfigSourceAnnotationKey: "file"}
	runPhaseCases(t, twoContainers(v1.RestartPolicyAlways), static, []phaseCase{
		{name: "all succeeded terminal", regular: []v1.ContainerStatus{succeededState("containerA"), succeededState("containerB")}, terminal: true, want: v1.PodRunning},
		{name: "one failed terminal", regular: []v1.ContainerStatus{succeededState("containerA"), failedState("containerB")}, terminal: true, want: v1.PodRunning},
	})
	runPhaseCases(t, twoContainers(v1.RestartPolicyNever), static, []phaseCase{
		{name: "never all succeeded terminal", regular: []v1.ContainerStatus{succeededState("containerA"), succeededState("containerB")}, terminal: true, want: v1.PodSucceeded},
	})
}

// The cases of TestPodPhaseWithRestartAlwaysInitContainers.
func TestGetPhaseRestartAlwaysInitContainers(t *testing.T) {
	spec := twoContainers(v1.RestartPolicyAlways)
	spec.InitContainers = []v1.Container{{Name: "containerX"}}
	runPhaseCases(t, spec, nil, []phaseCase{
		{name: "empty waiting", want: v1.PodPending},
		{name: "init container running", init: []v1.ContainerStatus{runningState("containerX")}, want: v1.PodPending},
		{name: "init container terminated non-zero", init: []v1.ContainerStatus{failedState("containerX")}, want: v1.PodPending},
		{name: "init container waiting terminated zero", init: []v1.ContainerStatus{waitingAfter("containerX", 0)}, want: v1.PodPending},
		{name: "init container waiting terminated non-zero", init: []v1.ContainerStatus{waitingAfter("containerX", -1)}, want: v1.PodPending},
		{name: "init container waiting not terminated", init: []v1.ContainerStatus{waitingState("containerX")}, want: v1.PodPending},
		{name: "init container succeeded", init: []v1.ContainerStatus{succeededState("containerX")}, regular: []v1.ContainerStatus{runningState("containerA"), runningState("containerB")}, want: v1.PodRunning},
	})
}

// The cases of TestPodPhaseWithRestartAlwaysRestartableInitContainers.
func TestGetPhaseRestartAlwaysSidecars(t *testing.T) {
	spec := twoContainers(v1.RestartPolicyAlways)
	spec.InitContainers = []v1.Container{{Name: "containerX", RestartPolicy: &sidecarPolicy}}
	both := func(a, b v1.ContainerStatus) []v1.ContainerStatus { return []v1.ContainerStatus{a, b} }
	runPhaseCases(t, spec, nil, []phaseCase{
		{name: "empty waiting", want: v1.PodPending},
		{name: "sidecar running", init: []v1.ContainerStatus{runningState("containerX")}, want: v1.PodPending},
		{name: "sidecar stopped", init: []v1.ContainerStatus{stoppedState("containerX")}, want: v1.PodPending},
		{name: "sidecar waiting terminated zero", init: []v1.ContainerStatus{waitingAfter("containerX", 0)}, want: v1.PodPending},
		{name: "sidecar waiting terminated non-zero", init: []v1.ContainerStatus{waitingAfter("containerX", -1)}, want: v1.PodPending},
		{name: "sidecar waiting not terminated", init: []v1.ContainerStatus{waitingState("containerX")}, want: v1.PodPending},
		{name: "sidecar started one regular running", init: []v1.ContainerStatus{startedState("containerX")}, regular: []v1.ContainerStatus{runningState("containerA")}, want: v1.PodPending},
		{name: "sidecar started all regular running", init: []v1.ContainerStatus{startedState("containerX")}, regular: both(runningState("containerA"), runningState("containerB")), want: v1.PodRunning},
		{name: "sidecar running all regular running", init: []v1.ContainerStatus{runningState("containerX")}, regular: both(runningState("containerA"), runningState("containerB")), want: v1.PodRunning},
		{name: "sidecar stopped all regular running", init: []v1.ContainerStatus{stoppedState("containerX")}, regular: both(runningState("containerA"), runningState("containerB")), want: v1.PodRunning},
		{name: "backoff sidecar all regular running", init: []v1.ContainerStatus{waitingAfter("containerX", 0)}, regular: both(runningState("containerA"), runningState("containerB")), want: v1.PodRunning},
		{name: "regular succeeded sidecar failed terminal", init: []v1.ContainerStatus{failedState("containerX")}, regular: both(succeededState("containerA"), succeededState("containerB")), terminal: true, want: v1.PodSucceeded},
		{name: "regular succeeded sidecar succeeded terminal", init: []v1.ContainerStatus{succeededState("containerX")}, regular: both(succeededState("containerA"), succeededState("containerB")), terminal: true, want: v1.PodSucceeded},
	})
}

// The cases of TestPodPhaseWithRestartAlwaysAndPodHasRun.
func TestGetPhaseRestartAlwaysPodHasRun(t *testing.T) {
	spec := v1.PodSpec{
		NodeName:       "machine",
		InitContainers: []v1.Container{{Name: "containerX"}, {Name: "containerY", RestartPolicy: &sidecarPolicy}},
		Containers:     []v1.Container{{Name: "containerA"}},
		RestartPolicy:  v1.RestartPolicyAlways,
	}
	runPhaseCases(t, spec, nil, []phaseCase{
		{name: "init sidecar and regular all running", init: []v1.ContainerStatus{runningState("containerX"), runningState("containerY")}, regular: []v1.ContainerStatus{runningState("containerA")}, want: v1.PodPending},
		{name: "regular stopped init and sidecar running", init: []v1.ContainerStatus{runningState("containerX"), runningState("containerY")}, regular: []v1.ContainerStatus{stoppedState("containerA")}, want: v1.PodPending},
		{name: "init succeeded sidecar running regular stopped", init: []v1.ContainerStatus{succeededState("containerX"), runningState("containerY")}, regular: []v1.ContainerStatus{stoppedState("containerA")}, want: v1.PodRunning},
		{name: "init succeeded sidecar and regular running", init: []v1.ContainerStatus{succeededState("containerX"), runningState("containerY")}, regular: []v1.ContainerStatus{runningState("containerA")}, want: v1.PodRunning},
	})
}

// The cases of TestPodPhaseWithRestartNever.
func TestGetPhaseRestartNever(t *testing.T) {
	runPhaseCases(t, twoContainers(v1.RestartPolicyNever), nil, []phaseCase{
		{name: "waiting", want: v1.PodPending},
		{name: "all running", regular: []v1.ContainerStatus{runningState("containerA"), runningState("containerB")}, want: v1.PodRunning},
		{name: "all succeeded", regular: []v1.ContainerStatus{succeededState("containerA"), succeededState("containerB")}, want: v1.PodSucceeded},
		{name: "all failed", regular: []v1.ContainerStatus{failedState("containerA"), failedState("containerB")}, want: v1.PodFailed},
		{name: "mixed state 1", regular: []v1.ContainerStatus{runningState("containerA"), succeededState("containerB")}, want: v1.PodRunning},
		{name: "mixed state 2", regular: []v1.ContainerStatus{runningState("containerA")}, want: v1.PodPending},
		{name: "mixed state 3", regular: []v1.ContainerStatus{runningState("containerA"), waitingState("containerB")}, want: v1.PodPending},
	})
}

// The cases of TestPodPhaseWithRestartNeverInitContainers.
func TestGetPhaseRestartNeverInitContainers(t *testing.T) {
	spec := twoContainers(v1.RestartPolicyNever)
	spec.InitContainers = []v1.Container{{Name: "containerX"}}
	runPhaseCases(t, spec, nil, []phaseCase{
		{name: "empty waiting", want: v1.PodPending},
		{name: "init container running", init: []v1.ContainerStatus{runningState("containerX")}, want: v1.PodPending},
		{name: "init container terminated non-zero", init: []v1.ContainerStatus{failedState("containerX")}, want: v1.PodFailed},
		{name: "init container waiting terminated zero", init: []v1.ContainerStatus{waitingAfter("containerX", 0)}, want: v1.PodPending},
		{name: "init container waiting terminated non-zero", init: []v1.ContainerStatus{waitingAfter("containerX", -1)}, want: v1.PodFailed},
		{name: "init container waiting not terminated", init: []v1.ContainerStatus{waitingState("containerX")}, want: v1.PodPending},
		{name: "init container succeeded", init: []v1.ContainerStatus{succeededState("containerX")}, regular: []v1.ContainerStatus{runningState("containerA"), runningState("containerB")}, want: v1.PodRunning},
	})
}

// The cases of TestPodPhaseWithRestartNeverRestartableInitContainers.
func TestGetPhaseRestartNeverSidecars(t *testing.T) {
	spec := twoContainers(v1.RestartPolicyNever)
	spec.InitContainers = []v1.Container{{Name: "containerX", RestartPolicy: &sidecarPolicy}}
	succeededAB := []v1.ContainerStatus{succeededState("containerA"), succeededState("containerB")}
	runPhaseCases(t, spec, nil, []phaseCase{
		{name: "empty waiting", want: v1.PodPending},
		{name: "sidecar running", init: []v1.ContainerStatus{runningState("containerX")}, want: v1.PodPending},
		{name: "sidecar stopped", init: []v1.ContainerStatus{stoppedState("containerX")}, want: v1.PodPending},
		{name: "sidecar waiting terminated zero", init: []v1.ContainerStatus{waitingAfter("containerX", 0)}, want: v1.PodPending},
		{name: "sidecar waiting terminated non-zero", init: []v1.ContainerStatus{waitingAfter("containerX", -1)}, want: v1.PodPending},
		{name: "sidecar waiting not terminated", init: []v1.ContainerStatus{waitingState("containerX")}, want: v1.PodPending},
		{name: "sidecar started one main running", init: []v1.ContainerStatus{startedState("containerX")}, regular: []v1.ContainerStatus{runningState("containerA")}, want: v1.PodPending},
		{name: "sidecar started main succeeded", init: []v1.ContainerStatus{startedState("containerX")}, regular: succeededAB, want: v1.PodRunning},
		{name: "sidecar running main succeeded", init: []v1.ContainerStatus{runningState("containerX")}, regular: succeededAB, want: v1.PodRunning},
		{name: "all succeeded", init: []v1.ContainerStatus{succeededState("containerX")}, regular: succeededAB, want: v1.PodSucceeded},
		{name: "sidecar failed main succeeded", init: []v1.ContainerStatus{failedState("containerX")}, regular: succeededAB, want: v1.PodSucceeded},
		{name: "backoff sidecar main succeeded", init: []v1.ContainerStatus{waitingAfter("containerX", 0)}, regular: succeededAB, want: v1.PodSucceeded},
		{name: "backoff non-zero sidecar main succeeded", init: []v1.ContainerStatus{waitingAfter("containerX", -1)}, regular: succeededAB, want: v1.PodSucceeded},
	})
}

// The cases of TestPodPhaseWithRestartOnFailure.
func TestGetPhaseRestartOnFailure(t *testing.T) {
	runPhaseCases(t, twoContainers(v1.RestartPolicyOnFailure), nil, []phaseCase{
		{name: "waiting", want: v1.PodPending},
		{name: "all running", regular: []v1.ContainerStatus{runningState("containerA"), runningState("containerB")}, want: v1.PodRunning},
		{name: "all succeeded", regular: []v1.ContainerStatus{succeededState("containerA"), succeededState("containerB")}, want: v1.PodSucceeded},
		{name: "all failed", regular: []v1.ContainerStatus{failedState("containerA"), failedState("containerB")}, want: v1.PodRunning},
		{name: "mixed state 1", regular: []v1.ContainerStatus{runningState("containerA"), succeededState("containerB")}, want: v1.PodRunning},
		{name: "mixed state 2", regular: []v1.ContainerStatus{runningState("containerA")}, want: v1.PodPending},
		{name: "mixed state 3", regular: []v1.ContainerStatus{runningState("containerA"), waitingState("containerB")}, want: v1.PodPending},
		{name: "backoff crashloop container", regular: []v1.ContainerStatus{runningState("containerA"), waitingAfter("containerB", 0)}, want: v1.PodRunning},
		{name: "all failed but the pod is terminal", regular: []v1.ContainerStatus{failedState("containerA"), failedState("containerB")}, terminal: true, want: v1.PodFailed},
	})
}

// Sidecar exit codes never count, and a container's own restartPolicy comes before the pod's
// (ContainerRestartRules, on in v1.35).
func TestGetPhaseSidecarsAndContainerPolicy(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	never := v1.RestartPolicyNever
	spec := v1.PodSpec{
		RestartPolicy:  never,
		InitContainers: []v1.Container{{Name: "s", RestartPolicy: &sidecarPolicy}},
		Containers:     []v1.Container{{Name: "app"}, {Name: "keep", RestartPolicy: &always}},
	}
	sigterm := v1.ContainerStatus{Name: "s", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 143}}}
	no := false
	runPhaseCases(t, spec, nil, []phaseCase{
		{name: "sidecar killed, app succeeded, keep restarting", init: []v1.ContainerStatus{sigterm}, regular: []v1.ContainerStatus{succeededState("app"), failedState("keep")}, want: v1.PodRunning},
		{name: "sidecar killed, both done, terminal", init: []v1.ContainerStatus{sigterm}, regular: []v1.ContainerStatus{succeededState("app"), succeededState("keep")}, terminal: true, want: v1.PodSucceeded},
		{name: "restarting sidecar after init keeps Running", init: []v1.ContainerStatus{runningState("s")}, regular: []v1.ContainerStatus{runningState("app"), runningState("keep")}, want: v1.PodRunning},
		{name: "unstarted sidecar in a new sandbox is Pending", init: []v1.ContainerStatus{runningState("s")}, regular: []v1.ContainerStatus{runningState("app"), runningState("keep")}, initialized: &no, want: v1.PodPending},
	})
}
