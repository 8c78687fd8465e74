package fakeruntime

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// envHelper fails every environment with err, and records the pod IP it was given.
type envHelper struct {
	err   error
	podIP []string
}

func (h *envHelper) MakeEnvironmentVariables(_ *v1.Pod, _ *v1.Container, podIP string, _ []string) ([]kubecontainer.EnvVar, error) {
	h.podIP = append(h.podIP, podIP)
	return nil, h.err
}

// TestRuntimeHelperEnvironment checks that a container whose environment cannot be made is not
// created (CreateContainerConfigError with the helper's message, before the user check), and
// starts at a later sync once it can; the helper sees the new sandbox's IP.
func TestRuntimeHelperEnvironment(t *testing.T) {
	e := newEnv(t, Latencies{})
	h := &envHelper{err: errors.New(`configmap "app" not found`)}
	e.rt.SetRuntimeHelper(h)
	pod := podtest.New("p")
	_, err := e.sync(pod)
	var se *kubecontainer.StartError
	if !errors.Is(err, kubecontainer.ErrCreateContainerConfig) || !errors.As(err, &se) || se.Message != `configmap "app" not found` {
		t.Fatalf("SyncPod() = %v, want CreateContainerConfigError with the helper's message", err)
	}
	if c := e.status(pod).FindContainerStatusByName("app"); c != nil {
		t.Errorf("app = %+v, want no container", c)
	}
	h.err = nil
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("SyncPod() once the environment resolves = %v", err)
	}
	e.rt.Advance()
	if c := e.status(pod).FindContainerStatusByName("app"); c == nil || c.State != kubecontainer.ContainerStateRunning {
		t.Errorf("app = %+v, want running", c)
	}
	if len(h.podIP) != 2 || h.podIP[0] == "" || h.podIP[0] != h.podIP[1] {
		t.Errorf("pod IPs the helper saw = %q, want the sandbox's, twice", h.podIP)
	}
}
