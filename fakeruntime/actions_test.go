package fakeruntime

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/test/podtest"
)

func TestComputePodActions(t *testing.T) {
	ready := []kubecontainer.SandboxStatus{{ID: "s2", State: kubecontainer.SandboxReady, Attempt: 1}}
	dead := []kubecontainer.SandboxStatus{{ID: "s1", State: kubecontainer.SandboxNotReady}}
	running := func(name string) kubecontainer.ContainerStatus {
		return kubecontainer.ContainerStatus{Name: name, State: kubecontainer.ContainerStateRunning}
	}
	runningImage := func(name, image string) kubecontainer.ContainerStatus {
		return kubecontainer.ContainerStatus{Name: name, Image: image, State: kubecontainer.ContainerStateRunning}
	}
	exited := func(name string, code int) kubecontainer.ContainerStatus {
		return kubecontainer.ContainerStatus{Name: name, State: kubecontainer.ContainerStateExited, ExitCode: code}
	}
	tests := []struct {
		name    string
		pod     *v1.Pod
		sbx     []kubecontainer.SandboxStatus
		cs      []kubecontainer.ContainerStatus
		want    string
		reason  string
		startup SidecarStartup
	}{
		{name: "new pod", pod: podtest.New("p"), want: "kill sandbox(attempt=0) start=[app]"},
		{name: "new pod with init", pod: podtest.New("p", withInit("i1", "i2")), want: "kill sandbox(attempt=0) init=i1"},
		{name: "steady", pod: podtest.New("p"), sbx: ready, cs: []kubecontainer.ContainerStatus{running("app")}, want: ""},
		{name: "sandbox died", pod: podtest.New("p"), sbx: dead, cs: []kubecontainer.ContainerStatus{running("app")}, want: "kill sandbox(attempt=1) start=[app]"},
		{name: "sandbox died Never", pod: podtest.New("p", podtest.RestartPolicy(v1.RestartPolicyNever)), sbx: dead, cs: []kubecontainer.ContainerStatus{exited("app", 0)}, want: "kill"},
		{name: "sandbox died OnFailure all succeeded", pod: podtest.New("p", podtest.RestartPolicy(v1.RestartPolicyOnFailure)), sbx: dead, cs: []kubecontainer.ContainerStatus{exited("app", 0)}, want: "kill"},
		{name: "exited Always", pod: podtest.New("p"), sbx: ready, cs: []kubecontainer.ContainerStatus{exited("app", 0)}, want: "start=[app]"},
		{name: "exited Never", pod: podtest.New("p", podtest.RestartPolicy(v1.RestartPolicyNever)), sbx: ready, cs: []kubecontainer.ContainerStatus{exited("app", 1)}, want: "kill"},
		{name: "created is restarted", pod: podtest.New("p"), sbx: ready, cs: []kubecontainer.ContainerStatus{{Name: "app", State: kubecontainer.ContainerStateCreated}}, want: "start=[app]"},
		{name: "second init next", pod: podtest.New("p", withInit("i1", "i2")), sbx: ready, cs: []kubecontainer.ContainerStatus{exited("i1", 0)}, want: "init=i2"},
		{name: "init running waits", pod: podtest.New("p", withInit("i1", "i2")), sbx: ready, cs: []kubecontainer.ContainerStatus{running("i2"), exited("i1", 0)}, want: ""},
		{name: "inits done", pod: podtest.New("p", withInit("i1", "i2")), sbx: ready, cs: []kubecontainer.ContainerStatus{exited("i2", 0), exited("i1", 0)}, want: "start=[app]"},
		{name: "init failed Never", pod: podtest.New("p", withInit("i1"), podtest.RestartPolicy(v1.RestartPolicyNever)), sbx: ready, cs: []kubecontainer.ContainerStatus{exited("i1", 1)}, want: "kill"},
		{name: "init failed Always", pod: podtest.New("p", withInit("i1")), sbx: ready, cs: []kubecontainer.ContainerStatus{exited("i1", 1)}, want: "init=i1"},
		{name: "running app means initialized", pod: podtest.New("p", withInit("i1")), sbx: ready, cs: []kubecontainer.ContainerStatus{running("app")}, want: ""},
		// Sidecars.
		{name: "new pod with sidecar", pod: podtest.New("p", withSidecar("s"), withInit("i2")), want: "kill sandbox(attempt=0) init=s"},
		{name: "running sidecar starts the next init", pod: podtest.New("p", withSidecar("s"), withInit("i2")), sbx: ready, cs: []kubecontainer.ContainerStatus{running("s")}, want: "init=i2"},
		{name: "running last sidecar initializes", pod: podtest.New("p", withSidecar("s")), sbx: ready, cs: []kubecontainer.ContainerStatus{running("s")}, want: "start=[app]"},
		{name: "sidecar then init done", pod: podtest.New("p", withSidecar("s"), withInit("i2")), sbx: ready, cs: []kubecontainer.ContainerStatus{exited("i2", 0), running("s")}, want: "start=[app]"},
		{name: "sidecar pending startup waits", pod: podtest.New("p", withSidecar("s"), withInit("i2"), withStartupProbe("s")), startup: SidecarStartupPending, sbx: ready, cs: []kubecontainer.ContainerStatus{running("s")}, want: ""},
		{name: "sidecar failed startup restarts", pod: podtest.New("p", withSidecar("s"), withInit("i2"), withStartupProbe("s")), startup: SidecarStartupFailed, sbx: ready, cs: []kubecontainer.ContainerStatus{running("s")}, want: "killContainers=[s] init=s"},
		{name: "sidecar restarts under Never", pod: podtest.New("p", withSidecar("s"), podtest.RestartPolicy(v1.RestartPolicyNever)), sbx: ready, cs: []kubecontainer.ContainerStatus{running("app"), exited("s", 1)}, want: "init=s"},
		{name: "sidecar restarts after exit 0", pod: podtest.New("p", withSidecar("s"), podtest.RestartPolicy(v1.RestartPolicyOnFailure)), sbx: ready, cs: []kubecontainer.ContainerStatus{running("app"), exited("s", 0)}, want: "init=s"},
		{name: "sidecars alone do not keep the pod", pod: podtest.New("p", withSidecar("s"), podtest.RestartPolicy(v1.RestartPolicyNever)), sbx: ready, cs: []kubecontainer.ContainerStatus{exited("app", 0), running("s")}, want: "kill"},
		{name: "removed sidecar restarted after init", pod: podtest.New("p", withSidecar("s"), withInit("i2")), sbx: ready, cs: []kubecontainer.ContainerStatus{running("app")}, want: "init=s"},
		// Init containers removed from the runtime: only a created or running regular container
		// says initialization happened (v1.35's computeInitContainerActions); an exited one may be
		// from before a reboot, so initialization starts again from the first.
		{name: "lost inits, app exited", pod: podtest.New("p", withInit("i1", "i2")), sbx: ready, cs: []kubecontainer.ContainerStatus{exited("app", 0)}, want: "init=i1"},
		{name: "lost inits, app created", pod: podtest.New("p", withInit("i1", "i2")), sbx: ready, cs: []kubecontainer.ContainerStatus{{Name: "app", State: kubecontainer.ContainerStateCreated}}, want: "start=[app]"},
		{name: "lost inits, only the last left", pod: podtest.New("p", withInit("i1", "i2")), sbx: ready, cs: []kubecontainer.ContainerStatus{exited("i2", 0)}, want: "start=[app]"},
		{name: "lost inits and a sidecar, app exited", pod: podtest.New("p", withSidecar("s"), withInit("i2")), sbx: ready, cs: []kubecontainer.ContainerStatus{exited("app", 1)}, want: "init=s"},
		// A new sandbox: nothing to start and a regular container that ran
		// (hasAnyRegularContainerCreated) means no new sandbox; an app in an unknown state is to
		// start, so initialization runs again first.
		{name: "new sandbox, OnFailure done, inits lost", pod: podtest.New("p", withInit("i1"), podtest.RestartPolicy(v1.RestartPolicyOnFailure)), sbx: dead, cs: []kubecontainer.ContainerStatus{exited("app", 0)}, want: "kill"},
		{name: "new sandbox, app unknown", pod: podtest.New("p", withInit("i1"), podtest.RestartPolicy(v1.RestartPolicyOnFailure)), sbx: dead, cs: []kubecontainer.ContainerStatus{{Name: "app", State: kubecontainer.ContainerStateUnknown}}, want: "kill sandbox(attempt=1) init=i1"},
		{name: "new sandbox, sidecar first", pod: podtest.New("p", withSidecar("s"), withInit("i2")), sbx: dead, cs: []kubecontainer.ContainerStatus{exited("app", 0), exited("s", 0)}, want: "kill sandbox(attempt=1) init=s"},
		// Spec hash.
		{name: "image change restarts", pod: podtest.New("p", podtest.RestartPolicy(v1.RestartPolicyNever)), sbx: ready, cs: []kubecontainer.ContainerStatus{runningImage("app", "busybox:1.35")}, want: "killContainers=[app] start=[app]"},
		{name: "sidecar image change restarts", pod: podtest.New("p", withSidecar("s")), sbx: ready, cs: []kubecontainer.ContainerStatus{running("app"), runningImage("s", "busybox:1.35")}, want: "killContainers=[s] init=s"},
		{name: "init image change after init ignored", pod: podtest.New("p", withInit("i1")), sbx: ready, cs: []kubecontainer.ContainerStatus{running("app"), exited("i1", 0)}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A running instance was created from the spec unless the case gave it an image.
			for i := range tt.cs {
				if tt.cs[i].State == kubecontainer.ContainerStateRunning {
					c := containerSpec(tt.pod, tt.cs[i].Name)
					if tt.cs[i].Image != "" {
						c = &v1.Container{Name: c.Name, Image: tt.cs[i].Image}
					}
					tt.cs[i].Hash = kubecontainer.HashContainer(c)
				}
			}
			st := &kubecontainer.PodStatus{UID: tt.pod.UID, Sandboxes: tt.sbx, ContainerStatuses: tt.cs}
			r := &Runtime{sidecarStartup: func(string) SidecarStartup { return tt.startup }}
			if got := r.computePodActions(tt.pod, st, nil).String(); got != tt.want {
				t.Errorf("computePodActions() = %q, want %q", got, tt.want)
			}
		})
	}
}
