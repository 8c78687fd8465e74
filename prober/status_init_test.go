package prober

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/prober/results"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// TestUpdateContainerStatusesInitContainers: the init container half of UpdatePodStatus, which no
// unit test covers: a completed init container is ready (exit 0 only), a sidecar is started and
// ready as a main container is, its startup and readiness probes holding either back.
func TestUpdateContainerStatusesInitContainers(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	running := v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(vclock.Epoch.Add(150 * time.Second))}}
	exited := func(code int32) v1.ContainerState {
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}}
	}
	tests := []struct {
		name        string
		c           v1.Container
		seed        func(m *Manager)
		state       v1.ContainerState
		wantStarted bool
		wantReady   bool
	}{
		{name: "completed init container", c: v1.Container{Name: "i"}, state: exited(0), wantReady: true},
		{name: "failed init container", c: v1.Container{Name: "i"}, state: exited(1)},
		{name: "running init container", c: v1.Container{Name: "i", ReadinessProbe: httpProbe(10, 0, 3, 1)}, state: running, wantStarted: true},
		{name: "sidecar without probes", c: v1.Container{Name: "i", RestartPolicy: &always}, state: running, wantStarted: true, wantReady: true},
		{name: "sidecar before its startup probe succeeds", c: v1.Container{Name: "i", RestartPolicy: &always, StartupProbe: httpProbe(10, 0, 3, 1)}, state: running},
		{name: "sidecar before its readiness probe succeeds", c: v1.Container{Name: "i", RestartPolicy: &always, ReadinessProbe: httpProbe(10, 0, 3, 1)}, state: running, wantStarted: true},
		{name: "sidecar ready", c: v1.Container{Name: "i", RestartPolicy: &always, ReadinessProbe: httpProbe(10, 0, 3, 1)}, state: running, wantStarted: true, wantReady: true,
			seed: func(m *Manager) { m.caches[Readiness].Set("i1", results.Success) }},
		{name: "exited sidecar", c: v1.Container{Name: "i", RestartPolicy: &always}, state: exited(0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, 100*time.Second)
			pod := podtest.New("p", podtest.Namespace("ns"), podtest.Containers(v1.Container{Name: "c"}))
			pod.Spec.InitContainers = []v1.Container{tt.c}
			h.m.AddPod(context.Background(), pod)
			if tt.seed != nil {
				tt.seed(h.m)
			}
			init := []v1.ContainerStatus{{Name: "i", ContainerID: "fake://i1", State: tt.state}}
			h.m.UpdateContainerStatuses(pod, nil, init)
			cs := init[0]
			if cs.Started == nil || *cs.Started != tt.wantStarted || cs.Ready != tt.wantReady {
				t.Errorf("started %v ready %v, want %v %v", cs.Started, cs.Ready, tt.wantStarted, tt.wantReady)
			}
		})
	}
}
