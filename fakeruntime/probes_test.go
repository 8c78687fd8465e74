package fakeruntime

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// probeResults fails the liveness or startup probe of the listed container IDs, and passes the
// startup probe of the others. The container IDs in noLiveness have no liveness result yet.
type probeResults struct{ liveness, startup, noLiveness map[string]bool }

func (p probeResults) LivenessFailed(id string) bool   { return p.liveness[id] }
func (p probeResults) LivenessKnown(id string) bool    { return !p.noLiveness[id] }
func (p probeResults) StartupFailed(id string) bool    { return p.startup[id] }
func (p probeResults) StartupSucceeded(id string) bool { return !p.startup[id] }

func TestComputePodActionsProbeKills(t *testing.T) {
	ready := []kubecontainer.SandboxStatus{{ID: "s1", State: kubecontainer.SandboxReady}}
	runningApp := []kubecontainer.ContainerStatus{{ID: "c1", Name: "app", State: kubecontainer.ContainerStateRunning}}
	r := &Runtime{}
	grace := func(s int64) *int64 { return &s }
	tests := []struct {
		name      string
		pod       *v1.Pod
		probes    probeResults
		want      string
		message   string
		wantGrace time.Duration
	}{
		{name: "liveness Failure, Always", pod: podtest.New("p"), probes: probeResults{liveness: map[string]bool{"c1": true}},
			want: "killContainers=[app] start=[app]", message: "Container app failed liveness probe, will be restarted", wantGrace: 30 * time.Second},
		{name: "startup Failure, OnFailure", pod: podtest.New("p", podtest.RestartPolicy(v1.RestartPolicyOnFailure)), probes: probeResults{startup: map[string]bool{"c1": true}},
			want: "killContainers=[app] start=[app]", message: "Container app failed startup probe, will be restarted", wantGrace: 30 * time.Second},
		{name: "liveness wins over startup", pod: podtest.New("p"), probes: probeResults{liveness: map[string]bool{"c1": true}, startup: map[string]bool{"c1": true}},
			want: "killContainers=[app] start=[app]", message: "Container app failed liveness probe, will be restarted", wantGrace: 30 * time.Second},
		{name: "the probe's own grace", pod: podtest.New("p", func(p *v1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &v1.Probe{TerminationGracePeriodSeconds: grace(5)}
		}), probes: probeResults{liveness: map[string]bool{"c1": true}},
			want: "killContainers=[app] start=[app]", message: "Container app failed liveness probe, will be restarted", wantGrace: 5 * time.Second},
		{name: "a deleted pod's grace wins", pod: podtest.New("p", func(p *v1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &v1.Probe{TerminationGracePeriodSeconds: grace(5)}
			p.DeletionGracePeriodSeconds = grace(12)
		}), probes: probeResults{liveness: map[string]bool{"c1": true}},
			want: "killContainers=[app] start=[app]", message: "Container app failed liveness probe, will be restarted", wantGrace: 12 * time.Second},
		{name: "Never and the last container: the whole pod", pod: podtest.New("p", podtest.RestartPolicy(v1.RestartPolicyNever)), probes: probeResults{liveness: map[string]bool{"c1": true}},
			want: "kill"},
		{name: "another instance's failure", pod: podtest.New("p"), probes: probeResults{liveness: map[string]bool{"c0": true}}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.pod.Spec.TerminationGracePeriodSeconds == nil {
				tt.pod.Spec.TerminationGracePeriodSeconds = grace(30)
			}
			cs := append([]kubecontainer.ContainerStatus(nil), runningApp...)
			cs[0].Hash = kubecontainer.HashContainer(&tt.pod.Spec.Containers[0])
			st := &kubecontainer.PodStatus{UID: tt.pod.UID, Sandboxes: ready, ContainerStatuses: cs}
			acts := r.computePodActions(tt.pod, st, tt.probes)
			if got := acts.String(); got != tt.want {
				t.Fatalf("computePodActions() = %q, want %q", got, tt.want)
			}
			if tt.message == "" {
				return
			}
			if got := acts.kill[0].message; got != tt.message {
				t.Errorf("kill message = %q, want %q", got, tt.message)
			}
			if got := time.Duration(containerGracePeriod(tt.pod, acts.kill[0].container, acts.kill[0].reason)) * time.Second; got != tt.wantGrace {
				t.Errorf("containerGracePeriod() = %v, want %v", got, tt.wantGrace)
			}
		})
	}
}

// A running sidecar whose spec asks for other resources is resized in place, except while it has
// a liveness probe that has no result yet: computeInitContainerActions waits for that first
// result before looking at the resize, and kills the sidecar once the result is Failure.
func TestSidecarResizeWaitsForLiveness(t *testing.T) {
	liveness := func(p *v1.Pod) {
		containerSpec(p, "s").LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
	}
	tests := []struct {
		name   string
		opts   []podtest.Option
		probes kubecontainer.ProbeResults
		want   string
	}{
		{name: "no liveness probe", probes: probeResults{noLiveness: map[string]bool{"s1": true}}, want: "resize=[s]"},
		{name: "liveness probe not run yet", opts: []podtest.Option{liveness}, probes: probeResults{noLiveness: map[string]bool{"s1": true}}, want: ""},
		{name: "liveness result known", opts: []podtest.Option{liveness}, probes: probeResults{}, want: "resize=[s]"},
		{name: "liveness Failure", opts: []podtest.Option{liveness}, probes: probeResults{liveness: map[string]bool{"s1": true}}, want: "killContainers=[s] init=s"},
		// Without a prober nothing waits, as without probe results no container is killed.
		{name: "no prober", opts: []podtest.Option{liveness}, want: "resize=[s]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := podtest.New("p", append([]podtest.Option{withSidecar("s"), func(p *v1.Pod) {
				containerSpec(p, "s").Resources = resources("100m", "", "", "")
			}}, tt.opts...)...)
			r := &Runtime{}
			st := &kubecontainer.PodStatus{UID: pod.UID, Sandboxes: []kubecontainer.SandboxStatus{{ID: "x", State: kubecontainer.SandboxReady}},
				ContainerStatuses: []kubecontainer.ContainerStatus{
					{ID: "c1", Name: "app", State: kubecontainer.ContainerStateRunning, Hash: kubecontainer.HashContainer(&pod.Spec.Containers[0])},
					{ID: "s1", Name: "s", State: kubecontainer.ContainerStateRunning, Hash: kubecontainer.HashContainer(&pod.Spec.InitContainers[0])},
				}}
			if got := r.computePodActions(pod, st, tt.probes).String(); got != tt.want {
				t.Errorf("computePodActions() = %q, want %q", got, tt.want)
			}
		})
	}
}
