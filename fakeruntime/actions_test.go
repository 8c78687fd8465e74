package fakeruntime

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

func TestComputePodActions(t *testing.T) {
	ready := []kubecontainer.SandboxStatus{{ID: "s2", State: kubecontainer.SandboxReady, Attempt: 1}}
	dead := []kubecontainer.SandboxStatus{{ID: "s1", State: kubecontainer.SandboxNotReady}}
	running := func(name string) kubecontainer.ContainerStatus {
		return kubecontainer.ContainerStatus{Name: name, State: kubecontainer.ContainerStateRunning}
	}
	exited := func(name string, code int) kubecontainer.ContainerStatus {
		return kubecontainer.ContainerStatus{Name: name, State: kubecontainer.ContainerStateExited, ExitCode: code}
	}
	tests := []struct {
		name   string
		pod    *v1.Pod
		sbx    []kubecontainer.SandboxStatus
		cs     []kubecontainer.ContainerStatus
		want   string
		reason string
	}{
		{name: "new pod", pod: newPod("p"), want: "kill sandbox(attempt=0) start=[app]"},
		{name: "new pod with init", pod: newPod("p", withInit("i1", "i2")), want: "kill sandbox(attempt=0) init=i1"},
		{name: "steady", pod: newPod("p"), sbx: ready, cs: []kubecontainer.ContainerStatus{running("app")}, want: ""},
		{name: "sandbox died", pod: newPod("p"), sbx: dead, cs: []kubecontainer.ContainerStatus{running("app")}, want: "kill sandbox(attempt=1) start=[app]"},
		{name: "sandbox died Never", pod: newPod("p", withPolicy(v1.RestartPolicyNever)), sbx: dead, cs: []kubecontainer.ContainerStatus{exited("app", 0)}, want: "kill"},
		{name: "sandbox died OnFailure all succeeded", pod: newPod("p", withPolicy(v1.RestartPolicyOnFailure)), sbx: dead, cs: []kubecontainer.ContainerStatus{exited("app", 0)}, want: "kill"},
		{name: "exited Always", pod: newPod("p"), sbx: ready, cs: []kubecontainer.ContainerStatus{exited("app", 0)}, want: "start=[app]"},
		{name: "exited Never", pod: newPod("p", withPolicy(v1.RestartPolicyNever)), sbx: ready, cs: []kubecontainer.ContainerStatus{exited("app", 1)}, want: "kill"},
		{name: "created is restarted", pod: newPod("p"), sbx: ready, cs: []kubecontainer.ContainerStatus{{Name: "app", State: kubecontainer.ContainerStateCreated}}, want: "start=[app]"},
		{name: "second init next", pod: newPod("p", withInit("i1", "i2")), sbx: ready, cs: []kubecontainer.ContainerStatus{exited("i1", 0)}, want: "init=i2"},
		{name: "init running waits", pod: newPod("p", withInit("i1", "i2")), sbx: ready, cs: []kubecontainer.ContainerStatus{running("i2"), exited("i1", 0)}, want: ""},
		{name: "inits done", pod: newPod("p", withInit("i1", "i2")), sbx: ready, cs: []kubecontainer.ContainerStatus{exited("i2", 0), exited("i1", 0)}, want: "start=[app]"},
		{name: "init failed Never", pod: newPod("p", withInit("i1"), withPolicy(v1.RestartPolicyNever)), sbx: ready, cs: []kubecontainer.ContainerStatus{exited("i1", 1)}, want: "kill"},
		{name: "init failed Always", pod: newPod("p", withInit("i1")), sbx: ready, cs: []kubecontainer.ContainerStatus{exited("i1", 1)}, want: "init=i1"},
		{name: "running app means initialized", pod: newPod("p", withInit("i1")), sbx: ready, cs: []kubecontainer.ContainerStatus{running("app")}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &kubecontainer.PodStatus{UID: tt.pod.UID, Sandboxes: tt.sbx, ContainerStatuses: tt.cs}
			if got := computePodActions(tt.pod, st, nil).String(); got != tt.want {
				t.Errorf("computePodActions() = %q, want %q", got, tt.want)
			}
		})
	}
}
