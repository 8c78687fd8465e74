package fakeruntime

import (
	"errors"
	"slices"
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

// The pod IPs the runtime reports are its sandbox's IP, the same slice at every status and in the
// hooks' and the environment's view, with no room to append into; none for a host-network pod;
// and the same after the state is read back from a checkpoint.
func TestPodIPsShared(t *testing.T) {
	e := newEnv(t, Latencies{})
	h := &envHelper{}
	e.rt.SetRuntimeHelper(h)
	pod := podtest.New("p")
	host := podtest.New("h")
	host.Spec.HostNetwork = true
	for _, p := range []*v1.Pod{pod, host} {
		if _, err := e.sync(p); err != nil {
			t.Fatalf("SyncPod(%s) = %v", p.Name, err)
		}
	}
	e.rt.Advance()
	first, second := e.status(pod).IPs, e.status(pod).IPs
	if want := []string{sandboxIP(pod.UID)}; !slices.Equal(first, want) {
		t.Fatalf("IPs = %q, want %q", first, want)
	}
	if &first[0] != &second[0] || cap(first) != 1 {
		t.Errorf("two statuses share the IPs' array: %v, capacity %d; want shared, capacity 1", &first[0] == &second[0], cap(first))
	}
	if ips := e.status(host).IPs; ips != nil {
		t.Errorf("host-network pod's IPs = %q, want none", ips)
	}
	if len(h.podIP) != 2 || h.podIP[0] != first[0] || h.podIP[1] != "" {
		t.Errorf("pod IPs the helper saw = %q, want %q and none", h.podIP, first[0])
	}
	data, err := e.rt.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	restored := newEnv(t, Latencies{})
	if err := restored.rt.Restore(data); err != nil {
		t.Fatal(err)
	}
	if got := restored.status(pod).IPs; !slices.Equal(got, first) || cap(got) != 1 || &got[0] != &restored.status(pod).IPs[0] {
		t.Errorf("restored IPs = %q (capacity %d), want %q, shared", got, cap(got), first)
	}
}
